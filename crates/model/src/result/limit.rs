//! A limit's outcome as the result keeps it: each `[[limits]]` / `--limit` checked against each
//! row that measured its id.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A limit checked against one row (or against a run in which no row measured its id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub measure: String,
    /// `<= 50ms`, `< 50ms`, `>= 10000`.
    pub condition: String,
    /// The bound in the measurement's unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
    pub scenario: String,
    pub variables: BTreeMap<String, String>,
    #[serde(default)]
    pub variant: Option<String>,
    /// The row's median; `None` when no row measured the id (which fails the limit: a limit
    /// on nothing would pass whatever happened).
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
    pub passed: bool,
}
