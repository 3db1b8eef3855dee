use serde::Serialize;

use crate::hodges_lehmann::Change;

/// Which way is good for a measurement: RPS up is good, latency and memory down are.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

/// The answer to "is it real?". Only a whole interval on one side of the practical
/// threshold earns a definite answer; everything else asks for more iterations.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Regression,
    Improvement,
    #[serde(rename = "no change")]
    NoChange,
    Inconclusive,
}

/// Turns a change into a verdict against a practical threshold (in %, e.g. 2.0): a
/// statistically real but tiny change is not worth a red CI, and a wide interval is
/// not evidence of "no change". The whole CI beyond the threshold in the bad direction
/// is a regression, in the good direction an improvement; the whole CI within
/// ±threshold is no change; anything else (including a NaN or unbounded CI) is
/// inconclusive. So is an interval the medians' own change falls outside of
/// ([`Change::agrees`]): the samples are not one shifted distribution, and a verdict printed
/// beside medians that moved the other way would contradict them.
pub fn verdict(change: &Change, direction: Direction, threshold_pct: f64) -> Verdict {
    let t = threshold_pct.abs();
    let (lo, hi) = (change.ci_low_pct, change.ci_high_pct);
    if lo.is_nan() || hi.is_nan() || t.is_nan() || !change.agrees() {
        return Verdict::Inconclusive;
    }
    let (up, down) = (lo > t, hi < -t);
    match direction {
        Direction::HigherIsBetter if down => Verdict::Regression,
        Direction::HigherIsBetter if up => Verdict::Improvement,
        Direction::LowerIsBetter if up => Verdict::Regression,
        Direction::LowerIsBetter if down => Verdict::Improvement,
        _ if lo >= -t && hi <= t => Verdict::NoChange,
        _ => Verdict::Inconclusive,
    }
}

/// Whether these sample sizes can ever produce a conclusive comparison: even perfectly
/// separated samples give a two-sided rank-test p of 2 / C(n1+n2, n1), so 2 vs 2 (1/3)
/// or 3 vs 3 (1/10) can never reach 95%. Running them anyway is a warning, not a verdict.
pub fn can_ever_be_significant(n_baseline: usize, n_candidate: usize, confidence: f64) -> bool {
    if n_baseline == 0 || n_candidate == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return false;
    }
    let half_alpha = (1.0 - confidence) / 2.0;
    // 1 / C(n1+n2, n1) <= alpha / 2, in logs (with the tolerance hl_critical_k uses)
    ln_choose_reaches(n_baseline, n_candidate, -half_alpha.ln() - 1e-12)
}

