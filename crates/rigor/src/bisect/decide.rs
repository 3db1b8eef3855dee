//! The changes a bisection reports: a run's own comparison (step 0, the culprit's own run), or
//! one computed here from values gathered over several looks (a tested commit against each end,
//! the culprit against its parent from what the search measured), with the same estimate,
//! interval and verdict rules as a run's comparisons. Which side a commit is on is decided by
//! its position ([`super::position`]), not by these.

use crate::result::{Comparison, Verdict};
use rigor_stats::Direction;
use serde::Serialize;

/// One comparison as the bisection reports it: the change of the tested commit against one end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub verdict: Verdict,
    pub change_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
}

impl Side {
    /// The comparison as it reads (its candidate against its baseline).
    pub fn of(c: &Comparison) -> Side {
        Side {
            verdict: c.verdict,
            change_pct: c.change_pct,
            ci_low_pct: c.ci_low_pct,
            ci_high_pct: c.ci_high_pct,
        }
    }

    /// `candidate` against `baseline` (values of one measurement), judged against the
    /// threshold as a run judges its comparisons; `None` when a side is empty.
    pub fn between(
        baseline: &[f64],
        candidate: &[f64],
        threshold_pct: f64,
        direction: Direction,
    ) -> Option<Side> {
        let ch = rigor_stats::compare(baseline, candidate, 0.95)?;
        let finite = |v: f64| Some(v).filter(|v| v.is_finite());
        Some(Side {
            verdict: rigor_stats::verdict(&ch, direction, threshold_pct).into(),
            change_pct: finite(ch.change_pct),
            ci_low_pct: finite(ch.ci_low_pct),
            ci_high_pct: finite(ch.ci_high_pct),
        })
    }

    /// `-49.8% [-50.3%, -49.2%] regression`.
    pub fn text(&self) -> String {
        use crate::report::format::{ci, signed_pct};
        let mut s = match self.change_pct {
            Some(c) => signed_pct(c),
            None => "?".into(),
        };
        if let (Some(l), Some(h)) = (self.ci_low_pct, self.ci_high_pct) {
            s.push(' ');
            s.push_str(&ci(l, h));
        }
        s.push(' ');
        s.push_str(verdict_word(self.verdict));
        s
    }
}

/// The verdict as the result files spell it.
pub fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "regression",
        Verdict::Improvement => "improvement",
        Verdict::NoChange => "no change",
        Verdict::Inconclusive => "inconclusive",
    }
}

/// Whether a verdict says the two sides differ beyond the threshold.
pub fn differs(v: Verdict) -> bool {
    matches!(v, Verdict::Regression | Verdict::Improvement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comparison_reads_as_the_run_wrote_it() {
        let c: Comparison = serde_json::from_value(serde_json::json!({
            "measurement": "load.rps", "baseline": "tested", "candidate": "good",
            "baseline_median": 1000.0, "candidate_median": 2000.0,
            "change_pct": 100.0, "ci_low_pct": 60.0, "ci_high_pct": 150.0,
            "p_value": 0.001, "verdict": "regression",
        }))
        .unwrap();
        assert_eq!(Side::of(&c).text(), "+100.0% [+60.0%, +150.0%] regression");
    }

    #[test]
    fn values_compare_as_a_run_compares_them() {
        let base = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2];
        let more: Vec<f64> = base.iter().map(|v| v * 1.21).collect();
        let s = Side::between(&base, &more, 2.0, Direction::LowerIsBetter).unwrap();
        assert_eq!(s.verdict, Verdict::Regression, "{s:?}");
        assert!((s.change_pct.unwrap() - 21.0).abs() < 0.5, "{s:?}");
        let same = Side::between(&base, &base, 2.0, Direction::LowerIsBetter).unwrap();
        assert_eq!(same.verdict, Verdict::NoChange, "{same:?}");
        // Two values a side can never be told apart.
        let few = Side::between(&base[..2], &more[..2], 2.0, Direction::LowerIsBetter).unwrap();
        assert_eq!(few.verdict, Verdict::Inconclusive, "{few:?}");
        assert_eq!(
            Side::between(&[], &more, 2.0, Direction::LowerIsBetter),
            None
        );
    }
}
