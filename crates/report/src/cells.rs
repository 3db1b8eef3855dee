//! What one cell of a measurement table says about one row: a figure with its noise, how many
//! iterations it stands on, and what the application received outside the measured window.

use super::format;
use rigor_model::result::{Row, Summary};

/// A row's summary of `id`: the runner summarises each row, and a saved result is completed as
/// it loads (`analysis::saved::load`), so a report only reads.
fn summary_of(row: &Row, id: &str) -> Option<Summary> {
    row.summary.get(id).cloned()
}

/// `median ±CV% (mean)`, with `(n=k)` when fewer iterations than the row's used ones carry the
/// figure. The mean of the same kept iterations stands beside the median for readers who compare
/// means (crank's tables do), unless it reads the same.
pub fn measurement_cell(row: &Row, id: &str) -> String {
    let Some(s) = summary_of(row, id) else {
        return "—".to_string();
    };
    let mut text = format::number(s.median);
    if s.n >= 2 {
        // The summary's own CV (NaN, shown `±?`, where the mean is 0): the figure the
        // noisy-row guard reads.
        text.push(' ');
        text.push_str(&format::cv_pct(s.cv * 100.0));
        // Where the mean reads the same as the median it would only repeat it.
        let mean = format::number(s.mean);
        if mean != format::number(s.median) {
            text.push_str(&format!(" ({mean})"));
        }
    }
    let used = row.kept();
    if s.n < used {
        text.push_str(&format!(" (n={})", s.n));
    }
    text
}

/// `3/5 (1 excluded, 1 failed)`: how many iterations the medians stand on.
pub fn iterations_cell(row: &Row) -> String {
    let total = row.iterations.len();
    let failed = row
        .iterations
        .iter()
        .filter(|it| it.error.is_some())
        .count();
    let excluded = row.excluded_count();
    let mut text = format!("{}/{}", row.kept(), total);
    let mut why = Vec::new();
    if excluded > 0 {
        why.push(format!("{excluded} excluded"));
    }
    if failed > 0 {
        why.push(format!("{failed} failed"));
    }
    if !why.is_empty() {
        text.push_str(&format!(" ({})", why.join(", ")));
    }
    text
}

/// Median over all iterations of what the app received outside the measured window (readiness
/// probes, warmup), so pre-warming is visible next to the figures it could flatter.
pub fn outside_window_cell(row: &Row) -> String {
    match rigor_analysis::summary::outside_window(row) {
        Some((requests, bytes)) => {
            format!("{} ({})", format::number(requests), format::bytes(bytes))
        }
        None => "—".to_string(),
    }
}
