//! A tested commit judged against both ends from the run's own comparisons: like good when it
//! is the same as good (no change) and different from bad (a regression or an improvement),
//! like bad for the mirror, unknown otherwise. The run compares with the tested commit as its
//! baseline (so `--until-conclusive` rounds chase exactly these two comparisons); the changes
//! shown are turned around to read as "the tested commit against that end".

use super::search::Decision;
use crate::result::{Comparison, Verdict};
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

    /// The comparison turned around: its baseline against its candidate. A change of c% is one
    /// of 1/(1+c) − 1 the other way; the interval's ends swap; a regression is an improvement.
    pub fn reversed(c: &Comparison) -> Side {
        let flip = |v: Option<f64>| {
            v.map(|p| (1.0 / (1.0 + p / 100.0) - 1.0) * 100.0)
                .filter(|p| p.is_finite())
        };
        Side {
            verdict: match c.verdict {
                Verdict::Regression => Verdict::Improvement,
                Verdict::Improvement => Verdict::Regression,
                v => v,
            },
            change_pct: flip(c.change_pct),
            ci_low_pct: flip(c.ci_high_pct),
            ci_high_pct: flip(c.ci_low_pct),
        }
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

/// The tested commit against the good end and the bad end.
pub fn decide(vs_good: &Side, vs_bad: &Side) -> Decision {
    let same = |s: &Side| s.verdict == Verdict::NoChange;
    let different = |s: &Side| differs(s.verdict);
    if same(vs_good) && different(vs_bad) {
        Decision::Good
    } else if same(vs_bad) && different(vs_good) {
        Decision::Bad
    } else {
        Decision::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(verdict: Verdict) -> Side {
        Side {
            verdict,
            change_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
        }
    }

    #[test]
    fn like_one_end_means_the_same_as_it_and_different_from_the_other() {
        use Verdict::*;
        let d = |g, b| decide(&side(g), &side(b));
        assert_eq!(d(NoChange, Regression), Decision::Good);
        assert_eq!(d(NoChange, Improvement), Decision::Good);
        assert_eq!(d(Improvement, NoChange), Decision::Bad);
        assert_eq!(d(Regression, NoChange), Decision::Bad);
        assert_eq!(d(NoChange, NoChange), Decision::Unknown);
        assert_eq!(d(Regression, Improvement), Decision::Unknown);
        assert_eq!(d(NoChange, Inconclusive), Decision::Unknown);
        assert_eq!(d(Inconclusive, NoChange), Decision::Unknown);
    }

    #[test]
    fn a_reversed_comparison_reads_the_other_way() {
        let c: Comparison = serde_json::from_value(serde_json::json!({
            "measurement": "load.rps", "baseline": "tested", "candidate": "good",
            "baseline_median": 1000.0, "candidate_median": 2000.0,
            "change_pct": 100.0, "ci_low_pct": 60.0, "ci_high_pct": 150.0,
            "p_value": 0.001, "verdict": "regression",
        }))
        .unwrap();
        let r = Side::reversed(&c);
        assert_eq!(r.verdict, Verdict::Improvement);
        assert!((r.change_pct.unwrap() + 50.0).abs() < 1e-9);
        assert!((r.ci_low_pct.unwrap() + 60.0).abs() < 1e-9);
        assert!((r.ci_high_pct.unwrap() + 37.5).abs() < 1e-9);
        assert_eq!(Side::of(&c).text(), "+100.0% [+60.0%, +150.0%] regression");
    }
}
