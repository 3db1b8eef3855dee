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
    // A folder another run's probe made and removed under this one is looked for again.
    let mut tried = Ok(());
    for _ in 0..5 {
        tried = if path.exists() {
            std::fs::OpenOptions::new().write(true).open(path).map(drop)
        } else {
            probe(path)
        };
        if !tried
            .as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            break;
        }
    }
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
    // Another run starting in the same folder may make the same file or folder meanwhile:
    // then it exists, and the store is opened for writing as an existing one is.
    let exists = |e: &std::io::Error| e.kind() == std::io::ErrorKind::AlreadyExists;
    if missing == path {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(_) => std::fs::remove_file(path).or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            }),
            Err(e) if exists(&e) => std::fs::OpenOptions::new().write(true).open(path).map(drop),
            Err(e) => Err(e),
        }
    } else {
        match std::fs::create_dir(missing) {
            // Left for whoever made it; another run's probe may remove it first.
            Ok(()) => std::fs::remove_dir(missing).or(Ok(())),
            Err(e) if exists(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_probing_the_same_new_store_at_once_all_find_it_writable() {
        let dir = std::env::temp_dir().join(format!("rigor-store-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let spec = StoreSpec::Sqlite(dir.join(".rigor/history.db"));
        let refused: Vec<String> = std::thread::scope(|s| {
            let probes: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        (0..200)
                            .filter_map(|_| cannot_write(&spec))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            probes.into_iter().flat_map(|p| p.join().unwrap()).collect()
        });
        let _ = std::fs::remove_dir_all(&dir);
        assert!(refused.is_empty(), "{:?}", refused.first());
    }

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
