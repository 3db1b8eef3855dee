//! Writes the result files after every iteration (atomically), so a crash or Ctrl-C keeps every
//! finished iteration.

use crate::result::RunResult;
use std::path::{Path, PathBuf};

/// Where each format goes.
#[derive(Debug, Clone)]
pub struct Outputs {
    pub json: PathBuf,
    pub markdown: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

impl Outputs {
    /// Writes every requested format; an unwritable path is an error naming it.
    pub fn write(&self, result: &RunResult) -> Result<(), String> {
        let json = serde_json::to_string_pretty(result).map_err(|e| e.to_string())?;
        write_atomic(&self.json, &json)?;
        if let Some(p) = &self.markdown {
            write_atomic(p, &crate::report::markdown::render(result))?;
        }
        if let Some(p) = &self.html {
            write_atomic(p, &crate::report::html::render(result))?;
        }
        if let Some(p) = &self.csv {
            write_atomic(p, &crate::report::csv::render(result))?;
        }
        Ok(())
    }
}

fn write_atomic(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("rigor-tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
