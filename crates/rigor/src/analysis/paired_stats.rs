//! The statistics of paired rounds, power and sequential looks, in the shape `rigor_stats` gives
//! them: a Wilcoxon signed-rank comparison of within-round log ratios with its Hodges–Lehmann
//! interval, the spread of log ratios, the smallest change a run can detect, and the nominal
//! confidence of one look of a group-sequential run. Kept here, behind the same signatures, so
//! the analysis can move onto the statistics crate's versions by changing one `use`.

use rigor_stats::Change;

/// Power the noise floor is quoted at: a change this large is told from no change 4 times in 5.
pub const POWER: f64 = 0.8;

/// Asymptotic efficiency of the signed-rank test against the t test on normal data (3/π): the
/// rank test needs 1/0.955 as many pairs, so its spread is inflated by the square root of that.
const RANK_EFFICIENCY_INFLATION: f64 = 1.023_326_707_946_488_3;

/// Largest n whose signed-rank null distribution is counted exactly.
const MAX_EXACT: usize = 60;

/// Paired comparison of aligned `baseline[i]`/`candidate[i]` (same round): `change_pct` is the
/// Hodges–Lehmann estimate of the within-pair log ratio, `median_change_pct` the median
/// within-pair change, the interval from the Walsh averages cut at the signed-rank critical
/// value and `p_value` the two-sided signed-rank p. `None` for unaligned or empty input, a
/// non-positive value (no ratio) or a confidence outside (0, 1).
pub fn compare_paired(baseline: &[f64], candidate: &[f64], confidence: f64) -> Option<Change> {
    if baseline.len() != candidate.len() || baseline.is_empty() {
        return None;
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    if baseline.iter().chain(candidate).any(|v| !(*v > 0.0) || !v.is_finite()) {
        return None;
    }
    let d: Vec<f64> = baseline
        .iter()
        .zip(candidate)
        .map(|(b, c)| (c / b).ln())
        .collect();
    let mut walsh = Vec::with_capacity(d.len() * (d.len() + 1) / 2);
    for i in 0..d.len() {
        for j in i..d.len() {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let pct = |l: f64| l.exp_m1() * 100.0;
    let k = critical_k(d.len(), confidence);
    let (lo, hi) = match k {
        Some(k) => (pct(walsh[k - 1]), pct(walsh[walsh.len() - k])),
        None => (f64::NEG_INFINITY, f64::INFINITY),
    };
    let mut ratios: Vec<f64> = d.iter().map(|l| pct(*l)).collect();
    Some(Change {
        baseline_median: median(&mut baseline.to_vec()),
        candidate_median: median(&mut candidate.to_vec()),
        change_pct: pct(median(&mut walsh.clone())),
        median_change_pct: median(&mut ratios),
        ci_low_pct: lo,
        ci_high_pct: hi,
        p_value: signed_rank_p(&d),
    })
}

/// Whether `pairs` pairs can ever give a significant signed-rank result: all signs alike has
/// two-sided p = 2 / 2^n, so 6 pairs are the least at 95%.
pub fn can_ever_be_significant_paired(pairs: usize, confidence: f64) -> bool {
    pairs > 0 && confidence > 0.0 && confidence < 1.0 && critical_k(pairs, confidence).is_some()
}

/// The nominal confidence of the last of `looks` (rounds done at each look, ascending) of a run
/// that stops at `max` rounds, so the chance of any false alarm over all looks stays within
/// 1 − `confidence`: α is spent along the Lan–DeMets Pocock-type function
/// α·ln(1 + (e − 1)·t) of the information fraction t = rounds / max, and each look tests at
/// the α spent since the previous one (a union bound, so it never spends more than α in all).
pub fn look_confidence(looks: &[usize], max: usize, confidence: f64) -> f64 {
    let alpha = 1.0 - confidence;
    if looks.is_empty() || max == 0 {
        return confidence;
    }
    let spent = |n: usize| {
        let t = (n as f64 / max as f64).clamp(0.0, 1.0);
        alpha * (1.0 + (std::f64::consts::E - 1.0) * t).ln()
    };
    let last = looks[looks.len() - 1];
    let before = if looks.len() > 1 {
        spent(looks[looks.len() - 2])
    } else {
        0.0
    };
    let nominal = (spent(last) - before).max(f64::MIN_POSITIVE);
    1.0 - nominal
}

/// Robust spread (1.4826 × MAD, in natural log units) of within-pair log ratios: how much one
/// round's ratio wanders. `None` below 3 pairs or for unaligned or non-positive input.
pub fn log_ratio_spread(baseline: &[f64], candidate: &[f64]) -> Option<f64> {
    if baseline.len() != candidate.len() {
        return None;
    }
    let ratios: Option<Vec<f64>> = baseline
        .iter()
        .zip(candidate)
        .map(|(b, c)| (*b > 0.0 && *c > 0.0).then(|| (c / b).ln()))
        .collect();
    robust_sd(ratios?)
}

/// Robust spread (1.4826 × MAD) of the log values of one sample. `None` below 3 values or for a
/// non-positive value.
pub fn log_spread(values: &[f64]) -> Option<f64> {
    let logs: Option<Vec<f64>> = values
        .iter()
        .map(|v| (*v > 0.0).then(|| v.ln()))
        .collect();
    robust_sd(logs?)
}

/// The smallest true change (in %) that `n` pairs with log-ratio spread `spread_log` detect at
/// `confidence` with probability `power`: (z_{α/2} + z_power)·σ/√n, inflated for the rank test.
pub fn detectable_change_pct(spread_log: f64, n: usize, confidence: f64, power: f64) -> f64 {
    if n == 0 || !spread_log.is_finite() {
        return f64::INFINITY;
    }
    let z = normal_isf((1.0 - confidence) / 2.0) + normal_isf(1.0 - power);
    (z * spread_log * RANK_EFFICIENCY_INFLATION / (n as f64).sqrt()).exp_m1() * 100.0
}

/// Pairs needed to detect a change of `change_pct` at `confidence` with probability `power`;
/// `None` for a zero change or an unknown spread.
pub fn pairs_needed(
    spread_log: f64,
    change_pct: f64,
    confidence: f64,
    power: f64,
) -> Option<usize> {
    let effect = (1.0 + change_pct.abs() / 100.0).ln();
    if !(effect > 0.0) || !spread_log.is_finite() {
        return None;
    }
    let z = normal_isf((1.0 - confidence) / 2.0) + normal_isf(1.0 - power);
    let n = (z * spread_log * RANK_EFFICIENCY_INFLATION / effect).powi(2).ceil();
    let least = (1..=64)
        .find(|&n| can_ever_be_significant_paired(n, confidence))
        .unwrap_or(1);
    Some((n as usize).max(least))
}

fn robust_sd(mut xs: Vec<f64>) -> Option<f64> {
    if xs.len() < 3 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let m = median(&mut xs);
    let mut dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    Some(1.482_602_218_505_602 * median(&mut dev))
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Counts of each T+ value among the 2^n equally likely sign assignments (untied ranks 1..n).
fn null_counts(n: usize) -> Vec<f64> {
    let total = n * (n + 1) / 2;
    let mut c = vec![0.0; total + 1];
    c[0] = 1.0;
    for r in 1..=n {
        for t in (r..=total).rev() {
            c[t] += c[t - r];
        }
    }
    c
}

/// 1-based order statistic k of the Walsh averages bounding the interval: the largest k with
/// P(T+ ≤ k − 1) ≤ α/2; `None` when even k = 1 is too likely.
fn critical_k(n: usize, confidence: f64) -> Option<usize> {
    let half_alpha = (1.0 - confidence) / 2.0;
    if n <= MAX_EXACT {
        let counts = null_counts(n);
        let all = 2f64.powi(n as i32);
        let mut cdf = 0.0;
        let mut k = 0;
        for c in counts {
            cdf += c / all;
            if cdf > half_alpha * (1.0 + 1e-12) {
                break;
            }
            k += 1;
        }
        return (k > 0).then_some(k);
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
    let k = (mean - normal_isf(half_alpha) * sd).floor();
    (k >= 1.0).then_some(k as usize)
}

/// Two-sided signed-rank p of differences `d` (zeros dropped, tied magnitudes given mid-ranks):
/// exact by counting without ties, else the normal approximation with the tie correction.
fn signed_rank_p(d: &[f64]) -> f64 {
    let mut nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return 1.0;
    }
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    let mut ranks = vec![0.0; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && nz[j + 1].abs() == nz[i].abs() {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        for r in ranks.iter_mut().take(j + 1).skip(i) {
            *r = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    let t_plus: f64 = nz.iter().zip(&ranks).filter(|(x, _)| **x > 0.0).map(|(_, r)| r).sum();
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    if tie_term == 0.0 && n <= MAX_EXACT {
        let counts = null_counts(n);
        let all = 2f64.powi(n as i32);
        let low = t_plus.min(nf * (nf + 1.0) / 2.0 - t_plus) as usize;
        let tail: f64 = counts[..=low].iter().sum::<f64>() / all;
        return (2.0 * tail).min(1.0);
    }
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((t_plus - mean).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * normal_sf(z)).min(1.0)
}

/// Upper tail of the standard normal.
fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// erfc by the Numerical Recipes Chebyshev fit (relative error below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Inverse of the upper normal tail, by bisection on [`normal_sf`] (exact enough for power).
fn normal_isf(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0, 40.0);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if normal_sf(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_pairs_are_the_least_at_95() {
        assert!(!can_ever_be_significant_paired(5, 0.95)); // 2/32 = 0.0625
        assert!(can_ever_be_significant_paired(6, 0.95)); // 2/64 = 0.03125
        assert!(!can_ever_be_significant_paired(6, 0.99));
        assert!(can_ever_be_significant_paired(8, 0.99)); // 2/256
    }

    #[test]
    fn signed_rank_matches_scipy() {
        // scipy.stats.wilcoxon([1,2,3,-4,5,6,7,8]).pvalue = 0.0546875 (exact: T- = 4)
        let d = [1.0, 2.0, 3.0, -4.0, 5.0, 6.0, 7.0, 8.0];
        assert!((signed_rank_p(&d) - 0.0546875).abs() < 1e-12);
        assert!((normal_isf(0.025) - 1.959_963_984_540_054).abs() < 1e-6);
    }

    #[test]
    fn paired_interval_is_built_on_walsh_averages() {
        // Six rounds all about 10% slower: k = 1, so the interval spans the extreme ratios.
        let b = [100.0, 120.0, 90.0, 110.0, 130.0, 95.0];
        let r = [0.90, 0.91, 0.89, 0.905, 0.895, 0.902];
        let c: Vec<f64> = b.iter().zip(r).map(|(v, r)| v * r).collect();
        let ch = compare_paired(&b, &c, 0.95).unwrap();
        assert!((ch.ci_low_pct + 11.0).abs() < 1e-9, "{}", ch.ci_low_pct);
        assert!((ch.ci_high_pct + 9.0).abs() < 1e-9, "{}", ch.ci_high_pct);
        assert!((ch.median_change_pct + 9.9).abs() < 1e-9); // median of the six ratios: 0.901
        assert!((ch.p_value - 0.03125).abs() < 1e-12);
        assert!(compare_paired(&b[..5], &c[..5], 0.95)
            .unwrap()
            .ci_low_pct
            .is_infinite());
    }

    #[test]
    fn looks_never_spend_more_than_alpha() {
        let max = 20;
        let mut total = 0.0;
        for last in 10..=max {
            let looks: Vec<usize> = (10..=last).collect();
            total += 1.0 - look_confidence(&looks, max, 0.95);
        }
        assert!(total <= 0.05 + 1e-12, "{total}");
        assert!(look_confidence(&[10], 20, 0.95) > 0.95);
    }

    #[test]
    fn detectable_and_needed_agree() {
        let s = 0.03;
        let need = pairs_needed(s, 2.0, 0.95, POWER).unwrap();
        assert!(detectable_change_pct(s, need, 0.95, POWER) <= 2.0);
        assert!(detectable_change_pct(s, need - 1, 0.95, POWER) > 2.0);
    }
}
