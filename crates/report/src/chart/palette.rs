//! Colours: one per variant (the same variant has the same colour in every chart of a page,
//! and the colours stay apart for readers with the common colour-vision deficiencies), and
//! one per verdict, as the tables colour them.

use rigor_model::result::Verdict;

/// Series colours, in order (Okabe–Ito, then greys).
const SERIES: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000", "#999999",
];

/// The colour of the `i`-th variant (wrapping after eight; the legend names them).
pub fn series(i: usize) -> &'static str {
    SERIES[i % SERIES.len()]
}

/// The colour of a verdict: regression red, improvement green, no change grey, inconclusive
/// amber.
pub fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "#c62828",
        Verdict::Improvement => "#2e7d32",
        Verdict::NoChange => "#8a8a8a",
        Verdict::Inconclusive => "#e0a000",
    }
}

/// The shading of the measured window.
pub const WINDOW: &str = "#4caf50";
/// What did not count (failed or excluded iterations).
pub const MUTED: &str = "#9e9e9e";
