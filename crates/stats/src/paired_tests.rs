//! Checks of the paired comparison against scipy and against listing every sign pattern.

use crate::paired::sorted_walsh_averages;
use crate::test_support::{rel, Rng};
use crate::{can_ever_be_significant_paired, compare, compare_paired};

/// Pairs whose log ratios are `d` times ln 2: baseline 1, candidate 2^d. Powers of two keep
/// the ratios exact, so ln 4 and ln ¼ are exact negatives and tie in |r| as `d` says; a zero in
/// `d` is an identical pair.
fn pairs_with_log_ratios(d: &[f64]) -> (Vec<f64>, Vec<f64>) {
    (vec![1.0; d.len()], d.iter().map(|v| v.exp2()).collect())
}

#[test]
fn p_values_match_scipy_with_ties_and_zeros() {
    // scipy 1.17.1: scipy.stats.wilcoxon(d, zero_method='pratt',
    //   method=PermutationMethod(n_resamples=numpy.inf)).pvalue, the exact permutation
    // distribution on the midranks. Where d has no zeros the 'wilcox' method gives the same;
    // on the fourth case it gives 0.1015625, the Pratt handling used here 0.1171875.
    let cases: &[(&[f64], f64)] = &[
        (&[1.5, -0.5, 2.0, 3.1, 0.7, -1.2, 2.2, 1.9], 0.0546875),
        (
            &[0.8, 1.1, -0.3, 2.4, 1.7, 0.9, 1.3, -0.6, 2.9, 1.8],
            0.009765625,
        ),
        (&[1., 2., 2., 3., -1., 4., 4., 5.], 0.0234375),
        (&[0., 1., 2., 2., -2., 3., 0., 4., 5., -1.], 0.1171875),
        (&[0., 0., 1., -1., 2., 2., 3., 3., 3.], 0.046875),
    ];
    for (d, want) in cases {
        let (b, c) = pairs_with_log_ratios(d);
        let got = compare_paired(&b, &c, 0.95).unwrap().p_value;
        assert!(rel(got, *want) < 1e-12, "{d:?}: {got} vs {want}");
    }
}

#[test]
fn large_samples_use_the_normal_approximation_like_scipy() {
    // scipy.stats.wilcoxon(d, zero_method='pratt', correction=True, method='approx').pvalue
    let d: Vec<f64> = (1..=60).map(|i| i as f64 - 30.5 + 0.25).collect();
    let (b, c) = pairs_with_log_ratios(&d);
    let p = compare_paired(&b, &c, 0.95).unwrap().p_value;
    assert!(rel(p, 0.9149926751975315) < 1e-9, "{p}");
    // With 5 zeros and ties: d = ((7i) mod 11) − 4 for i = 0..60.
    let d: Vec<f64> = (0..60).map(|i| ((i * 7) % 11) as f64 - 4.0).collect();
    let (b, c) = pairs_with_log_ratios(&d);
    let p = compare_paired(&b, &c, 0.95).unwrap().p_value;
    assert!(rel(p, 0.025673502532287656) < 1e-6, "{p}");
}

/// The set of shifts θ the two-sided signed-rank test at `confidence` accepts, found by listing
/// all 2^n sign patterns of the ranks of |r − θ| at a point strictly between each pair of
/// neighbouring Walsh averages (where no |r_i − θ| ties or is zero). Returns the interval's
/// ends: the Walsh averages that bound the accepted points.
fn brute_force_interval(r: &[f64], confidence: f64) -> (f64, f64) {
    let n = r.len();
    let walsh = sorted_walsh_averages(r);
    let half_alpha = (1.0 - confidence) / 2.0;
    let accepts = |theta: f64| {
        let d: Vec<f64> = r.iter().map(|v| v - theta).collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| d[a].abs().total_cmp(&d[b].abs()));
        let mut rank = vec![0u32; n];
        for (pos, &i) in order.iter().enumerate() {
            rank[i] = pos as u32 + 1;
        }
        let t_obs: u32 = (0..n).filter(|&i| d[i] > 0.0).map(|i| rank[i]).sum();
        let (mut le, mut ge) = (0u32, 0u32);
        for mask in 0u32..(1 << n) {
            let t: u32 = (0..n)
                .filter(|&i| mask & (1 << i) != 0)
                .map(|i| rank[i])
                .sum();
            le += (t <= t_obs) as u32;
            ge += (t >= t_obs) as u32;
        }
        let total = (1u32 << n) as f64;
        le as f64 / total > half_alpha && ge as f64 / total > half_alpha
    };
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for pair in walsh.windows(2) {
        if pair[0] == pair[1] {
            continue;
        }
        if accepts((pair[0] + pair[1]) / 2.0) {
            lo = lo.min(pair[0]);
            hi = hi.max(pair[1]);
        }
    }
    (lo, hi)
}

