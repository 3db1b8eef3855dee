//! rigor's model: the `rigor.run.v1` result document and everything it is made of (rows,
//! iterations, comparisons, verdicts, warnings, declarations, the measurement catalogue, series
//! over time, the load tools' reports) and the neutral text helpers that say a figure.
//!
//! It exists so the file format depends on nothing but itself and the leaf crates: the config,
//! the command line, a database or a renderer can change without the saved result changing,
//! and every reader of a result (analysis, reports, history) shares one definition of it.

pub mod declarations;
pub mod duration;
pub mod environment;
pub mod format;
pub mod history;
pub mod measurements;
pub mod result;
pub mod series;
pub mod tool;
