//! E-divisive change points on synthetic series: steps are found where they are, flat noise
//! gives none, the answer does not depend on units or on non-finite runs, the O(n²) search
//! agrees with the formula summed directly, and false-alarm and detection rates are what
//! the significance level promises.

use crate::change_points::best_split;
use crate::test_support::{rel, Rng};
use crate::{e_divisive, ChangePoint, ChangePointOptions};

/// `n` points around 1000 with relative noise `cv`, times `1 + step` from each step's index on.
fn series(seed: u64, n: usize, cv: f64, steps: &[(usize, f64)]) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let level: f64 = steps
                .iter()
                .filter(|(at, _)| i >= *at)
                .map(|(_, s)| 1.0 + s)
                .product();
            1000.0 * level * (1.0 + cv * rng.normal())
        })
        .collect()
}

fn detect(xs: &[f64]) -> Vec<ChangePoint> {
    e_divisive(xs, &ChangePointOptions::default())
}

#[test]
fn a_five_percent_step_at_30_of_60_is_one_change_point_near_30() {
    for (seed, cv) in [(11, 0.01), (12, 0.015), (13, 0.02)] {
        let xs = series(seed, 60, cv, &[(30, 0.05)]);
        let found = detect(&xs);
        assert_eq!(found.len(), 1, "cv {cv}: {found:?}");
        let cp = &found[0];
        assert!(cp.index.abs_diff(30) <= 2, "cv {cv}: {cp:?}");
        assert!(cp.p_value <= 0.05 && cp.p_value >= 1.0 / 200.0, "{cp:?}");
        assert!(rel(cp.before_median, 1000.0) < 0.01, "{cp:?}");
        assert!(rel(cp.after_median, 1050.0) < 0.01, "{cp:?}");
        assert!((cp.change_pct - 5.0).abs() < 1.5, "{cp:?}");
        let expected = (cp.after_median / cp.before_median - 1.0) * 100.0;
        assert!((cp.change_pct - expected).abs() < 1e-12, "{cp:?}");
    }
}

#[test]
fn flat_noisy_series_have_no_change_points() {
    for (seed, cv) in [(21, 0.01), (22, 0.02), (23, 0.05)] {
        let xs = series(seed, 60, cv, &[]);
        assert_eq!(detect(&xs), vec![], "cv {cv}");
    }
    assert_eq!(detect(&[1000.0; 60]), vec![], "a constant series");
}

#[test]
fn two_steps_are_two_change_points_with_their_neighbouring_medians() {
    let xs = series(31, 90, 0.01, &[(30, 0.05), (60, -0.08)]);
    let found = detect(&xs);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].index.abs_diff(30) <= 2, "{found:?}");
    assert!(found[1].index.abs_diff(60) <= 2, "{found:?}");
    // Each median is of the segment between adjacent change points.
    let median = |a: usize, b: usize| {
        let mut v = xs[a..b].to_vec();
        v.sort_by(f64::total_cmp);
        let k = v.len();
        if k % 2 == 1 {
            v[k / 2]
        } else {
            (v[k / 2 - 1] + v[k / 2]) / 2.0
        }
    };
    let (i, j) = (found[0].index, found[1].index);
    assert_eq!(found[0].before_median, median(0, i));
    assert_eq!(found[0].after_median, median(i, j));
    assert_eq!(found[1].before_median, median(i, j));
    assert_eq!(found[1].after_median, median(j, 90));
    assert!((found[1].change_pct + 8.0).abs() < 1.5, "{found:?}");
}

