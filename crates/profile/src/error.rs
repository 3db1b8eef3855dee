//! What can go wrong while profiling: each names the command or file involved.

use std::path::PathBuf;

/// A profile that could not be taken, folded or drawn.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// `perf` could not be started at all.
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    /// `perf` ran and failed; `stderr` is what it said.
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
    /// Reading or writing a profile's file.
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Folding stacks or drawing a flame graph.
    #[error("{what}: {source}")]
    Render {
        what: &'static str,
        source: std::io::Error,
    },
    /// A line of folded stacks that is not `frame;frame;… COUNT`.
    #[error("line {line} of folded stacks is not `frames COUNT`: {text}")]
    BadFolded { line: usize, text: String },
}
