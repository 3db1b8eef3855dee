//! The application's sources on their way to its host: the job's folder as a tar stream —
//! in a git work tree, the files git knows of (tracked, and untracked ones it does not ignore),
//! as they are on disk; elsewhere the folder as it is — unpacked on the host into a fresh
//! folder under the agent's work dir. No git remote, no shared file system.

use super::error::AgentError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Sources larger than this are refused: a build folder (target/, node_modules/) was most
/// likely sent by mistake.
pub const MAX_BYTES: usize = 1 << 30;

/// The folder's files as a tar stream, and how many files it holds.
pub fn pack(dir: &Path) -> Result<(Vec<u8>, usize), AgentError> {
    let files = match git_files(dir) {
        Some(files) => files,
        None => walk(dir)?,
    };
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    let mut count = 0;
    let mut total: u64 = 0;
    for rel in &files {
        let path = dir.join(rel);
        // Deleted but still tracked: the working tree is what builds.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            continue;
        }
        // Counted before the file is read: one huge file must not be read into memory first.
        total += meta.len() + 1024;
        if total > MAX_BYTES as u64 {
            return Err(AgentError::TooLarge {
                dir: dir.to_path_buf(),
                max_mib: MAX_BYTES >> 20,
                at: rel.clone(),
                file_mib: meta.len() >> 20,
            });
        }
        builder
            .append_path_with_name(&path, rel)
            .map_err(|e| io("packing", &path, e))?;
        count += 1;
    }
    let bytes = builder.into_inner().map_err(|e| io("packing", dir, e))?;
    Ok((bytes, count))
}

/// The files git knows of under `dir`, relative to it; `None` outside a work tree.
fn git_files(dir: &Path) -> Option<Vec<PathBuf>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut files: Vec<PathBuf> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect();
    files.sort();
    files.dedup();
    Some(files)
}

/// Every file and symlink under `dir`, relative to it (symlinks are not followed).
fn walk(dir: &Path) -> Result<Vec<PathBuf>, AgentError> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let entries =
            std::fs::read_dir(dir.join(&rel)).map_err(|e| io("reading", &dir.join(&rel), e))?;
        for e in entries {
            let e = e.map_err(|e| io("reading", dir, e))?;
            let name = rel.join(e.file_name());
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(name),
                Ok(_) => out.push(name),
                Err(e) => return Err(io("reading", &dir.join(&name), e)),
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Whether `key` can name a folder under the work dir: letters, digits and `-` only, so no
/// path the client sends leaves it.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Unpacks the tar stream in `archive` into `dest`, which is emptied first. The tar reader
/// skips entries whose paths would leave `dest` (`..`, absolute paths, through symlinks).
pub fn unpack(archive: &Path, dest: &Path) -> Result<(u64, u64), AgentError> {
    if dest.exists() {
        std::fs::remove_dir_all(dest).map_err(|e| io("emptying", dest, e))?;
    }
    std::fs::create_dir_all(dest).map_err(|e| io("creating", dest, e))?;
    let bytes = std::fs::metadata(archive).map(|m| m.len()).unwrap_or(0);
    let file = std::fs::File::open(archive).map_err(|e| io("opening", archive, e))?;
    let mut tar = tar::Archive::new(file);
    tar.set_preserve_mtime(true);
    tar.unpack(dest)
        .map_err(|e| io("unpacking the sources into", dest, e))?;
    let files = count_files(dest);
    Ok((files, bytes))
}

fn count_files(dir: &Path) -> u64 {
    walk(dir).map(|f| f.len() as u64).unwrap_or(0)
}

/// Appends a decoded chunk to the archive being received.
pub fn append(archive: &Path, data: &[u8]) -> Result<(), AgentError> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(archive)
        .map_err(|e| io("writing", archive, e))?;
    f.write_all(data).map_err(|e| io("writing", archive, e))
}

/// The error for `doing` on `path`.
fn io(doing: &'static str, path: &Path, source: std::io::Error) -> AgentError {
    AgentError::Io {
        doing,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rigor-sources-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_plain_folder_travels_whole_and_unpacks_the_same() {
        let src = temp("plain-src");
        std::fs::create_dir_all(src.join("a/b")).unwrap();
        std::fs::write(src.join("a/b/c.txt"), "hello").unwrap();
        std::fs::write(src.join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(src.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let (tar, n) = pack(&src).unwrap();
        assert_eq!(n, 2);
        let dst = temp("plain-dst");
        let archive = dst.join("x.tar");
        append(&archive, &tar[..100]).unwrap();
        append(&archive, &tar[100..]).unwrap();
        let out = dst.join("out");
        std::fs::create_dir_all(out.join("stale")).unwrap();
        let (files, bytes) = unpack(&archive, &out).unwrap();
        assert_eq!((files, bytes), (2, tar.len() as u64));
        assert_eq!(
            std::fs::read_to_string(out.join("a/b/c.txt")).unwrap(),
            "hello"
        );
        let mode = std::fs::metadata(out.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "executables stay executable");
        assert!(!out.join("stale").exists(), "the folder is emptied first");
    }

    #[test]
    fn in_a_work_tree_ignored_files_stay_behind() {
        let src = temp("git-src");
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(&src)
                .args(args)
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false);
            assert!(ok, "git {args:?}");
        };
        if Command::new("git").arg("--version").output().is_err() {
            println!("test-skip: needs git: in_a_work_tree_ignored_files_stay_behind");
            return;
        }
        git(&["init", "-q"]);
        std::fs::write(src.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(src.join("target")).unwrap();
        std::fs::write(src.join("target/big"), "x").unwrap();
        std::fs::write(src.join("main.c"), "int main(){}").unwrap();
        std::fs::write(src.join("new.c"), "untracked").unwrap();
        git(&["add", ".gitignore", "main.c"]);
        let (tar, n) = pack(&src).unwrap();
        let mut names: Vec<String> = tar::Archive::new(&tar[..])
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        names.sort();
        assert_eq!(names, [".gitignore", "main.c", "new.c"]);
        assert_eq!(n, 3);
    }

    #[test]
    fn sources_too_large_are_refused_before_the_large_file_is_read() {
        let src = temp("huge-src");
        std::fs::write(src.join("main.c"), "int main(){}").unwrap();
        // Sparse: 4 GiB that take no room, and that packing must never read.
        let f = std::fs::File::create(src.join("core.dump")).unwrap();
        f.set_len(4 << 30).unwrap();
        let e = pack(&src).unwrap_err();
        assert!(matches!(e, AgentError::TooLarge { .. }), "{e:?}");
        assert!(
            e.to_string()
                .contains("exceed 1024 MiB (at core.dump, 4096 MiB)"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&src);
    }

    #[test]
    fn keys_cannot_name_paths() {
        assert!(valid_key("ab-12"));
        for bad in ["", "../x", "a/b", ".", "a b", &"x".repeat(65)] {
            assert!(!valid_key(bad), "{bad:?}");
        }
    }
}
