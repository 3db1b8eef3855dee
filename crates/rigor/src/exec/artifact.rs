//! A build's artifact by content: its hash, a snapshot kept in the run folder, and the check
//! before every start that the artifact path holds exactly those bytes (put back if not).
//!
//! Variants whose builds write the same path would otherwise run whichever build came last. The
//! snapshot is put back *in place* (an atomic rename) rather than run from the run folder, so any
//! command works unchanged: `cd target/release && ./app`, scripts, and programs that find files
//! beside their own path.

use sha2::{Digest, Sha256};
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What an artifact path holds at one moment: its content hash and newest modification time.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// `sha256:<hex>` over the file, or over every path, kind, exec bit and content of a folder.
    pub hash: String,
    pub mtime: Option<SystemTime>,
}

/// The artifact's state, or `None` when nothing is there.
pub fn state(path: &Path) -> Option<State> {
    let hash = hash(path).ok()?;
    Some(State {
        hash,
        mtime: newest_mtime(path),
    })
}

/// The content hash of a file or folder (symbolic links inside a folder count by their target
/// text; the artifact path itself is followed).
pub fn hash(path: &Path) -> io::Result<String> {
    let mut h = Sha256::new();
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        hash_dir(path, Path::new(""), &mut h)?;
    } else {
        hash_file(path, &mut h)?;
    }
    let digest = h.finalize();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    Ok(out)
}

fn hash_file(path: &Path, h: &mut Sha256) -> io::Result<()> {
    let mut f = fs::File::open(path)?;
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        h.update(&buf[..n]);
    }
}

fn hash_dir(root: &Path, rel: &Path, h: &mut Sha256) -> io::Result<()> {
    let mut entries: Vec<_> = fs::read_dir(root.join(rel))?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let rel = rel.join(e.file_name());
        let full = root.join(&rel);
        let meta = fs::symlink_metadata(&full)?;
        h.update(rel.as_os_str().as_encoded_bytes());
        h.update([0]);
        if meta.file_type().is_symlink() {
            h.update(b"L");
            h.update(fs::read_link(&full)?.as_os_str().as_encoded_bytes());
        } else if meta.is_dir() {
            h.update(b"D");
            hash_dir(root, &rel, h)?;
        } else {
            let exec = meta.permissions().mode() & 0o111 != 0;
            h.update(if exec { b"X" } else { b"F" });
            h.update(meta.len().to_le_bytes());
            hash_file(&full, h)?;
        }
        h.update([0]);
    }
    Ok(())
}

/// The newest modification time of a file, or of anything under a folder.
pub fn newest_mtime(path: &Path) -> Option<SystemTime> {
    let m = fs::metadata(path).ok()?;
    let mut newest = m.modified().ok();
    if m.is_dir() {
        for e in fs::read_dir(path).ok()?.flatten() {
            if let Some(t) = newest_mtime(&e.path()) {
                newest = Some(newest.map_or(t, |n| n.max(t)));
            }
        }
    }
    newest
}

/// A copy of what one build produced, kept apart so no later build can change it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The path the command runs (the artifact, symbolic links resolved).
    pub artifact: PathBuf,
    /// The copy in the run folder.
    pub copy: PathBuf,
    /// The hash of what the build produced; nothing else is ever started.
    pub hash: String,
}

impl Snapshot {
    /// Copies the artifact into `into` and checks the copy has the artifact's hash.
    pub fn take(artifact: &Path, hash: &str, into: &Path) -> anyhow::Result<Snapshot> {
        let real = fs::canonicalize(artifact)
            .map_err(|e| anyhow::anyhow!("cannot resolve artifact {}: {e}", artifact.display()))?;
        let name = real.file_name().unwrap_or(real.as_os_str());
        fs::create_dir_all(into)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", into.display()))?;
        let into_real = fs::canonicalize(into).unwrap_or_else(|_| into.to_path_buf());
        if into_real.starts_with(&real) {
            // The folder would hold its own copy, and putting it back would replace the results.
            return Err(anyhow::anyhow!(
                "artifact folder {} contains rigor's run folder {}: set `artifact` to what the \
                 build produces (e.g. target/release/app), or write results elsewhere (--out-dir)",
                real.display(),
                into_real.display()
            ));
        }
        let copy = into.join(name);
        copy_tree(&real, &copy).map_err(|e| {
            anyhow::anyhow!(
                "cannot keep a copy of artifact {} in {}: {e}",
                real.display(),
                copy.display()
            )
        })?;
        let copied = self::hash(&copy).map_err(|e| anyhow::anyhow!("{}: {e}", copy.display()))?;
        if copied != hash {
            return Err(anyhow::anyhow!(
                "artifact {} changed while rigor copied it (hash {hash} became {copied})",
                real.display()
            ));
        }
        Ok(Snapshot {
            artifact: real,
            copy,
            hash: hash.to_string(),
        })
    }