#[test]
fn units_do_not_matter() {
    for (seed, steps) in [(41, vec![(30, 0.05)]), (42, vec![]), (43, vec![(20, 0.03)])] {
        let xs = series(seed, 60, 0.015, &steps);
        let big: Vec<f64> = xs.iter().map(|x| x * 1e6).collect();
        let small: Vec<f64> = xs.iter().map(|x| x * 1e-6).collect();
        let (a, b, c) = (detect(&xs), detect(&big), detect(&small));
        let where_and_p = |v: &[ChangePoint]| -> Vec<(usize, f64)> {
            v.iter().map(|c| (c.index, c.p_value)).collect()
        };
        assert_eq!(where_and_p(&a), where_and_p(&b), "{steps:?}");
        assert_eq!(where_and_p(&a), where_and_p(&c), "{steps:?}");
        for (x, y) in a.iter().zip(&b) {
            assert!(rel(y.before_median, x.before_median * 1e6) < 1e-12);
            assert!((x.change_pct - y.change_pct).abs() < 1e-9);
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_answer() {
    let xs = series(51, 60, 0.02, &[(25, 0.04)]);
    let opts = ChangePointOptions {
        seed: 7,
        ..Default::default()
    };
    assert_eq!(e_divisive(&xs, &opts), e_divisive(&xs, &opts));
    // Another seed draws other shuffles; a clear step is found all the same.
    let other = e_divisive(&xs, &ChangePointOptions { seed: 8, ..opts });
    assert_eq!(
        other.iter().map(|c| c.index).collect::<Vec<_>>(),
        e_divisive(&xs, &opts)
            .iter()
            .map(|c| c.index)
            .collect::<Vec<_>>()
    );
}

#[test]
fn non_finite_runs_are_left_out_and_indices_still_point_into_the_series() {
    let clean = series(61, 60, 0.01, &[(30, 0.05)]);
    let mut holed = clean.clone();
    holed[3] = f64::NAN;
    holed[10] = f64::INFINITY;
    holed[45] = f64::NEG_INFINITY;
    let found = detect(&holed);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].index.abs_diff(30) <= 2, "{found:?}");
    assert!(holed[found[0].index].is_finite());
    assert!(found[0].before_median.is_finite() && found[0].after_median.is_finite());
    // The same points as the series with the holes removed, shifted back by the two before.
    let removed: Vec<f64> = holed.iter().copied().filter(|x| x.is_finite()).collect();
    let without = detect(&removed);
    assert_eq!(without.len(), 1);
    assert_eq!(found[0].index, without[0].index + 2);
    assert_eq!(found[0].p_value, without[0].p_value);
    assert_eq!(detect(&[f64::NAN; 40]), vec![]);
}

#[test]
fn too_short_series_and_degenerate_options_give_nothing() {
    assert_eq!(detect(&[]), vec![]);
    assert_eq!(detect(&[1.0, 2.0, 3.0, 10.0, 11.0]), vec![], "5 < 2 × 3");
    let step = series(71, 40, 0.01, &[(20, 0.10)]);
    let none = ChangePointOptions {
        permutations: 0,
        ..Default::default()
    };
    assert_eq!(e_divisive(&step, &none), vec![], "no shuffles, no evidence");
    let zero = ChangePointOptions {
        min_segment: 0,
        ..Default::default()
    };
    let found = e_divisive(&step, &zero);
    assert!(found.iter().any(|c| c.index.abs_diff(20) <= 2), "{found:?}");
}

#[test]
fn a_change_from_zero_has_no_percentage() {
    let mut xs = vec![0.0; 20];
    xs.extend([5.0; 20]);
    let found = detect(&xs);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].index, 20);
    assert_eq!((found[0].before_median, found[0].after_median), (0.0, 5.0));
    assert!(found[0].change_pct.is_nan());
}

/// Q(τ, κ) summed straight from its definition, maximised over every (τ, κ).
fn brute_force(z: &[f64], min: usize) -> Option<(usize, f64)> {
    let d = |a: &[f64], b: &[f64]| -> f64 {
        a.iter()
            .map(|x| b.iter().map(|y| (x - y).abs()).sum::<f64>())
            .sum()
    };
    let mut best: Option<(usize, f64)> = None;
    for tau in min..=z.len().saturating_sub(min) {
        for kappa in tau + min..=z.len() {
            let (x, y) = (&z[..tau], &z[tau..kappa]);
            let (n, m) = (x.len() as f64, y.len() as f64);
            let within = |s: &[f64], k: f64| {
                if k > 1.0 {
                    d(s, s) / (k * (k - 1.0))
                } else {
                    0.0
                }
            };
            let e = 2.0 * d(x, y) / (n * m) - within(x, n) - within(y, m);
            let q = n * m / (n + m) * e;
            let better = match best {
                None => true,
                Some((_, b)) => q > b,
            };
            if better {
                best = Some((tau, q));
            }
        }
    }
    best
}

