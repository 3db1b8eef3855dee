//! `rigor history` on the terminal: per series a sparkline of the run medians, the latest
//! median, and each change point with the run after it, its commit, the medians either side,
//! the % change and its p-value.

use super::format::{number, p_value, signed_pct};
use super::sparkline;
use super::terminal::visible;
use rigor_model::history::{HistorySeries, Point};

/// The widest sparkline: longer histories are averaged into this many characters.
const SPARK_WIDTH: usize = 60;

/// The whole text report of `series` read from the store `store`.
pub fn render(series: &[HistorySeries], store: &str) -> String {
    let runs: std::collections::BTreeSet<i64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.run))
        .collect();
    let mut out = format!(
        "rigor history: {} series over {} runs in {store}\n",
        series.len(),
        runs.len()
    );
    for s in series {
        out.push('\n');
        out.push_str(&one(s));
    }
    // Imported files may carry any text: control characters are shown, never sent.
    visible(&out)
}

/// One series: heading, sparkline, latest, change points.
fn one(s: &HistorySeries) -> String {
    let unit = if s.unit.is_empty() || s.unit == "count" {
        String::new()
    } else {
        format!(" ({})", s.unit)
    };
    let mut out = format!(
        "{} · {}{unit} · {} runs\n",
        visible(&s.label()),
        visible(&s.measurement),
        s.points.len()
    );
    let medians: Vec<Option<f64>> = s.points.iter().map(|p| Some(p.median)).collect();
    let line = sparkline::line(&sparkline::resample(&medians, SPARK_WIDTH));
    if let (Some(first), Some(last)) = (s.points.first(), s.points.last()) {
        out.push_str(&format!(
            "  {line}  {} … {}\n",
            day(&first.started_at),
            day(&last.started_at)
        ));
        out.push_str(&format!(
            "  latest {} ({})\n",
            number(last.median),
            at(last)
        ));
    }
    if s.change_points.is_empty() {
        out.push_str("  no change point\n");
    }
    for c in &s.change_points {
        out.push_str(&format!(
            "  change at run {} ({}{}): {} → {} ({}, p = {})\n",
            c.run,
            c.started_at,
            commit_text(c.commit.as_deref()),
            number(c.before),
            number(c.after),
            signed_pct(c.change_pct),
            p_value(c.p_value)
        ));
    }
    out
}

/// `run 12, 2026-11-30T10:00:00Z, commit 1a2b3c4d5e6f (dirty)`.
fn at(p: &Point) -> String {
    let dirty = if p.dirty == Some(true) {
        " (dirty)"
    } else {
        ""
    };
    format!(
        "run {}, {}{}{dirty}",
        p.run,
        p.started_at,
        commit_text(p.commit.as_deref())
    )
}

/// `, commit 1a2b3c4d5e6f` with each commit shortened to 12 characters; empty without one.
fn commit_text(commit: Option<&str>) -> String {
    match commit.filter(|c| !c.is_empty()) {
        Some(c) => {
            let short: Vec<&str> = c.split(',').map(|h| h.get(..12).unwrap_or(h)).collect();
            format!(", commit {}", visible(&short.join(",")))
        }
        None => String::new(),
    }
}

/// The date part of a start time.
fn day(started_at: &str) -> &str {
    started_at.get(..10).unwrap_or(started_at)
}
