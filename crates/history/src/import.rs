//! `rigor history import`: saved `rigor run --json` results loaded into the store, one
//! transaction each; a run already there (same start, scenario and content) is skipped.

use super::record::{Source, Stored};
use super::Store;
use std::path::{Path, PathBuf};

/// What became of one file.
#[derive(Debug)]
pub enum Imported {
    Added(i64),
    AlreadyThere(i64),
    /// Not a result this rigor reads, or the store refused it; the text names the file.
    Failed(String),
}

/// Imports every file in order; a bad file does not stop the others.
pub fn import(store: &mut Store, paths: &[PathBuf]) -> Vec<(PathBuf, Imported)> {
    paths
        .iter()
        .map(|p| (p.clone(), import_one(store, p)))
        .collect()
}

fn import_one(store: &mut Store, path: &Path) -> Imported {
    let result = match rigor_analysis::saved::load(path) {
        Ok(r) => r,
        Err(e) => return Imported::Failed(format!("{e:#}")),
    };
    if let Err(e) = super::checked::check(&result) {
        return Imported::Failed(format!("{}: {e}; not imported", path.display()));
    }
    match store.add(&result, Source::Import) {
        Ok(Stored::Added(id)) => Imported::Added(id),
        Ok(Stored::AlreadyThere(id)) => Imported::AlreadyThere(id),
        Err(e) => Imported::Failed(format!("{}: {e}", path.display())),
    }
}
