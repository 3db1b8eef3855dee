//! What the measurements say: summaries and exclusions of a row, candidate-against-baseline
//! comparisons with verdicts, matching saved results row by row, and the one gate that turns
//! verdicts and warnings into an exit code. Pure functions of results: nothing here runs,
//! prints or reads clap; `rigor run` and `rigor compare` both call into it.

pub mod comparison;
pub mod gate;
pub mod limits;
pub mod matching;
pub mod merge;
pub mod noise_floor;
pub mod pairing;
pub mod reanalysis;
pub mod saved;
pub mod sequential;
pub mod sufficiency;
pub mod summary;

mod caveats;

/// Confidence of every interval and verdict rigor reports.
pub const CONFIDENCE: f64 = 0.95;

/// Power the noise floor and the rounds-to-settle advice are quoted at: a change that size is
/// told from no change 4 times in 5.
pub const POWER: f64 = 0.8;
