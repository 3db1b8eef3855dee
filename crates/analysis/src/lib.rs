//! rigor's analysis: what the measurements say. Summaries and exclusions of a row,
//! candidate-against-baseline comparisons with verdicts, pairing and sequential looks, the noise
//! floor and whether there were enough iterations, matching saved results row by row, and the
//! one gate that turns verdicts, limits and warnings into a decision.
//!
//! It exists as its own crate so the compiler keeps it pure: it reads results and returns
//! values, and depends on no renderer, command line, config or database. `rigor run` and
//! `rigor compare` both call into it; the binary maps the gate's decision to an exit code.

pub mod comparison;
pub mod gate;
pub mod limits;
pub mod matching;
pub mod merge;
pub mod noise_floor;
pub mod pairing;
pub mod pivot_merge;
pub mod reanalysis;
pub mod saved;
pub mod sequential;
pub mod sufficiency;
pub mod summary;

mod caveats;
pub mod error;

/// Confidence of every interval and verdict rigor reports.
pub const CONFIDENCE: f64 = 0.95;

/// Power the noise floor and the rounds-to-settle advice are quoted at: a change that size is
/// told from no change 4 times in 5.
pub const POWER: f64 = 0.8;
