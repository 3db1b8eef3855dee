//! Where a series stepped: E-divisive means over the run medians, each change point kept only
//! when its permutation test is significant, told with the run (and commit) after the step.
//!
//! E-divisive costs O(n²) per shuffle of its permutation test, so a long history is not given
//! to it point by point: past [`EXACT_RUNS`] runs, consecutive runs are taken in blocks (each
//! block's median one point, at most [`EXACT_RUNS`] points in all), the change points are found
//! and tested on the blocks, and each is then placed on the run where the step happened inside
//! the two blocks either side of it. One test over the whole series, so a flat history still
//! shows a false change point with probability alpha, however long it is.

use super::series::{median, Change, Point};
use rigor_stats::{e_divisive, ChangePoint, ChangePointOptions};

/// The most points E-divisive is given: a history of up to this many runs is analysed run by
/// run; a longer one in blocks of runs.
pub const EXACT_RUNS: usize = 500;

/// The change points of a series of run medians. The seed is fixed, so the same history shows
/// the same change points every time it is asked.
pub fn find(points: &[Point]) -> Vec<Change> {
    let medians: Vec<f64> = points.iter().map(|p| p.median).collect();
    let options = ChangePointOptions {
        seed: 0x5eed,
        ..ChangePointOptions::default()
    };
    detect(&medians, |values| e_divisive(values, &options))
        .into_iter()
        .filter_map(|c| {
            let p = points.get(c.index)?;
            Some(Change {
                index: c.index,
                run: p.run,
                started_at: p.started_at.clone(),
                commit: p.commit.clone(),
                before: c.before_median,
                after: c.after_median,
                change_pct: c.change_pct,
                p_value: c.p_value,
            })
        })
        .collect()
}

/// The change points of `medians` (all finite) by `detector`, which is never given more than
/// [`EXACT_RUNS`] values: the series itself when it is that short, else its block medians.
fn detect(
    medians: &[f64],
    mut detector: impl FnMut(&[f64]) -> Vec<ChangePoint>,
) -> Vec<ChangePoint> {
    if medians.len() <= EXACT_RUNS {
        return detector(medians);
    }
    let block = medians.len().div_ceil(EXACT_RUNS);
    let blocks: Vec<&[f64]> = medians.chunks(block).collect();
    let coarse: Vec<f64> = blocks.iter().filter_map(|b| median(b)).collect();
    let found = detector(&coarse);
    // Each step lies between the middle of the block before it and the middle of its first
    // block (the one's median is still the old level, the other's already the new one).
    let mut placed: Vec<(usize, f64)> = Vec::with_capacity(found.len());
    for c in &found {
        let from = (c.index - 1) * block;
        let to = ((c.index + 1) * block).min(medians.len());
        let at = from + best_split(&medians[from..to]);
        if placed.last().is_none_or(|&(last, _)| at > last) {
            placed.push((at, c.p_value));
        }
    }
    describe(medians, &placed)
}

/// Where in `z` (at least two values) one level gives way to another: the split 1..len that
/// maximises the energy statistic of E-divisive between the two sides. O(len²).
fn best_split(z: &[f64]) -> usize {
    let len = z.len();
    let to_all = |p: usize, range: std::ops::Range<usize>| -> f64 {
        z[range].iter().map(|&v| (v - z[p]).abs()).sum()
    };
    // X = z[..tau], Y = z[tau..]; moving point tau-1 from Y to X.
    let (mut within_x, mut between) = (0.0, 0.0);
    let mut within_y: f64 = (0..len).map(|p| to_all(p, p + 1..len)).sum();
    let (mut best, mut best_q) = (1, f64::NEG_INFINITY);
    for tau in 1..len {
        let moved = tau - 1;
        let to_x = to_all(moved, 0..moved);
        let to_y = to_all(moved, tau..len);
        within_x += to_x;
        between += to_y - to_x;
        within_y -= to_y;
        let (n, m) = (tau as f64, (len - tau) as f64);
        let mean = |sum: f64, k: f64| {
            if k > 1.0 {
                sum / (k * (k - 1.0) / 2.0)
            } else {
                0.0
            }
        };
        let e = 2.0 * between / (n * m) - mean(within_x, n) - mean(within_y, m);
        let q = n * m / (n + m) * e;
        if q > best_q {
            (best, best_q) = (tau, q);
        }
    }
    best
}

