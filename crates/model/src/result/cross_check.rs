//! `--cross-check TOOL`'s record in the result: each compared load measurement of the built-in
//! engine against the tool, agreeing, disagreeing beyond noise, or undecided.

use serde::{Deserialize, Serialize};

/// What the cross-check found for one measurement of one row.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    pub scenario: String,
    pub row: std::collections::BTreeMap<String, String>,
    pub measurement: String,
    pub engine_median: Option<f64>,
    pub tool_median: Option<f64>,
    /// Tool median / engine median − 1, in % (paired: the median within-round change).
    pub change_pct: Option<f64>,
    /// `agree` (within the threshold, beyond doubt), `disagree` (beyond noise and the
    /// threshold) or `undecided` (the runs cannot tell).
    pub outcome: String,
    /// The known cause of a disagreement for this tool and figure, if there is one.
    pub why: Option<String>,
}

/// The run's cross-check: the tool, a finding per load measurement both clients reported in
/// each row, and the ids only one of them reported.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CrossCheck {
    pub tool: String,
    pub findings: Vec<Finding>,
    /// Load ids the engine reported and the tool has no figure for (`load.latency.p999` of wrk).
    pub engine_only: Vec<String>,
    /// Load ids the tool reported and the engine did not.
    pub tool_only: Vec<String>,
}
