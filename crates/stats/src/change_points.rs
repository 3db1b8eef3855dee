//! Change points in a series over time (one median per run): E-divisive means, the method of
//! Matteson & James (2014) that MongoDB's and Apache Otava's performance trackers use.
//!
//! The energy statistic compares two stretches of the series by their distances |x − y| alone,
//! so it sees any change of distribution (level, spread, shape) without assuming a normal one.
//! The best split of a segment is the (τ, κ) that maximises
//!
//! ```text
//! Q(τ, κ) = n·m/(n+m) · ( 2/(n·m) Σ|xᵢ − yⱼ| − 1/C(n,2) Σ|xᵢ − xₖ| − 1/C(m,2) Σ|yⱼ − yₖ| )
//! ```
//!
//! over X = the segment's points before τ and Y = its points from τ up to κ; τ becomes the
//! candidate. Splits are found one at a time (recursive bisection: the best candidate over every
//! current segment) and each must pass a permutation test before it is kept: the points of every
//! segment are shuffled within that segment, the best Q found again, and the candidate is kept
//! when p = (1 + #{shuffled Q ≥ observed Q}) / (1 + permutations) is at most `alpha`. The search
//! stops at the first candidate that fails. The shuffles come from a generator seeded by the
//! caller, so one series with one seed always gives the same points.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;

/// How sure the detector must be and how small a segment it may cut off. The defaults are the
/// customary ones (5% significance, 199 shuffles so the smallest p is 0.005, segments of at
/// least 3 runs so one odd run cannot stand alone as a "level").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointOptions {
    /// Significance level each change point's permutation test must reach (p ≤ alpha).
    pub alpha: f64,
    /// Shuffles per permutation test. With none nothing can be significant.
    pub permutations: usize,
    /// Fewest points on either side of a change point (0 counts as 1).
    pub min_segment: usize,
    /// Seed of the shuffles: the same series and seed give the same change points.
    pub seed: u64,
}

impl Default for ChangePointOptions {
    fn default() -> Self {
        ChangePointOptions {
            alpha: 0.05,
            permutations: 199,
            min_segment: 3,
            seed: 0,
        }
    }
}

/// One change point with what a reader needs to judge it: where the new level starts, how sure
/// the test is, and how big the step is between the neighbouring segments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangePoint {
    /// Index (in the series given) of the first point of the new segment.
    pub index: usize,
    /// The permutation test's p-value when this point was accepted.
    pub p_value: f64,
    /// Median of the segment before: from the previous change point (or the start) to here.
    pub before_median: f64,
    /// Median of the segment after: from here to the next change point (or the end).
    pub after_median: f64,
    /// `(after_median / before_median − 1) × 100`; NaN when `before_median` is 0 and
    /// `after_median` is not (a change from zero has no relative size).
    pub change_pct: f64,
}

/// The change points of `series`, sorted by index. Non-finite values (NaN, ±∞: a run that
/// measured nothing) are left out of the analysis, and indices still refer to `series`. A
/// series with fewer than `2 × min_segment` finite values has no change points.
pub fn e_divisive(series: &[f64], opts: &ChangePointOptions) -> Vec<ChangePoint> {
    let kept: Vec<usize> = (0..series.len())
        .filter(|&i| series[i].is_finite())
        .collect();
    let values: Vec<f64> = kept.iter().map(|&i| series[i]).collect();
    let splits = find_splits(&values, opts);
    describe(&values, &splits, &kept)
}

/// A split of the finite values: where the new segment starts and the p-value it passed with.
#[derive(Debug, Clone, Copy)]
struct Split {
    at: usize,
    p_value: f64,
}

/// The best split of one segment: its start τ (relative to the segment) and its Q.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub(crate) tau: usize,
    pub(crate) q: f64,
}

/// Recursive bisection: the best candidate over all current segments, kept while its
/// permutation test is significant. Sorted by position.
fn find_splits(values: &[f64], opts: &ChangePointOptions) -> Vec<Split> {
    let min = opts.min_segment.max(1);
    let mut bounds = vec![0, values.len()];
    let mut splits: Vec<Split> = Vec::new();
    let mut rng = StdRng::seed_from_u64(opts.seed);
    // The best candidate of each segment, bounds[k]..bounds[k + 1]; only the two halves of a
    // segment just split need a new search.
    let mut candidates: Vec<Option<Candidate>> = vec![best_split(values, min)];
    loop {
        let Some((segment, best)) = strongest(&candidates) else {
            break;
        };
        let Some(p_value) = significant_p(values, &bounds, best.q, min, opts, &mut rng) else {
            break;
        };
        let start = bounds[segment];
        let at = start + best.tau;
        let end = bounds[segment + 1];
        bounds.insert(segment + 1, at);
        candidates.splice(
            segment..=segment,
            [
                best_split(&values[start..at], min),
                best_split(&values[at..end], min),
            ],
        );
        splits.push(Split { at, p_value });
    }
    splits.sort_by_key(|s| s.at);
    splits
}

