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
    /// When each application sample was taken.
    #[serde(default)]
    pub t_ms: Vec<f64>,
    /// The measured window `[start, end]` on the same clock; `None` when it was never marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<[f64; 2]>,
    /// Process-tree CPU since the previous sample, 100 = all the cores it may use (`app.cpu`'s
    /// scale); `None` for the first sample, which has no predecessor.
    #[serde(default)]
    pub cpu: Vec<Option<f64>>,
    /// Process-tree RSS, MiB.
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
}

/// The load engine's measured window, one entry per second.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LoadSeries {
    /// Where each second starts, ms since spawn (the `Series` clock).
    pub t_ms: Vec<f64>,
    /// Responses completed in that second.
    pub rps: Vec<f64>,
    /// Errors of any kind in that second.
    pub errors: Vec<f64>,
    /// Mean and 99th-percentile latency of the responses completed in that second, ms;
    /// `None` for a second with no response.
    pub latency_mean: Vec<Option<f64>>,
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
