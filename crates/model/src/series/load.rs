//! The load engine's seconds as a series, placed on the application's clock: each second starts
//! where the engine's window opened plus its index.

use super::{ms_since, tenth};
use crate::result::{Iteration, LoadSeries, Series};
use rigor_load::LoadReport;
use std::time::Instant;

/// Puts the load's seconds in the iteration's series (keeping whatever else it holds).
pub fn record_load(it: &mut Iteration, report: &LoadReport, spawned_at: Instant) {
    if let Some(load) = load_series(report, spawned_at) {
        it.series.get_or_insert_with(Series::default).load = Some(load);
    }
}

/// `None` when the engine's window never opened.
fn load_series(report: &LoadReport, spawned_at: Instant) -> Option<LoadSeries> {
    let opened = ms_since(spawned_at, report.window_opened_at?);
    let t = &report.timeline;
    Some(LoadSeries {
        t_ms: t
            .iter()
            .map(|s| tenth(opened + s.second as f64 * 1e3))
            .collect(),
        rps: t.iter().map(|s| s.requests as f64).collect(),
        errors: t.iter().map(|s| s.errors as f64).collect(),
        latency_mean: t.iter().map(|s| s.latency_mean_ms).collect(),
        latency_p99: t.iter().map(|s| s.latency_p99_ms).collect(),
    })
}