#[test]
fn interval_is_the_inverted_test_by_listing_every_sign_pattern() {
    let mut rng = Rng::new(21);
    for trial in 0..40 {
        let n = 6 + trial % 7; // 6..=12
        let r: Vec<f64> = (0..n).map(|_| 0.02 * rng.normal() + 0.01).collect();
        let base = vec![1000.0; n];
        let cand: Vec<f64> = r.iter().map(|v| 1000.0 * v.exp()).collect();
        // The log ratios as compare_paired will see them (ln of the ratio, not r exactly).
        let seen: Vec<f64> = base.iter().zip(&cand).map(|(b, c)| (c / b).ln()).collect();
        for confidence in [0.9, 0.95] {
            let c = compare_paired(&base, &cand, confidence).unwrap();
            let (lo, hi) = brute_force_interval(&seen, confidence);
            let to_pct = |v: f64| v.exp_m1() * 100.0;
            assert!(
                rel(c.ci_low_pct, to_pct(lo)) < 1e-9 && rel(c.ci_high_pct, to_pct(hi)) < 1e-9,
                "n={n} {confidence}: [{}, {}] vs [{}, {}]",
                c.ci_low_pct,
                c.ci_high_pct,
                to_pct(lo),
                to_pct(hi)
            );
        }
        // Hodges–Lehmann: the median of every (r_i + r_j)/2, i ≤ j, listed by two loops.
        let mut w = Vec::new();
        for i in 0..n {
            for j in i..n {
                w.push((seen[i] + seen[j]) / 2.0);
            }
        }
        w.sort_by(f64::total_cmp);
        let m = w.len();
        let hl = if m % 2 == 1 {
            w[m / 2]
        } else {
            (w[m / 2 - 1] + w[m / 2]) / 2.0
        };
        let c = compare_paired(&base, &cand, 0.95).unwrap();
        assert!(rel(c.change_pct, hl.exp_m1() * 100.0) < 1e-9);
    }
}

#[test]
fn medians_and_skipped_pairs() {
    // Pairs 3 (zero), 5 (NaN) and 6 (no partner) are skipped; usable: (100,110), (200,190),
    // (50,60), (80,80).
    let base = [100.0, 200.0, 50.0, 0.0, 80.0, f64::NAN, 70.0];
    let cand = [110.0, 190.0, 60.0, 10.0, 80.0, 10.0];
    let c = compare_paired(&base, &cand, 0.95).unwrap();
    assert_eq!(c.baseline_median, 90.0); // median of 50, 80, 100, 200
    assert_eq!(c.candidate_median, 95.0); // median of 60, 80, 110, 190
                                          // Within-round changes +10%, −5%, +20%, 0: their median is (0 + 10%)/2.
    assert!(rel(c.median_change_pct, 5.0) < 1e-12);
    // Four pairs can never reach 95%: an unbounded interval, as compare() gives.
    assert!(c.ci_low_pct == f64::NEG_INFINITY && c.ci_high_pct == f64::INFINITY);
    assert!(compare_paired(&[1.0], &[2.0], 0.95).is_none());
    assert!(compare_paired(&[1.0, 0.0], &[2.0, 3.0], 0.95).is_none());
    assert!(compare_paired(&[1.0, 2.0], &[2.0, 3.0], 1.0).is_none());
    // Every pair identical: no change, p = 1.
    let same = compare_paired(&[5.0; 8], &[5.0; 8], 0.95).unwrap();
    assert_eq!(
        (
            same.change_pct,
            same.ci_low_pct,
            same.ci_high_pct,
            same.p_value
        ),
        (0.0, 0.0, 0.0, 1.0)
    );
}

#[test]
fn significance_reachability() {
    // 2/2^5 = 0.0625 > 0.05, 2/2^6 = 0.03125; at 99%: 2/2^7 = 0.0156 > 0.01, 2/2^8 = 0.0078.
    assert!(!can_ever_be_significant_paired(5, 0.95));
    assert!(can_ever_be_significant_paired(6, 0.95));
    assert!(!can_ever_be_significant_paired(7, 0.99));
    assert!(can_ever_be_significant_paired(8, 0.99));
    assert!(!can_ever_be_significant_paired(0, 0.95));
    assert!(!can_ever_be_significant_paired(100, 1.0));
    // Six pairs all up: the interval is bounded and excludes zero; five are never enough.
    let up: Vec<f64> = (0..6).map(|i| 101.0 + i as f64).collect();
    let c = compare_paired(&[100.0; 6], &up, 0.95).unwrap();
    assert!(c.ci_low_pct > 0.0 && c.ci_high_pct.is_finite());
    assert!(rel(c.p_value, 0.03125) < 1e-12);
    let c = compare_paired(&[100.0; 5], &up[..5], 0.95).unwrap();
    assert!(c.ci_low_pct.is_infinite());
}

#[test]
fn pairing_cancels_drift_the_unpaired_test_carries() {
    // Each round's machine speed drifts by ±10% (shared by both sides); the candidate is 3%
    // slower with 0.5% own noise. Paired: a tight interval around −3%; unpaired: wide.
    let mut rng = Rng::new(5);
    let mut base = Vec::new();
    let mut cand = Vec::new();
    for _ in 0..10 {
        let round = 1000.0 * (0.1 * rng.normal()).exp();
        base.push(round * (0.005 * rng.normal()).exp());
        cand.push(round * 0.97 * (0.005 * rng.normal()).exp());
    }
    let p = compare_paired(&base, &cand, 0.95).unwrap();
    let u = compare(&base, &cand, 0.95).unwrap();
    assert!(p.ci_low_pct < -3.0 && p.ci_high_pct > -3.0, "{p:?}");
    assert!(p.ci_high_pct < 0.0, "{p:?}");
    assert!(
        u.ci_high_pct - u.ci_low_pct > 5.0 * (p.ci_high_pct - p.ci_low_pct),
        "{u:?}"
    );
}

#[test]
fn the_median_change_of_an_even_number_of_rounds_is_the_changes_median_not_the_logs() {
    // Changes −50%, −40%, +45%, +60%: the middle two average +2.5%, where exp of the mean of
    // their logs is √(0.6 × 1.45) − 1 = −6.7%, the opposite sign.
    let c = compare_paired(&[100.0; 4], &[50.0, 60.0, 145.0, 160.0], 0.95).unwrap();
    assert!(
        rel(c.median_change_pct, 2.5) < 1e-12,
        "{}",
        c.median_change_pct
    );
    // With an odd number the middle change is the same either way.
    let c = compare_paired(&[100.0; 3], &[60.0, 145.0, 160.0], 0.95).unwrap();
    assert!(rel(c.median_change_pct, 45.0) < 1e-12);
}