/// The change points at `placed` (index, p-value) with the medians of the runs between each
/// and its neighbours, as E-divisive tells its own.
fn describe(medians: &[f64], placed: &[(usize, f64)]) -> Vec<ChangePoint> {
    let edges: Vec<usize> = std::iter::once(0)
        .chain(placed.iter().map(|p| p.0))
        .chain(std::iter::once(medians.len()))
        .collect();
    placed
        .iter()
        .enumerate()
        .map(|(k, &(index, p_value))| {
            let before = median(&medians[edges[k]..edges[k + 1]]).unwrap_or(f64::NAN);
            let after = median(&medians[edges[k + 1]..edges[k + 2]]).unwrap_or(f64::NAN);
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
                index,
                p_value,
                before_median: before,
                after_median: after,
                change_pct,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ChangePointOptions {
        ChangePointOptions {
            seed: 0x5eed,
            ..ChangePointOptions::default()
        }
    }

    /// `n` values around 1,000 (±1%, a fixed generator) times `1 + step` from each index in
    /// `at` on (the steps add up).
    fn series(n: usize, at: &[usize], step: f64, seed: u64) -> Vec<f64> {
        let mut state = seed;
        (0..n)
            .map(|i| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let noise = ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0;
                let steps = at.iter().filter(|&&a| i >= a).count() as i32;
                1_000.0 * (1.0 + step).powi(steps) * (1.0 + 0.01 * noise)
            })
            .collect()
    }

    #[test]
    fn a_short_history_is_analysed_run_by_run_as_before() {
        for (n, at) in [(60, vec![30]), (EXACT_RUNS, vec![123, 371])] {
            let values = series(n, &at, 0.05, 3);
            let mut given = 0;
            let found = detect(&values, |v| {
                given = v.len();
                e_divisive(v, &options())
            });
            assert_eq!(given, n);
            assert_eq!(found, e_divisive(&values, &options()));
            for step in at {
                assert!(found.iter().any(|c| c.index == step), "{found:?}");
            }
        }
    }

    #[test]
    fn a_long_history_finds_each_step_on_its_run_giving_the_detector_few_points() {
        let n = 10_000;
        let at = [3_217, 7_001];
        let values = series(n, &at, 0.05, 5);
        let mut calls = Vec::new();
        let found = detect(&values, |v| {
            calls.push(v.len());
            e_divisive(v, &options())
        });
        // One call, on no more points than a short history has: the cost no longer grows with
        // the square of the runs.
        assert_eq!(calls, vec![EXACT_RUNS]);
        let indices: Vec<usize> = found.iter().map(|c| c.index).collect();
        assert_eq!(indices, at);
        // The medians either side are those of the runs between the change points.
        let expected = [
            (median(&values[..3_217]), median(&values[3_217..7_001])),
            (median(&values[3_217..7_001]), median(&values[7_001..])),
        ];
        for (c, (before, after)) in found.iter().zip(expected) {
            assert_eq!(
                (Some(c.before_median), Some(c.after_median)),
                (before, after)
            );
            assert!((c.change_pct - 5.0).abs() < 0.5, "{c:?}");
            assert!(c.p_value <= 0.05, "{c:?}");
        }
    }

    #[test]
    fn a_long_flat_history_has_no_change_point() {
        let values = series(3_001, &[], 0.0, 9);
        assert_eq!(detect(&values, |v| e_divisive(v, &options())), Vec::new());
    }

    #[test]
    fn a_step_is_placed_where_the_level_changes() {
        let z = [1.0, 1.1, 0.9, 1.0, 5.0, 5.1, 4.9];
        assert_eq!(best_split(&z), 4);
        assert_eq!(best_split(&[1.0, 2.0]), 1);
    }
}
