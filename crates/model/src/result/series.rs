//! An iteration's figures over time, kept compactly in the result file (one array per figure,
//! aligned on one clock) so timelines can be drawn and a stall inside the window can be seen.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the application and the load did during one iteration, sample by sample.
///
/// Every `t_ms` is milliseconds since the application (or command) was spawned, so the
/// application's samples, its metrics and the load's seconds share one axis.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Series {
    /// When each application sample was taken, to 0.1 ms: one point per sample the app.*
    /// figures were computed from (at most [`crate::series::MAX_POINTS`]; see `thinned_from`).
    #[serde(default)]
    pub t_ms: Vec<f64>,
    /// The measured window `[start, end]` on the same clock; `None` when it was never marked.
    /// For an application, the times of the samples that answered the window's marks (the
    /// first and last the app.* window figures use); for a command, its whole life `[0, exit]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<[f64; 2]>,
    /// Process-tree CPU since the previous point, 100 = all the cores it may use (`app.cpu`'s
    /// scale, by the same rule, so the largest point inside the window is `app.cpu`), to 0.01;
    /// `None` for the first point, which has no predecessor, and after a span too short to be
    /// read as a rate (a mark a few ms after a periodic sample).
    #[serde(default)]
    pub cpu: Vec<Option<f64>>,
    /// Process-tree RSS, MiB, to 0.01.
    #[serde(default)]
    pub rss: Vec<f64>,
    /// OS threads of the tree.
    #[serde(default)]
    pub threads: Vec<f64>,
    /// Runtime metrics by measurement id (`app.metric.NAME.rate` per second since the previous
    /// scrape, `app.metric.NAME` as read), at the times in `metrics_t_ms`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, Vec<Option<f64>>>,
    /// When each metrics scrape was taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics_t_ms: Vec<f64>,
    /// The load, second by second over the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadSeries>,
    /// How many samples were taken when there were more than could be kept: the points are
    /// then an even selection (the window's edges among them), each CPU point covering the
    /// span since the previous kept one. Absent when every sample is here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinned_from: Option<usize>,
}

/// The load engine's measured window, one entry per second (the engine's `timeline`).
///
/// The last entry also holds the window's requests answered or given up after it closed (and,
/// for a window that is not a whole number of seconds, covers only its remainder), so the
/// entries add up to the window's totals: `rps` sums to `load.requests`, `errors` to
/// `load.socket_errors`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LoadSeries {
    /// Where each second starts, ms since spawn (the `Series` clock): where the engine's window
    /// opened, plus the second's index.
    pub t_ms: Vec<f64>,
    /// Responses completed in that second (a count: a rate for every full second).
    pub rps: Vec<f64>,
    /// Errors of any kind in that second.
    pub errors: Vec<f64>,
    /// Mean latency of the window's requests answered or given up in that second (the
    /// population of `load.latency.*`), ms; `None` for a second with none.
    pub latency_mean: Vec<Option<f64>>,
    /// Their 99th percentile, ms: from a log histogram, at most 12.5% above the exact value and
    /// never below it, never above the second's largest latency.
    pub latency_p99: Vec<Option<f64>>,
}

/// One figure a command reported for a row of its own (`row = "clients"`): it is recorded in
/// the row `variables + row`, not in the row that ran the command.
#[derive(Debug, Clone, PartialEq)]
pub struct RowFigure {
    /// The row's own variables, such as `clients = "30"`.
    pub row: BTreeMap<String, String>,
    /// The measurement id, such as `cmd.msgs_per_sec`.
    pub id: String,
    pub value: f64,
}
