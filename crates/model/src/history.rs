//! A measurement's history over runs, as `rigor history` shows it: one point per run (the median
//! of a row's kept iterations) and the steps change-point detection found. The store reads it;
//! the reports draw it.

use std::collections::BTreeMap;

/// One run's point of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub run: i64,
    pub started_at: String,
    /// The commit of the run's job folders (several, comma-separated, when they differ).
    pub commit: Option<String>,
    pub dirty: Option<bool>,
    pub median: f64,
    /// The kept iterations the median stands on.
    pub n: usize,
}

/// A step in a series: the first run after it, and the medians either side.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Index in the series' points of the first point after the step.
    pub index: usize,
    pub run: i64,
    pub started_at: String,
    pub commit: Option<String>,
    pub before: f64,
    pub after: f64,
    pub change_pct: f64,
    pub p_value: f64,
}

/// One series: a row of a scenario on one measurement, over runs.
#[derive(Debug, Clone, PartialEq)]
pub struct HistorySeries {
    pub scenario: String,
    pub variables: BTreeMap<String, String>,
    pub variant: Option<String>,
    pub measurement: String,
    pub unit: String,
    pub points: Vec<Point>,
    pub change_points: Vec<Change>,
}

impl HistorySeries {
    /// `plaintext connections=64 slow` for headings.
    pub fn label(&self) -> String {
        crate::result::RowKey {
            scenario: self.scenario.clone(),
            variables: self.variables.clone(),
            variant: self.variant.clone(),
        }
        .label()
    }
}
