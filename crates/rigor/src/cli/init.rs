//! `rigor init`: a commented rigor.toml for the project in the current folder, so a first run
//! needs no manual: the release build, start command, readiness check and load job are there
//! to read and edit.

use super::init_detect::detect;
use super::init_templates::render;
use crate::exit::Exit;
use crate::failure::Failure;
use clap::Args;
use std::io::Write;
use std::path::Path;

/// Flags of `rigor init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// Replace an existing rigor.toml (by default it is never overwritten).
    #[arg(long = "force")]
    pub force: bool,
}

/// The file `rigor init` writes, where `rigor run` looks by default.
const FILE: &str = "rigor.toml";

/// Writes rigor.toml for the current folder and says what it found.
pub fn execute(args: &InitArgs) -> Result<Exit, Failure> {
    let dir = std::env::current_dir()
        .map_err(|e| Failure::usage(format!("cannot read the current folder: {e}")))?;
    let path = dir.join(FILE);
    let project = detect(&dir);
    write(&path, &render(&project), args.force)?;
    crate::console::out(&format!(
        "wrote {} for {}.\nRead it, change what is marked `edit:`, then `rigor run`.\n",
        path.display(),
        project.found
    ));
    Ok(Exit::Success)
}

/// Creates `path` with `text`; an existing file is kept unless `force` (a usage error names
/// it and the flag), and an unwritable one is a failure naming it.
fn write(path: &Path, text: &str, force: bool) -> Result<(), Failure> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Failure::usage(format!(
                "{} already exists: left as it is (rigor init --force replaces it)",
                path.display()
            ))
        } else {
            Failure::usage(format!("{}: cannot write: {e}", path.display()))
        }
    })?;
    file.write_all(text.as_bytes())
        .map_err(|e| Failure::usage(format!("{}: cannot write: {e}", path.display())))
}