#[test]
fn the_quadratic_search_matches_the_formula_summed_directly() {
    let mut rng = Rng::new(81);
    for len in [2, 3, 6, 7, 12, 25] {
        for min in [1, 2, 3] {
            let z: Vec<f64> = (0..len).map(|_| rng.normal() * 10.0).collect();
            let fast = best_split(&z, min).map(|c| (c.tau, c.q));
            let slow = brute_force(&z, min);
            match (fast, slow) {
                (None, None) => assert!(len < 2 * min),
                (Some((t1, q1)), Some((t2, q2))) => {
                    assert_eq!(t1, t2, "len {len} min {min}");
                    assert!((q1 - q2).abs() <= 1e-9 * q2.abs().max(1.0), "{q1} vs {q2}");
                }
                other => panic!("len {len} min {min}: {other:?}"),
            }
        }
    }
}

/// How many of `trials` series (60 points, noise `cv`, `steps`) `hit` accepts.
fn count(
    seed: u64,
    trials: usize,
    cv: f64,
    steps: &[(usize, f64)],
    hit: fn(&[ChangePoint]) -> bool,
) -> usize {
    (0..trials as u64)
        .filter(|t| hit(&detect(&series(seed * 10_000 + t, 60, cv, steps))))
        .count()
}

#[test]
fn false_alarms_stay_near_alpha_and_five_percent_steps_are_found() {
    // At alpha 0.05 about 10 of 200 flat series get a (false) change point; 20 would be twice
    // the promised rate.
    let alarms = count(91, 200, 0.01, &[], |found| !found.is_empty());
    eprintln!("flat cv 1%: change points in {alarms} of 200 series");
    assert!(alarms <= 20, "{alarms}");
    let detected = count(92, 200, 0.01, &[(30, 0.05)], |found| {
        found.iter().any(|c| c.index.abs_diff(30) <= 2)
    });
    eprintln!("5% step at cv 1%: found within ±2 of 30 in {detected} of 200 series");
    assert!(detected >= 180, "{detected}");
}

/// Whether two permutation p-values from `n` shuffles each could be estimates of one p: within
/// four standard errors of their difference, plus a shuffle's worth of rounding.
fn close_p(ours: f64, reference: f64, n: usize) -> bool {
    let p = reference.max(1.0 / (n + 1) as f64);
    let se = (2.0 * p * (1.0 - p) / (n + 1) as f64).sqrt();
    (ours - reference).abs() <= 4.0 * se + 2.0 / (n + 1) as f64
}

#[test]
fn change_points_match_apache_otavas_e_divisive_on_the_reference_series() {
    // scripts/change-point-reference ran Otava's Matteson & James detector (energy statistic,
    // permutation test) on these series and wrote what it found.
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/change_points_reference.json")).unwrap();
    let opts = ChangePointOptions {
        alpha: doc["alpha"].as_f64().unwrap(),
        permutations: doc["permutations"].as_u64().unwrap() as usize,
        // Otava lets a side be a single point.
        min_segment: 1,
        seed: 5,
    };
    let series = doc["series"].as_array().unwrap();
    assert!(series.len() >= 10);
    for case in series {
        let name = case["name"].as_str().unwrap();
        let values: Vec<f64> = case["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let ours = e_divisive(&values, &opts);
        let theirs = case["otava"].as_array().unwrap();
        eprintln!(
            "{name}: ours {:?}, otava {:?}, mongodb {}",
            ours.iter()
                .map(|c| (c.index, c.p_value))
                .collect::<Vec<_>>(),
            theirs
                .iter()
                .map(|c| (c["index"].as_u64().unwrap(), c["p_value"].as_f64().unwrap()))
                .collect::<Vec<_>>(),
            case["mongodb"]
        );
        let indices: Vec<u64> = ours.iter().map(|c| c.index as u64).collect();
        let expected: Vec<u64> = theirs
            .iter()
            .map(|c| c["index"].as_u64().unwrap())
            .collect();
        assert_eq!(indices, expected, "{name}");
        for (c, t) in ours.iter().zip(theirs) {
            let p = t["p_value"].as_f64().unwrap();
            assert!(
                close_p(c.p_value, p, opts.permutations),
                "{name}: {c:?} vs {t}"
            );
        }
        // The default segments of three points agree wherever no side is shorter.
        if expected
            .iter()
            .all(|&i| i >= 3 && i as usize <= values.len() - 3)
        {
            let default = e_divisive(&values, &ChangePointOptions::default());
            let at: Vec<u64> = default.iter().map(|c| c.index as u64).collect();
            assert_eq!(at, expected, "{name} with the default options");
        }
    }
}
