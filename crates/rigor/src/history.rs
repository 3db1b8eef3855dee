//! The history store is the rigor-history crate; the binary lends it what only the process
//! knows: the count of interrupting signals and how rigor makes its own folders (`.rigor`
//! hidden from git).

pub use rigor_history::*;
use std::path::Path;

/// The hooks every store this binary opens gets.
pub const HOOKS: Hooks = Hooks {
    signals: crate::interrupt::signals,
    create_dir: own_dir,
};

/// A new store's folder, made as rigor makes its own (a fresh `.rigor` gets its `.gitignore`).
fn own_dir(dir: &Path) -> std::io::Result<()> {
    crate::git::create_own_dir(dir, dir)
}
