use crate::hodges_lehmann::compare;
use crate::normal::normal_isf;
use crate::summary::{median_of_sorted, sorted_clean};
use crate::verdict::{can_ever_be_significant, verdict, Direction, Verdict};

/// Beyond this many iterations per side we call a verdict unreachable.
const MAX_ITERATIONS: usize = 100_000;
/// scipy.stats.norm.isf(0.2): the margin for an 80% chance of settling.
const Z_80: f64 = 0.8416212335729142;

/// A rough answer to "how many iterations per side would settle this?", so an
/// inconclusive verdict comes with a next step. The interval's half-width shrinks like
/// sqrt(1/n1 + 1/n2); the verdict settles once it is smaller than the distance from
/// the current estimate to the nearest threshold edge (with a margin for an ~80%
/// chance rather than a coin flip). When the sizes are too small
/// for any interval, the half-width is guessed from the pooled spread (normal theory,
/// inflated by π/3 for the Hodges–Lehmann estimator's efficiency). Returns the current
/// size when the verdict is already conclusive, and `None` when the estimate sits on
/// the threshold edge (or the spread cannot be estimated) so no affordable n will do.
pub fn iterations_to_settle(
    baseline: &[f64],
    candidate: &[f64],
    threshold_pct: f64,
    confidence: f64,
) -> Option<usize> {
    let t = threshold_pct.abs();
    if !t.is_finite() {
        return None;
    }
    let change = compare(baseline, candidate, confidence)?;
    let base = sorted_clean(baseline);
    let cand = sorted_clean(candidate);
    let (n1, n2) = (base.len(), cand.len());
    let now = n1.max(n2);
    if verdict(&change, Direction::HigherIsBetter, t) != Verdict::Inconclusive {
        return Some(now);
    }
    let inv_n = 1.0 / n1 as f64 + 1.0 / n2 as f64;
    let z = normal_isf((1.0 - confidence) / 2.0);
    let half_width = if change.ci_low_pct.is_finite() && change.ci_high_pct.is_finite() {
        (change.ci_high_pct - change.ci_low_pct) / 2.0
    } else {
        let s = pooled_relative_stdev(&base, &cand)?;
        100.0 * z * (std::f64::consts::PI / 3.0).sqrt() * s * inv_n.sqrt()
    };
    // The usual sample-size rule: (z_conf + z_power)^2 rather than z_conf^2, so the next
    // run settles it with ~80% chance (if the estimate is right), not a coin flip.
    let half_width = half_width * (z + Z_80) / z;
    let gap = (change.change_pct.abs() - t).abs();
    if gap.is_nan() || gap <= 1e-9 * t.max(1.0) || !half_width.is_finite() {
        return None;
    }
    // Equal sizes N give sqrt(2/N); solve half_width * sqrt((2/N) / inv_n) <= gap.
    let ratio = gap / half_width;
    let need = (2.0 / (ratio * ratio * inv_n)).ceil();
    if need.is_nan() || need > MAX_ITERATIONS as f64 {
        return None;
    }
    let min_possible = (1..=MAX_ITERATIONS).find(|&n| can_ever_be_significant(n, n, confidence))?;
    Some((need as usize).max(min_possible).max(now + 1))
}

/// Pooled sample standard deviation relative to the level: of ln values for positive
/// data (matching compare's ratio scale), else of values / |baseline median|.
fn pooled_relative_stdev(base: &[f64], cand: &[f64]) -> Option<f64> {
    let (n1, n2) = (base.len(), cand.len());
    if n1 + n2 < 3 {
        return None;
    }
    let positive = base[0] > 0.0 && cand[0] > 0.0;
    let scale = median_of_sorted(base).abs();
    if !positive && scale == 0.0 {
        return None;
    }
    let f = |v: f64| if positive { v.ln() } else { v / scale };
    let ss = |xs: &[f64]| {
        let m = xs.iter().map(|&v| f(v)).sum::<f64>() / xs.len() as f64;
        xs.iter().map(|&v| (f(v) - m).powi(2)).sum::<f64>()
    };
    Some(((ss(base) + ss(cand)) / (n1 + n2 - 2) as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    #[test]
    fn conclusive_now_returns_current_size() {
        let base = [100.0, 100.5, 99.5, 100.2, 99.8];
        let cand = [110.0, 110.5, 109.5, 110.2, 109.8];
        assert_eq!(iterations_to_settle(&base, &cand, 2.0, 0.95), Some(5));
    }

    #[test]
    fn estimate_on_the_threshold_edge_is_unreachable() {
        let base = [100.0, 100.1, 99.9, 100.05, 99.95];
        let cand: Vec<f64> = base.iter().map(|v| v * 1.02).collect();
        assert_eq!(iterations_to_settle(&base, &cand, 2.0, 0.95), None);
    }

    #[test]
    fn tiny_samples_get_a_plausible_suggestion() {
        // 2 vs 2 can never be significant; with 10% difference and ~1% noise a handful
        // per side is enough: at least the minimum of 4 that can reach 95%.
        let n = iterations_to_settle(&[100.0, 101.0], &[110.0, 111.0], 2.0, 0.95).unwrap();
        assert!((4..=8).contains(&n), "{n}");
        assert_eq!(iterations_to_settle(&[100.0], &[110.0], 2.0, 0.95), None);
    }

    #[test]
    fn suggestion_mostly_settles_it() {
        // 4% shift, 3% lognormal noise, 2% threshold, starting from n = 5 (usually
        // inconclusive). Fresh simulations at the suggested n should mostly be
        // conclusive; the point estimate at n = 5 is noisy, so judge the average.
        let mut rng = Rng::new(7);
        let draw = |rng: &mut Rng, n: usize, level: f64| -> Vec<f64> {
            (0..n)
                .map(|_| level * (0.03 * rng.normal()).exp())
                .collect()
        };
        let (mut suggestions, mut conclusive, mut runs) = (0, 0, 0);
        for _ in 0..30 {
            let base = draw(&mut rng, 5, 100.0);
            let cand = draw(&mut rng, 5, 104.0);
            let c = compare(&base, &cand, 0.95).unwrap();
            if verdict(&c, Direction::HigherIsBetter, 2.0) != Verdict::Inconclusive {
                continue;
            }
            let Some(n) = iterations_to_settle(&base, &cand, 2.0, 0.95) else {
                continue;
            };
            assert!(n > 5);
            if n > 150 {
                continue;
            }
            suggestions += 1;
            for _ in 0..40 {
                let ch =
                    compare(&draw(&mut rng, n, 100.0), &draw(&mut rng, n, 104.0), 0.95).unwrap();
                conclusive += (verdict(&ch, Direction::HigherIsBetter, 2.0)
                    != Verdict::Inconclusive) as usize;
                runs += 1;
            }
        }
        assert!(suggestions >= 8, "{suggestions}");
        let rate = conclusive as f64 / runs as f64;
        assert!(rate >= 0.6, "suggested n settled only {rate} of fresh runs");
    }
}
