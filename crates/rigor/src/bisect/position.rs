//! Where a tested commit lies between the two ends: position = (tested − good) / (bad − good)
//! on the medians, so 0 is the good end and 1 the bad one (on log values when every value is
//! positive, so a step reads as a ratio). The decision only asks which side of ½ the commit is
//! on, that is whether its median is above or below the midpoint of the ends' medians; the
//! interval is a bootstrap of that distance (each side resampled on its own, a fixed seed per
//! look so a saved bisection re-analyses the same), read on the scale of the ends' step. The
//! commit is like good when the whole interval lies below ½, like bad when it lies above ½, and
//! undecided while it straddles ½.
//!
//! Sides rather than rounds are resampled: on a busy machine one round's three iterations share
//! little of their noise (they run seconds apart), and the ends' values from earlier steps can
//! then narrow the midpoint ([`super::ends`]).
//!
//! A step looks again after every round; the confidence of each look comes from the
//! O'Brien–Fleming-type alpha spending `--until-conclusive` uses ([`rigor_stats::LookPlan`]),
//! so looking after every round does not inflate the chance of a wrong side.

use serde::Serialize;

/// Resamples per interval: enough for the tails a look at 99.9% asks for.
const RESAMPLES: usize = 2000;

/// A commit's place on the good → bad scale, with its interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Position {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// The confidence of the interval (that of the look it was taken at).
    pub confidence: f64,
}

/// Which side of ½ an interval is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Good,
    Bad,
    Straddles,
}

impl Position {
    /// The side of ½ the whole interval is on.
    pub fn place(&self) -> Place {
        if self.high < 0.5 {
            Place::Good
        } else if self.low > 0.5 {
            Place::Bad
        } else {
            Place::Straddles
        }
    }

    /// `0.03 [-0.02, 0.08]`.
    pub fn text(&self) -> String {
        format!("{:.2} [{:.2}, {:.2}]", self.estimate, self.low, self.high)
    }
}

/// The position of `tested` between `good` and `bad` with its interval at `confidence`;
/// `None` when a side has no value or the ends' medians are equal.
pub fn position(
    tested: &[f64],
    good: &[f64],
    bad: &[f64],
    confidence: f64,
    seed: u64,
) -> Option<Position> {
    let logs = [tested, good, bad]
        .iter()
        .all(|s| s.iter().all(|v| *v > 0.0 && v.is_finite()));
    let f = |v: f64| if logs { v.ln() } else { v };
    let (t, g, b) = (median(tested)?, median(good)?, median(bad)?);
    let width = f(b) - f(g);
    if width == 0.0 || !width.is_finite() {
        return None;
    }
    // Above the ends' midpoint, in steps from good to bad, plus ½.
    let place = |t: f64, g: f64, b: f64| 0.5 + (f(t) - (f(g) + f(b)) / 2.0) / width;
    let estimate = place(t, g, b);
    let mut rng = SplitMix(seed);
    let mut draws: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            place(
                resampled_median(tested, &mut rng),
                resampled_median(good, &mut rng),
                resampled_median(bad, &mut rng),
            )
        })
        .collect();
    draws.sort_by(f64::total_cmp);
    let tail = ((1.0 - confidence) / 2.0).clamp(0.0, 0.5);
    let at = |q: f64| draws[((q * RESAMPLES as f64).floor() as usize).min(RESAMPLES - 1)];
    Some(Position {
        estimate,
        low: at(tail).min(estimate),
        high: at(1.0 - tail).max(estimate),
        confidence,
    })
}