/// Whether ln C(n1+n2, n1) ≥ `bound`, summed term by term as `ln_choose` sums it but only
/// until the bound is passed: each term is at least ln 2, so a count of any size (a mistyped
/// `-i 99999999999`) is answered in a few dozen terms instead of one per iteration.
fn ln_choose_reaches(n1: usize, n2: usize, bound: f64) -> bool {
    let (k, rest) = (n1.min(n2), n1.max(n2));
    let mut sum = 0.0;
    for i in 1..=k {
        sum += ((rest + i) as f64 / i as f64).ln();
        if sum >= bound {
            return true;
        }
    }
    sum >= bound
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mann_whitney::ln_choose;

    /// The bounded sum agrees with the whole one, and answers at once for absurd counts.
    #[test]
    fn can_ever_be_significant_matches_ln_choose_and_is_quick_for_huge_counts() {
        for conf in [0.8, 0.9, 0.95, 0.99, 0.999] {
            for a in 1..40 {
                for b in 1..40 {
                    let whole = -ln_choose(a + b, a) <= ((1.0 - conf) / 2.0f64).ln() + 1e-12;
                    assert_eq!(can_ever_be_significant(a, b, conf), whole, "{a} {b} {conf}");
                }
            }
        }
        // One term per iteration would take minutes here.
        assert!(can_ever_be_significant(
            99_999_999_999,
            99_999_999_999,
            0.95
        ));
        assert!(can_ever_be_significant(1, 1 << 40, 0.95));
        assert!(!can_ever_be_significant(1, 1, 0.95));
    }
    use crate::mann_whitney::hl_critical_k;

    fn change(lo: f64, hi: f64) -> Change {
        Change {
            baseline_median: 1.0,
            candidate_median: 1.0,
            change_pct: (lo + hi) / 2.0,
            median_change_pct: (lo + hi) / 2.0,
            ci_low_pct: lo,
            ci_high_pct: hi,
            p_value: 0.5,
        }
    }

    #[test]
    fn four_verdicts() {
        use Direction::*;
        use Verdict::*;
        let v = |lo, hi, d| verdict(&change(lo, hi), d, 2.0);
        assert_eq!(v(-9.0, -3.0, HigherIsBetter), Regression);
        assert_eq!(v(-9.0, -3.0, LowerIsBetter), Improvement);
        assert_eq!(v(3.0, 9.0, HigherIsBetter), Improvement);
        assert_eq!(v(3.0, 9.0, LowerIsBetter), Regression);
        assert_eq!(v(-1.5, 1.9, HigherIsBetter), NoChange);
        assert_eq!(v(-2.0, 2.0, LowerIsBetter), NoChange);
        assert_eq!(v(-1.0, 3.0, HigherIsBetter), Inconclusive);
        assert_eq!(v(1.0, 3.0, LowerIsBetter), Inconclusive); // real but maybe tiny
        assert_eq!(v(-5.0, 5.0, LowerIsBetter), Inconclusive);
        assert_eq!(
            v(f64::NEG_INFINITY, f64::INFINITY, LowerIsBetter),
            Inconclusive
        );
        assert_eq!(v(f64::NAN, 1.0, LowerIsBetter), Inconclusive);
        // zero threshold: any interval excluding 0 is a verdict
        assert_eq!(verdict(&change(0.1, 0.2), LowerIsBetter, 0.0), Regression);
        assert_eq!(verdict(&change(0.0, 0.0), LowerIsBetter, 0.0), NoChange);
    }

    #[test]
    fn no_verdict_when_the_medians_contradict_the_interval() {
        // The interval says "clearly up", the medians moved down: neither story is told.
        let mut c = change(5.0, 9.0);
        assert_eq!(
            verdict(&c, Direction::HigherIsBetter, 2.0),
            Verdict::Improvement
        );
        c.median_change_pct = -0.5;
        assert_eq!(
            verdict(&c, Direction::HigherIsBetter, 2.0),
            Verdict::Inconclusive
        );
        assert_eq!(
            verdict(&c, Direction::LowerIsBetter, 2.0),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn serialized_names_match_the_contract() {
        let s = |v: Verdict| serde_json::to_string(&v).unwrap();
        assert_eq!(s(Verdict::Regression), "\"regression\"");
        assert_eq!(s(Verdict::Improvement), "\"improvement\"");
        assert_eq!(s(Verdict::NoChange), "\"no change\"");
        assert_eq!(s(Verdict::Inconclusive), "\"inconclusive\"");
    }

    #[test]
    fn significance_reachability() {
        // 2/C(4,2) = 0.333, 2/C(6,3) = 0.1, 2/C(7,3) = 0.0571, 2/C(8,4) = 0.0286 (math.comb)
        assert!(!can_ever_be_significant(2, 2, 0.95));
        assert!(!can_ever_be_significant(3, 3, 0.95));
        assert!(!can_ever_be_significant(3, 4, 0.95));
        assert!(can_ever_be_significant(4, 4, 0.95));
        assert!(can_ever_be_significant(3, 5, 0.95)); // 2/56 = 0.0357
        assert!(!can_ever_be_significant(4, 4, 0.99)); // 0.0286 > 0.01
        assert!(can_ever_be_significant(5, 5, 0.99)); // 2/252 = 0.0079
        assert!(!can_ever_be_significant(0, 10, 0.95));
        assert!(!can_ever_be_significant(1, 1000, 0.999)); // 2/1001 = 0.002
        assert!(can_ever_be_significant(1, 1000, 0.99));
        // agrees with the interval machinery compare() uses
        for n1 in 1..=12 {
            for n2 in 1..=12 {
                for conf in [0.8, 0.9, 0.95, 0.99] {
                    assert_eq!(
                        can_ever_be_significant(n1, n2, conf),
                        hl_critical_k(n1, n2, conf).is_some(),
                        "{n1} {n2} {conf}"
                    );
                }
            }
        }
    }
}
