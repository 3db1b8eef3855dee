//! CPU profiles in a result: each row's samples merged over its kept iterations, and per
//! compared pair the functions whose share of the samples changed most.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A row's CPU profile: where its merged stacks and flame graph are, and how many samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowProfile {
    /// Samples over the kept iterations (cpu-clock, at the run's rate).
    pub samples: u64,
    /// How many kept iterations had a profile.
    pub iterations: usize,
    /// The merged folded stacks (`frame;frame COUNT` lines), in the run folder.
    pub folded: String,
    /// The flame graph (SVG), in the run folder; absent when there was no sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flame_graph: Option<String>,
}

/// A candidate's profile against its baseline's, in one compared row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileComparison {
    pub scenario: String,
    /// The matrix values of the compared rows.
    pub row: BTreeMap<String, String>,
    pub baseline: String,
    pub candidate: String,
    pub baseline_samples: u64,
    pub candidate_samples: u64,
    /// The differential flame graph (SVG) in the run folder: the candidate's stacks, red where
    /// a frame's share grew, blue where it shrank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_flame_graph: Option<String>,
    /// The functions whose inclusive share of the samples changed most (up to 20), the
    /// largest increase first.
    pub profile_diff: Vec<FunctionShare>,
}

/// One function's inclusive share of the samples on each side: the samples whose stack holds
/// the function anywhere (counted once however deep it recurses), in % of that side's samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionShare {
    pub function: String,
    pub baseline_pct: f64,
    pub candidate_pct: f64,
}
