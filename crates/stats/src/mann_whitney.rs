//! The Mann–Whitney U test: is one side stochastically larger than the other?
//! Rank-based, so it needs no normality and shrugs off the odd slow iteration.
//! The null distribution of U is also what sizes the Hodges–Lehmann interval, so
//! both live on the same exact counts when they are cheap to compute.

use crate::normal::{normal_isf, normal_sf};
use crate::tied_exact::tied_exact_p;

/// Null distribution of U for sample sizes `m` and `n` (no ties): `counts[u]` is the
/// number of the C(m+n, m) equally likely rank arrangements with U = u. `None` when
/// exact counting is too big (then callers use the normal approximation).
pub(crate) fn u_counts(m: usize, n: usize) -> Option<Vec<i128>> {
    let (m, n) = if m <= n { (m, n) } else { (n, m) };
    if m == 0 {
        return None;
    }
    // Must fit in i128 (C(120,60) ≈ 9.7e34 does; 1e36 leaves room for the
    // intermediate ±2x), and stay cheap: the loop below costs about m * m * n steps.
    if ln_choose(m + n, m) > 36.0 * std::f64::consts::LN_10
        || (m as u128) * (m as u128) * (n as u128) > 5_000_000
    {
        return None;
    }
    // Coefficients of the Gaussian binomial [m+n choose m]_q, built as
    // prod_{i=1..m} (1 - q^{n+i}) / (1 - q^i).
    let mut c = vec![0i128; m * n + m + 2];
    c[0] = 1;
    let mut deg = 0usize;
    for i in 1..=m {
        let s = n + i;
        let top = deg + s;
        for u in (s..=top).rev() {
            c[u] -= c[u - s];
        }
        for u in i..=top {
            c[u] += c[u - i];
        }
        deg = i * n;
    }
    c.truncate(m * n + 1);
    Some(c)
}

/// ln C(n, k).
pub(crate) fn ln_choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (1..=k).map(|i| ((n - k + i) as f64 / i as f64).ln()).sum()
}

/// Largest k ≥ 1 with P(U ≤ k−1) ≤ (1 − confidence)/2 under the null, i.e. the
/// interval [D(k), D(mn+1−k)] of the sorted pairwise differences has at least the
/// requested coverage. `None` when even k = 1 falls short (n too small).
pub(crate) fn hl_critical_k(m: usize, n: usize, confidence: f64) -> Option<usize> {
    if m == 0 || n == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let half_alpha = (1.0 - confidence) / 2.0;
    let tol = 1e-12;
    if let Some(c) = u_counts(m, n) {
        let total: i128 = c.iter().sum();
        let mut cum: i128 = 0;
        let mut k = 0;
        // P(U <= j) for j = 0, 1, ...; k = (largest j passing) + 1.
        for (j, &cnt) in c.iter().enumerate().take((m * n).div_ceil(2)) {
            cum += cnt;
            if cum as f64 / total as f64 <= half_alpha * (1.0 + tol) {
                k = j + 1;
            } else {
                break;
            }
        }
        return (k >= 1).then_some(k);
    }
    // Normal approximation with continuity correction:
    // P(U <= k-1) ≈ Φ((k - 0.5 - mn/2) / σ) ≤ α/2.
    let mn = (m * n) as f64;
    let sigma = (mn * (m + n + 1) as f64 / 12.0).sqrt();
    let k = (mn / 2.0 + 0.5 - normal_isf(half_alpha) * sigma).floor();
    (k >= 1.0).then_some((k as usize).min((m * n).div_ceil(2)))
}