/// The segment whose candidate has the largest Q, and that candidate.
fn strongest(candidates: &[Option<Candidate>]) -> Option<(usize, Candidate)> {
    candidates
        .iter()
        .enumerate()
        .filter_map(|(k, c)| c.map(|c| (k, c)))
        .reduce(|a, b| if b.1.q > a.1.q { b } else { a })
}

/// The permutation test of a candidate with statistic `observed`: each shuffle permutes the
/// points within every segment and takes the best Q over all of them, as the candidate was
/// the best over all of them. `Some(p)` when p ≤ alpha; `None` as soon as so many shuffles
/// reached `observed` that it no longer can be.
fn significant_p(
    values: &[f64],
    bounds: &[usize],
    observed: f64,
    min: usize,
    opts: &ChangePointOptions,
    rng: &mut StdRng,
) -> Option<f64> {
    let total = (opts.permutations + 1) as f64;
    let mut shuffled = values.to_vec();
    let mut reached = 0usize;
    for _ in 0..opts.permutations {
        let mut best = f64::NEG_INFINITY;
        for w in bounds.windows(2) {
            let segment = &mut shuffled[w[0]..w[1]];
            segment.shuffle(rng);
            if let Some(c) = best_split(segment, min) {
                best = best.max(c.q);
            }
        }
        // The same arrangement summed in another order can differ in the last bits: count a
        // shuffle that ties the observed Q up to rounding as reaching it.
        if best >= observed - 1e-9 * observed.abs() {
            reached += 1;
            if (1 + reached) as f64 / total > opts.alpha {
                return None;
            }
        }
    }
    let p = (1 + reached) as f64 / total;
    (p <= opts.alpha).then_some(p)
}

/// The (τ, κ) maximising Q within `z`, each side at least `min` points; `None` when `z` is too
/// short to split. O(len²): the sums of distances are carried from one τ and κ to the next.
pub(crate) fn best_split(z: &[f64], min: usize) -> Option<Candidate> {
    let len = z.len();
    if len < 2 * min {
        return None;
    }
    // to_earlier[p] = Σ_{j<p} |z_j − z_p|; to_x[p] = Σ_{i<τ} |z_i − z_p| for the current τ.
    let to_earlier: Vec<f64> = (0..len)
        .map(|p| z[..p].iter().map(|&x| (x - z[p]).abs()).sum())
        .collect();
    let mut to_x = vec![0.0; len];
    let mut within_x = 0.0;
    let mut best: Option<Candidate> = None;
    for tau in 1..=len - min {
        let joined = z[tau - 1];
        within_x += to_earlier[tau - 1];
        for (t, &v) in to_x[tau..].iter_mut().zip(&z[tau..]) {
            *t += (joined - v).abs();
        }
        if tau < min {
            continue;
        }
        let (mut between, mut within_y) = (0.0, 0.0);
        for end in tau..len {
            // Point `end` joins Y: its distances to X, and to the Y points before it.
            between += to_x[end];
            within_y += to_earlier[end] - to_x[end];
            let ny = end + 1 - tau;
            if ny < min {
                continue;
            }
            let q = energy(tau, ny, between, within_x, within_y);
            // Ties (up to rounding) keep the earlier split, so scaling the series cannot move it.
            let better = match best {
                None => true,
                Some(b) => q - b.q > 1e-12 * b.q.abs(),
            };
            if better {
                best = Some(Candidate { tau, q });
            }
        }
    }
    best
}

/// Q of X (`nx` points, `within_x` = Σ over its pairs) against Y (`ny`, `within_y`), with
/// `between` = Σ over the cross pairs. A side of one point has no pairs and contributes 0.
fn energy(nx: usize, ny: usize, between: f64, within_x: f64, within_y: f64) -> f64 {
    let (n, m) = (nx as f64, ny as f64);
    let pairs = |k: f64| k * (k - 1.0) / 2.0;
    let mean_within = |sum: f64, k: f64| if k > 1.0 { sum / pairs(k) } else { 0.0 };
    let e = 2.0 * between / (n * m) - mean_within(within_x, n) - mean_within(within_y, m);
    n * m / (n + m) * e
}

/// The change points with their neighbouring segments' medians, indices mapped back from the
/// finite values (`kept[i]` is where value `i` sits in the caller's series).
fn describe(values: &[f64], splits: &[Split], kept: &[usize]) -> Vec<ChangePoint> {
    let edges: Vec<usize> = std::iter::once(0)
        .chain(splits.iter().map(|s| s.at))
        .chain(std::iter::once(values.len()))
        .collect();
    splits
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let before = median(&values[edges[k]..edges[k + 1]]);
            let after = median(&values[edges[k + 1]..edges[k + 2]]);
            let change_pct = if before == 0.0 {
                if after == 0.0 {
                    0.0
                } else {
                    f64::NAN
                }
            } else {
                (after / before - 1.0) * 100.0
            };
            ChangePoint {
                index: kept[s.at],
                p_value: s.p_value,
                before_median: before,
                after_median: after,
                change_pct,
            }
        })
        .collect()
}

/// Median of finite values (never empty here: every segment has at least one point).
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    crate::summary::median_of_sorted(&v)
}
