//! Why a saved result could not be read, or saved results could not be compared: each names the
//! file and says what is wrong with it.

use std::path::PathBuf;

/// A saved result that cannot be an input of `rigor compare`.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: no such file", path.display())]
    NotFound { path: PathBuf },
    #[error("{}: cannot read: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not JSON ({source}); expected a `rigor run --json` result", path.display())]
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{} is a `rigor compare` output ({schema}); compare the `rigor run --json` results it \
         was made from",
        path.display()
    )]
    CompareOutput { path: PathBuf, schema: &'static str },
    #[error("{} has schema `{schema}`; this rigor reads `{reads}`", path.display())]
    OtherSchema {
        path: PathBuf,
        schema: String,
        reads: &'static str,
    },
    #[error("{} is not a rigor result: no \"schema\" field (expected `{reads}`)", path.display())]
    NoSchema { path: PathBuf, reads: &'static str },
    #[error("{} does not match the `{reads}` schema: {source}", path.display())]
    Mismatch {
        path: PathBuf,
        reads: &'static str,
        source: serde_json::Error,
    },
    #[error("{}: {why}", path.display())]
    Impossible { path: PathBuf, why: String },
    #[error(
        "{} is larger than 256 MiB, the most rigor reads as one result (a result of 10,000 rows \
         is a few tens of MiB); is it a `rigor run --json` result?",
        path.display()
    )]
    TooLarge { path: PathBuf },
    #[error("{} is a directory, not a `rigor run --json` result", path.display())]
    Directory { path: PathBuf },
}

/// Saved results that cannot be compared with each other.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("rigor compare needs a result file")]
    NoInput,
    #[error("re-analysis takes exactly one result file")]
    NotOne,
    #[error(
        "{}: the run has {variants} variant(s), so there is nothing to compare within it; give \
         a second result file to compare against",
        path.display()
    )]
    NothingWithin { path: PathBuf, variants: usize },
    #[error(
        "no row of {candidates} matches a row of {baseline} (rows match by scenario, matrix \
         values and variant)"
    )]
    NoMatch {
        candidates: String,
        baseline: String,
    },
}