/// Two-sided Mann–Whitney U p-value for "x and y come from the same distribution".
/// Exact whenever the null distribution is cheap to count: without ties from the classic
/// recurrence, with ties from the permutation distribution of the midrank sum (small samples,
/// where the normal approximation is 20–50% off). Otherwise the normal approximation with tie
/// correction and continuity correction (as `scipy.stats.mannwhitneyu(method='asymptotic')`).
/// NaNs are dropped; `None` when a side is empty.
pub fn mann_whitney_p(x: &[f64], y: &[f64]) -> Option<f64> {
    let x: Vec<f64> = x.iter().copied().filter(|v| !v.is_nan()).collect();
    let y: Vec<f64> = y.iter().copied().filter(|v| !v.is_nan()).collect();
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    // Midranks over the pooled sample.
    let mut pooled: Vec<(f64, bool)> = x
        .iter()
        .map(|&v| (v, true))
        .chain(y.iter().map(|&v| (v, false)))
        .collect();
    pooled.sort_by(|a, b| a.0.total_cmp(&b.0));
    let big_n = pooled.len();
    let mut rank_sum_x = 0.0;
    let mut tie_term = 0.0; // sum over tie groups of t^3 - t
    let mut doubled_ranks = Vec::with_capacity(big_n);
    let mut i = 0;
    while i < big_n {
        let mut j = i;
        while j + 1 < big_n && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let midrank = (i + j) as f64 / 2.0 + 1.0;
        rank_sum_x += midrank * pooled[i..=j].iter().filter(|p| p.1).count() as f64;
        tie_term += t * t * t - t;
        doubled_ranks.extend(std::iter::repeat_n((i + j + 2) as u64, j - i + 1));
        i = j + 1;
    }
    let mn = (n1 * n2) as f64;
    let u1 = rank_sum_x - (n1 * (n1 + 1)) as f64 / 2.0;
    let u_max = u1.max(mn - u1);

    if tie_term == 0.0 {
        if let Some(c) = u_counts(n1, n2) {
            // P(U >= u_max) = P(U <= mn - u_max) by symmetry.
            let u_min = (mn - u_max).round() as usize;
            let total: i128 = c.iter().sum();
            let tail: i128 = c[..=u_min].iter().sum();
            return Some((2.0 * tail as f64 / total as f64).min(1.0));
        }
    } else {
        let in_first: Vec<bool> = pooled.iter().map(|p| p.1).collect();
        if let Some(p) = tied_exact_p(&doubled_ranks, &in_first) {
            return Some(p);
        }
    }
    let nf = big_n as f64;
    let var = mn / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return Some(1.0); // every value tied: no evidence of any difference
    }
    let z = (u_max - mn / 2.0 - 0.5) / var.sqrt();
    Some((2.0 * normal_sf(z)).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::rel;

    #[test]
    fn exact_counts() {
        // m = n = 5: C(10,5) = 252 arrangements; P(U<=0..3) counts 1,1,2,3 (cum 1,2,4,7),
        // e.g. scipy.stats.mannwhitneyu([1,2,3,4,5],[6,7,8,9,10]) exact p = 2/252.
        let c = u_counts(5, 5).unwrap();
        assert_eq!(c.len(), 26);
        assert_eq!(c.iter().sum::<i128>(), 252);
        assert_eq!(&c[..4], &[1, 1, 2, 3]);
        // symmetric
        for u in 0..=25 {
            assert_eq!(c[u], c[25 - u]);
        }
        // unequal sizes and an i128-sized case: C(100, 50) = 100891344545564193334812497256
        assert_eq!(u_counts(3, 7).unwrap().iter().sum::<i128>(), 120);
        let big = u_counts(50, 50).unwrap();
        assert_eq!(big.iter().sum::<i128>(), 100891344545564193334812497256);
        assert!(big.iter().all(|&v| v >= 0));
    }

    #[test]
    fn exact_p_values() {
        // scipy.stats.mannwhitneyu([1,2,3,4,5], [6,7,8,9,10], method='exact').pvalue = 0.007936507936507936
        let p = mann_whitney_p(&[1., 2., 3., 4., 5.], &[6., 7., 8., 9., 10.]).unwrap();
        assert!(rel(p, 0.007936507936507936) < 1e-12);
        // scipy.stats.mannwhitneyu([1.1,2.3,3.8,4.2,6.9,7.7], [3.1,5.5,8.4,9.2,10.1], method='exact').pvalue = 0.12554112554112554
        let p =
            mann_whitney_p(&[1.1, 2.3, 3.8, 4.2, 6.9, 7.7], &[3.1, 5.5, 8.4, 9.2, 10.1]).unwrap();
        assert!(rel(p, 0.12554112554112554) < 1e-12);
        // identical order: p = 1 (clipped)
        let p = mann_whitney_p(&[1., 4.], &[2., 3.]).unwrap();
        assert_eq!(p, 1.0);
    }

    /// Reference: the exact permutation distribution of |U − mn/2| with midranks, from
    /// `scipy.stats.permutation_test((x, y), stat, permutation_type='independent',
    /// alternative='greater', n_resamples=numpy.inf)` with
    /// `stat = |rankdata(xy)[:n1].sum() − n1(n1+1)/2 − n1·n2/2|` (scipy 1.17.1). The second
    /// figure in each comment is what the normal approximation
    /// (`scipy.stats.mannwhitneyu(method='asymptotic')`) gave: 20–35% off.
    #[test]
    fn exact_p_values_with_ties_at_small_n() {
        let cases: &[(&[f64], &[f64], f64)] = &[
            // asymptotic 0.043219587173790874
            (
                &[10., 11., 11., 12., 13.],
                &[12., 13., 13., 14., 15.],
                0.05555555555555555,
            ),
            // asymptotic 0.025496068631499585
            (
                &[1., 2., 2., 3., 4., 5., 5., 6.],
                &[3., 4., 5., 5., 6., 7., 8., 8., 9.],
                0.021349238996297818,
            ),
            // error counts; asymptotic 0.08266225205671854
            (
                &[0., 0., 1., 0., 2.],
                &[1., 2., 2., 3., 1.],
                0.11904761904761904,
            ),
            // unequal sizes, asymmetric null; asymptotic 0.1399962843155412
            (&[5., 5., 5., 6.], &[5., 6., 6., 6., 7.], 0.1746031746031746),
            // timings at a clock's resolution; asymptotic 0.05241162867102868
            (
                &[26.1, 26.1, 26.5, 27.0, 26.5],
                &[26.5, 27.0, 27.0, 27.3, 27.3],
                0.07936507936507936,
            ),
        ];
        for (x, y, want) in cases {
            let p = mann_whitney_p(x, y).unwrap();
            assert!(rel(p, *want) < 1e-12, "{x:?} {y:?}: {p} vs {want}");
            // Swapping the sides changes nothing in a two-sided test.
            let q = mann_whitney_p(y, x).unwrap();
            assert!(rel(q, *want) < 1e-12, "{y:?} {x:?}: {q} vs {want}");
        }
        // all tied: no evidence of any difference
        assert_eq!(mann_whitney_p(&[2., 2.], &[2., 2., 2.]), Some(1.0));
    }

    #[test]
    fn large_samples_with_ties_use_the_corrected_normal_approximation() {
        // x = [i // 2 for i in range(25)], y = x + 3: 50 values, beyond exact counting.
        // scipy.stats.mannwhitneyu(x, y, method='asymptotic').pvalue = 0.010839321343599719
        let x: Vec<f64> = (0..25).map(|i| (i / 2) as f64).collect();
        let y: Vec<f64> = x.iter().map(|v| v + 3.0).collect();
        let p = mann_whitney_p(&x, &y).unwrap();
        assert!(rel(p, 0.010839321343599719) < 1e-9, "{p}");
    }

    #[test]
    fn large_samples_use_normal_approximation() {
        // x = 0..80, y = 0.5+40..120 (no ties; too big for exact counting)
        // scipy.stats.mannwhitneyu(x, y, method='asymptotic').pvalue = 1.4959268933740502e-16
        let x: Vec<f64> = (0..80).map(f64::from).collect();
        let y: Vec<f64> = (40..120).map(|v| v as f64 + 0.5).collect();
        assert!(u_counts(80, 80).is_none());
        let p = mann_whitney_p(&x, &y).unwrap();
        assert!(rel(p, 1.4959268933740502e-16) < 1e-6, "{p}");
        assert_eq!(mann_whitney_p(&[], &[1.0]), None);
    }

    #[test]
    fn critical_values() {
        // n = m = 5 at 95%: P(U<=2) = 4/252 = 0.0159 <= 0.025 < P(U<=3) = 7/252 → k = 3
        // (Hollander & Wolfe table; R: qwilcox(0.025, 5, 5) = 3).
        assert_eq!(hl_critical_k(5, 5, 0.95), Some(3));
        // n = m = 10 at 95%: exact null cdf (scipy.stats._mannwhitneyu._MWU and a
        // brute-force recurrence agree) P(U<=23) = 0.021628526, P(U<=24) = 0.026212951
        // → k = 24, the same order statistic R's wilcox.test(conf.int=TRUE) uses.
        assert_eq!(hl_critical_k(10, 10, 0.95), Some(24));
        // n = m = 3: 1/20 = 0.05 > 0.025 → no 95% interval at all.
        assert_eq!(hl_critical_k(3, 3, 0.95), None);
        assert_eq!(hl_critical_k(4, 4, 0.95), Some(1));
        // normal branch, n = m = 100: floor(5000.5 - 1.959964 * sqrt(10000*201/12)) = 4198
        assert_eq!(hl_critical_k(100, 100, 0.95), Some(4198));
    }
}