/// The median of the finite values, `None` without one.
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn resampled_median(xs: &[f64], rng: &mut SplitMix) -> f64 {
    let mut v: Vec<f64> = (0..xs.len())
        .map(|_| xs[(rng.next() % xs.len() as u64) as usize])
        .collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// How many rounds a step starts with: enough that a commit at either end sits about three
/// standard errors from ½ given the ends' own spread (a large step needs 2, a small one up to
/// `most`). Without a usable spread, `most`.
pub fn first_rounds(good: &[f64], bad: &[f64], most: usize) -> usize {
    let most = most.max(2);
    let (Some(g), Some(b)) = (median(good), median(bad)) else {
        return most;
    };
    if g <= 0.0 || b <= 0.0 {
        return most;
    }
    let spreads: Vec<f64> = [good, bad]
        .iter()
        .filter_map(|s| rigor_stats::log_spread(s))
        .collect();
    if spreads.is_empty() {
        return most;
    }
    let sigma = spreads.iter().sum::<f64>() / spreads.len() as f64;
    let step = (b / g).ln().abs();
    if step == 0.0 {
        return most;
    }
    let n = (6.0 * sigma / step).powi(2).ceil();
    (n as usize).clamp(2, most)
}

/// A seed for one look: the same commit and look always resample alike.
pub fn seed(id: &str, look: usize) -> u64 {
    // FNV-1a.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes().chain(look.to_le_bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64: a small, seedable generator (the resampling needs no more).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_at_either_end_is_placed_there() {
        let good = [100.0, 101.0, 99.5, 100.4, 100.2, 99.8];
        let bad = [121.0, 120.5, 121.3, 120.9, 121.2, 120.7];
        let like_good = position(&[100.1, 100.3], &good, &bad, 0.999, 1).unwrap();
        assert_eq!(like_good.place(), Place::Good, "{like_good:?}");
        assert!(like_good.estimate.abs() < 0.05, "{like_good:?}");
        let like_bad = position(&[121.1, 120.8], &good, &bad, 0.999, 1).unwrap();
        assert_eq!(like_bad.place(), Place::Bad, "{like_bad:?}");
        assert!((like_bad.estimate - 1.0).abs() < 0.05, "{like_bad:?}");
        // Halfway, or too scattered to say: undecided.
        let half = position(&[110.0, 110.5, 109.8], &good, &bad, 0.95, 1).unwrap();
        assert_eq!(half.place(), Place::Straddles, "{half:?}");
        let wide = position(&[100.0, 121.0, 100.5], &good, &bad, 0.95, 1).unwrap();
        assert_eq!(wide.place(), Place::Straddles, "{wide:?}");
        // The scale runs whichever way bad went.
        let down = position(&[100.2, 100.0], &bad, &good, 0.999, 1).unwrap();
        assert_eq!(down.place(), Place::Bad, "{down:?}");
        // Values at or below zero are placed on a plain scale.
        let zero = position(&[0.0, 1.0], &[0.0, 0.0, 1.0], &[10.0, 9.0, 11.0], 0.9, 1).unwrap();
        assert_eq!(zero.place(), Place::Good, "{zero:?}");
    }

    #[test]
    fn the_interval_holds_the_estimate_and_widens_with_confidence() {
        let good = [100.0, 104.0, 97.0, 101.0, 99.0, 103.0];
        let bad = [130.0, 126.0, 134.0, 129.0, 131.0, 127.0];
        let t = [105.0, 98.0, 110.0, 101.0];
        let p95 = position(&t, &good, &bad, 0.95, 7).unwrap();
        let p999 = position(&t, &good, &bad, 0.999, 7).unwrap();
        assert!(
            p95.low <= p95.estimate && p95.estimate <= p95.high,
            "{p95:?}"
        );
        assert!(
            p999.low <= p95.low && p999.high >= p95.high,
            "{p95:?} {p999:?}"
        );
        // Same seed, same interval.
        assert_eq!(position(&t, &good, &bad, 0.95, 7), Some(p95));
        assert_eq!(position(&t, &good, &good, 0.95, 7), None);
        assert_eq!(position(&[], &good, &bad, 0.95, 7), None);
    }

    #[test]
    fn large_steps_start_with_few_rounds_and_small_ones_with_more() {
        let good = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2];
        let big: Vec<f64> = good.iter().map(|g| g * 1.21).collect();
        let small: Vec<f64> = good.iter().map(|g| g * 1.01).collect();
        assert_eq!(first_rounds(&good, &big, 6), 2);
        assert_eq!(first_rounds(&good, &small, 6), 6);
        assert_eq!(first_rounds(&[], &big, 6), 6);
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
    }
}
