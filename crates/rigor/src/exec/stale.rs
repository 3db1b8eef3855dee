//! Is an artifact the build did not rewrite stale? Only an input of the build that is newer than
//! the artifact says so: the inputs listed in the compiler's dep-info where there is one, else
//! source and build files under the job folder. Notes, logs, redirected output and configs are
//! not inputs, so a newer one is no evidence.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// An input of the build that is newer than the artifact (modified at `built`), if any.
pub fn newer_input(dir: &Path, artifact: &Path, built: SystemTime) -> Option<PathBuf> {
    let newer = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t > built)
    };
    match dep_info_sources(artifact) {
        // Relative inputs (gcc -MD writes them) are relative to where the build ran.
        Some(sources) => sources
            .into_iter()
            .map(|s| if s.is_relative() { dir.join(s) } else { s })
            .find(|s| newer(s)),
        None => newer_source(dir, artifact, built),
    }
}

/// The exact inputs of an artifact when its compiler wrote a Makefile-style dep-info file beside
/// it (`target/release/app.d` from cargo, `app.d` from gcc -MD).
fn dep_info_sources(artifact: &Path) -> Option<Vec<PathBuf>> {
    let mut name = artifact.file_name()?.to_os_string();
    name.push(".d");
    let text = std::fs::read_to_string(artifact.with_file_name(name)).ok()?;
    let joined = text.replace("\\\n", " ");
    let (_, deps) = joined.lines().next()?.split_once(": ")?;
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(PathBuf::from(current));
    }
    Some(out)
}

/// Folders that hold outputs or tooling, never sources.
const SKIP: &[&str] = &[
    "target",
    ".git",
    "node_modules",
    "bin",
    "obj",
    "rigor-results",
    "fuzz",
    ".cache",
];

/// Extensions of files a compiler or a build reads.
const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx", "inl", "m", "mm", "s", "asm", "rs",
    "go", "cs", "fs", "vb", "csproj", "fsproj", "vbproj", "props", "targets", "sln", "java", "kt",
    "kts", "scala", "gradle", "swift", "zig", "nim", "hs", "ml", "mli", "ex", "exs", "erl", "cr",
    "f90", "f", "pas", "ts", "tsx", "proto", "cmake", "mk", "ninja",
];

/// Build files known by name.
const BUILD_FILES: &[&str] = &[
    "Makefile",
    "makefile",
    "GNUmakefile",
    "CMakeLists.txt",
    "Cargo.toml",
    "Cargo.lock",
    "build.rs",
    "go.mod",
    "go.sum",
    "meson.build",
    "build.zig",
    "pom.xml",
    "BUILD",
    "BUILD.bazel",
    "WORKSPACE",
    "Directory.Build.props",
];

/// Whether a file is something a build reads (by name or extension), not a note or an output.
pub fn is_build_input(name: &str) -> bool {
    if BUILD_FILES.contains(&name) {
        return true;
    }
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && SOURCE_EXTENSIONS.contains(&ext))
}

/// A build input under `dir` modified after the artifact, if any (bounded walk).
fn newer_source(dir: &Path, artifact: &Path, than: SystemTime) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > 50_000 {
                return None;
            }
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if !SKIP.contains(&name.as_ref()) && !name.starts_with('.') && p != artifact {
                    stack.push(p);
                }
            } else if ft.is_file() && p != artifact && is_build_input(&name) {
                if let Ok(t) = e.metadata().and_then(|m| m.modified()) {
                    if t > than {
                        return Some(p);
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_and_build_files_are_inputs_notes_and_outputs_are_not() {
        for yes in [
            "main.c",
            "lib.rs",
            "Makefile",
            "Cargo.toml",
            "app.csproj",
            "x.go",
        ] {
            assert!(is_build_input(yes), "{yes}");
        }
        for no in [
            "notes.md",
            "bench.toml",
            "out.txt",
            "run.log",
            "result.json",
            "app",
            ".c",
            "config.yaml",
        ] {
            assert!(!is_build_input(no), "{no}");
        }
    }

    #[test]
    fn dep_info_names_the_inputs_exactly() {
        let d = std::env::temp_dir().join(format!("rigor-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let app = d.join("app");
        std::fs::write(&app, "bin").unwrap();
        let built = std::fs::metadata(&app).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        // A newer source the dep-info does not list is not this artifact's input.
        std::fs::write(d.join("other.c"), "int x;").unwrap();
        let used = d.join("my src.c");
        std::fs::write(
            d.join("app.d"),
            format!(
                "{}: {}\n",
                app.display(),
                used.display().to_string().replace(' ', "\\ ")
            ),
        )
        .unwrap();
        std::fs::write(&used, "int main(){}").unwrap();
        assert_eq!(newer_input(&d, &app, built), Some(used.clone()));
        std::fs::remove_file(&used).unwrap();
        assert_eq!(newer_input(&d, &app, built), None);
        std::fs::write(d.join("app.d"), "app: other.c\n").unwrap();
        assert_eq!(newer_input(&d, &app, built), Some(d.join("other.c")));
    }
}