    /// Makes the artifact path hold this build's bytes: verified by hash, put back from the copy
    /// (atomically) when something else is there. Returns whether it had to be put back.
    pub fn ensure_in_place(&self) -> anyhow::Result<bool> {
        if hash(&self.artifact).ok().as_deref() == Some(self.hash.as_str()) {
            return Ok(false);
        }
        restore(&self.copy, &self.artifact).map_err(|e| {
            anyhow::anyhow!(
                "cannot put this build's artifact back at {} from {}: {e}",
                self.artifact.display(),
                self.copy.display()
            )
        })?;
        match hash(&self.artifact) {
            Ok(h) if h == self.hash => Ok(true),
            found => Err(anyhow::anyhow!(
                "refusing to start: {} does not hold what its build produced \
                 (expected {}, found {}); something rewrites it while rigor runs — stop it, \
                 or give each variant its own `artifact` path",
                self.artifact.display(),
                self.hash,
                found.unwrap_or_else(|e| e.to_string())
            )),
        }
    }
}

/// Replaces `to` with a copy of `from`: a copy beside `to`, then renames (an executable that is
/// running elsewhere keeps its old inode; nothing ever sees half a file).
fn restore(from: &Path, to: &Path) -> io::Result<()> {
    let parent = to.parent().unwrap_or(Path::new("."));
    let name = to.file_name().unwrap_or(to.as_os_str()).to_string_lossy();
    let pid = std::process::id();
    let fresh = parent.join(format!(".{name}.rigor-new-{pid}"));
    let _ = remove_tree(&fresh);
    copy_tree(from, &fresh)?;
    let is_dir = fs::symlink_metadata(to).is_ok_and(|m| m.is_dir());
    if is_dir {
        // A folder cannot be renamed over a non-empty one: move the old one aside first.
        let old = parent.join(format!(".{name}.rigor-old-{pid}"));
        let _ = remove_tree(&old);
        fs::rename(to, &old)?;
        let moved = fs::rename(&fresh, to);
        let _ = remove_tree(&old);
        moved
    } else {
        fs::rename(&fresh, to)
    }
}

fn remove_tree(p: &Path) -> io::Result<()> {
    match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(p),
        Ok(_) => fs::remove_file(p),
        Err(e) => Err(e),
    }
}

/// Copies a file or a folder (permissions kept; links inside a folder copied as links).
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        return std::os::unix::fs::symlink(fs::read_link(from)?, to);
    }
    if meta.is_dir() {
        fs::create_dir_all(to)?;
        for e in fs::read_dir(from)? {
            let e = e?;
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
        fs::set_permissions(to, meta.permissions())
    } else {
        fs::copy(from, to).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rigor-artifact-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_snapshot_is_put_back_when_another_build_overwrote_the_path() {
        let d = temp("file");
        let app = d.join("app");
        fs::write(&app, "#!/bin/sh\necho A\n").unwrap();
        fs::set_permissions(&app, fs::Permissions::from_mode(0o755)).unwrap();
        let a = Snapshot::take(&app, &hash(&app).unwrap(), &d.join("snap-a")).unwrap();
        fs::write(&app, "#!/bin/sh\necho B\n").unwrap();
        assert!(a.ensure_in_place().unwrap(), "B's bytes were replaced");
        assert_eq!(fs::read_to_string(&app).unwrap(), "#!/bin/sh\necho A\n");
        assert_eq!(
            fs::metadata(&app).unwrap().permissions().mode() & 0o111,
            0o111
        );
        assert!(!a.ensure_in_place().unwrap(), "already in place");
    }

    #[test]
    fn an_artifact_folder_holding_the_run_folder_is_refused() {
        let d = temp("inside");
        let run = d.join("rigor-results/now");
        fs::create_dir_all(&run).unwrap();
        let e = Snapshot::take(&d, &hash(&d).unwrap(), &run.join("artifacts/app")).unwrap_err();
        assert!(e.to_string().contains("contains rigor's run folder"), "{e}");
    }

    #[test]
    fn a_folder_hash_sees_names_modes_and_contents() {
        let d = temp("dir");
        let out = d.join("publish");
        fs::create_dir_all(out.join("lib")).unwrap();
        fs::write(out.join("app"), "x").unwrap();
        fs::write(out.join("lib/a.so"), "y").unwrap();
        let h0 = hash(&out).unwrap();
        let snap = Snapshot::take(&out, &h0, &d.join("snap")).unwrap();
        fs::set_permissions(out.join("app"), fs::Permissions::from_mode(0o755)).unwrap();
        let h1 = hash(&out).unwrap();
        assert_ne!(h0, h1, "exec bit");
        fs::rename(out.join("lib/a.so"), out.join("lib/b.so")).unwrap();
        assert_ne!(hash(&out).unwrap(), h1, "a renamed file");
        assert!(snap.ensure_in_place().unwrap());
        assert_eq!(hash(&out).unwrap(), h0);
        assert!(out.join("lib/a.so").exists() && !out.join("lib/b.so").exists());
    }
}
