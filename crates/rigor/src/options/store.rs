//! The history store a run appends to, proven writable before anything runs: a file SQLite
//! could never create (`/proc/x`, a read-only folder) would otherwise fail only when the
//! finished run is stored, after every iteration.

use crate::history::{StoreSpec, STORE_ENV};
use std::path::Path;

/// Why the SQLite store of `spec` cannot be written, found by doing what storing will do: an
/// existing file opened for writing (left unchanged), else a file (or the first missing folder
/// on its path) made and removed at once. `None` for a writable file and for a server URL
/// (a server that is down may be up by the time the run ends).
pub fn cannot_write(spec: &StoreSpec) -> Option<String> {
    let StoreSpec::Sqlite(path) = spec else {
        return None;
    };
    let tried = if path.exists() {
        std::fs::OpenOptions::new().write(true).open(path).map(drop)
    } else {
        probe(path)
    };
    tried.err().map(|e| {
        // Said as the store itself says it when it is opened to store.
        let why = match e.raw_os_error() {
            Some(libc::EROFS) => format!("it is on a read-only filesystem ({e})"),
            Some(libc::EACCES | libc::EPERM) => {
                format!("it is read-only for this user ({e})")
            }
            _ => e.to_string(),
        };
        format!(
            "the history store {} cannot be written: {why} (--store, {STORE_ENV}; --no-store \
             stores nothing)",
            path.display()
        )
    })
}

/// Makes and removes `path` (a missing file whose folder exists), or the first folder of its
/// path that is missing.
fn probe(path: &Path) -> std::io::Result<()> {
    let mut missing = path;
    while let Some(parent) = missing.parent().filter(|p| !p.as_os_str().is_empty()) {
        if parent.exists() {
            break;
        }
        missing = parent;
    }
    if missing == path {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        std::fs::remove_file(path)
    } else {
        std::fs::create_dir(missing)?;
        std::fs::remove_dir(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_place_passes_and_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("rigor-store-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let deep = dir.join("a/b/history.db");
        assert_eq!(cannot_write(&StoreSpec::Sqlite(deep)), None);
        assert!(!dir.join("a").exists());
        let file = dir.join("history.db");
        assert_eq!(cannot_write(&StoreSpec::Sqlite(file.clone())), None);
        assert!(!file.exists());
        std::fs::write(&file, "x").unwrap();
        assert_eq!(cannot_write(&StoreSpec::Sqlite(file.clone())), None);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_place_nothing_can_be_made_in_is_named() {
        let spec = StoreSpec::Sqlite("/proc/rigor-no-such/history.db".into());
        let e = cannot_write(&spec).expect("/proc takes no folder");
        assert!(
            e.starts_with("the history store /proc/rigor-no-such/history.db cannot be written"),
            "{e}"
        );
        let server = StoreSpec::Postgres("postgres://u@localhost/db".into());
        assert_eq!(cannot_write(&server), None);
    }
}
