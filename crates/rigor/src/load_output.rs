//! What `rigor load` prints and writes, whichever runs the load (the engine or a load tool):
//! the human text beside the JSON, and the `rigor.load.v1` document.

use crate::options::load::{JsonOut, LoadOptions};
use anyhow::Context;
use std::io::Write as _;

/// Schema tag of `rigor load --json`.
pub const LOAD_SCHEMA: &str = "rigor.load.v1";

/// The human text: on stdout, or on stderr when stdout carries the JSON alone. A closed terminal
/// or pipe (`| head`) must not end the run: the human text is best-effort.
pub(crate) fn human(options: &LoadOptions, text: &str) {
    let _ = if options.json_to_stdout() {
        std::io::stderr().write_all(text.as_bytes())
    } else {
        std::io::stdout().write_all(text.as_bytes())
    };
}

/// Writes a `rigor.load.v1` document to `out`.
pub(crate) fn write_doc(doc: &serde_json::Value, out: &JsonOut) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(doc)? + "\n";
    match out {
        JsonOut::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .context("cannot write JSON to stdout")
        }
        JsonOut::File(path) => crate::exec::output::write_atomic(path, &text)
            .map_err(|e| anyhow::anyhow!("cannot write JSON to {}: {e}", path.display())),
    }
}
