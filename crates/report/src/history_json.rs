//! `rigor history --json F`: the series as `rigor.history.v1`, for scripts and dashboards.

use rigor_model::history::HistorySeries;
use serde_json::{json, Value};

/// Schema tag of the history document.
pub const SCHEMA: &str = "rigor.history.v1";

/// The document of `series` (an empty list when nothing matched).
pub fn render(series: &[HistorySeries]) -> Value {
    json!({
        "schema": SCHEMA,
        "series": series.iter().map(one).collect::<Vec<_>>(),
    })
}

fn one(s: &HistorySeries) -> Value {
    json!({
        "scenario": s.scenario,
        "variables": s.variables,
        "variant": s.variant,
        "measurement": s.measurement,
        "unit": s.unit,
        "points": s.points.iter().map(|p| json!({
            "run": p.run,
            "started_at": p.started_at,
            "commit": p.commit,
            "dirty": p.dirty,
            "median": p.median,
            "n": p.n,
        })).collect::<Vec<_>>(),
        "change_points": s.change_points.iter().map(|c| json!({
            "index": c.index,
            "run": c.run,
            "started_at": c.started_at,
            "commit": c.commit,
            "before": c.before,
            "after": c.after,
            "change_pct": c.change_pct,
            "p_value": c.p_value,
        })).collect::<Vec<_>>(),
    })
}
