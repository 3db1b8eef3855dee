//! A run's own results folder: named after the second it started, made exclusively so that two
//! runs started in the same second never share (and overwrite) one folder.

use std::io;
use std::path::{Path, PathBuf};

/// How many suffixed names are tried before giving up: far more runs than can start in one
/// second, few enough that a folder full of stale names ends in an error rather than a loop.
const TRIES: u32 = 1000;

/// Makes `parent/stem`, or `parent/stem-2`, `parent/stem-3`, … when that name is taken, and
/// returns the folder made. Each name is created exclusively (`mkdir`, not "make if missing"):
/// a name another run created first is never reused. `parent` is made if it is missing.
pub(crate) fn create(parent: &Path, stem: &str) -> io::Result<PathBuf> {
    std::fs::create_dir_all(parent)?;
    for n in 1..=TRIES {
        let name = if n == 1 {
            stem.to_string()
        } else {
            format!("{stem}-{n}")
        };
        let dir = parent.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{stem} and {TRIES} suffixed names are all taken"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_a_suffix_and_the_first_folder_is_left_alone() {
        let parent = std::env::temp_dir().join(format!("rigor-run-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let first = create(&parent.join("deep"), "20261201-120000").unwrap();
        std::fs::write(first.join("result.json"), "first").unwrap();
        let second = create(&parent.join("deep"), "20261201-120000").unwrap();
        let third = create(&parent.join("deep"), "20261201-120000").unwrap();
        assert_eq!(first.file_name().unwrap(), "20261201-120000");
        assert_eq!(second.file_name().unwrap(), "20261201-120000-2");
        assert_eq!(third.file_name().unwrap(), "20261201-120000-3");
        assert_eq!(
            std::fs::read_to_string(first.join("result.json")).unwrap(),
            "first"
        );
        // A file in the way is taken as a taken name too.
        std::fs::write(parent.join("deep/x"), "").unwrap();
        assert_eq!(
            create(&parent.join("deep"), "x")
                .unwrap()
                .file_name()
                .unwrap(),
            "x-2"
        );
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
