//! The Wilcoxon signed-rank statistic: how often a paired difference is positive, weighted by
//! how large it is. Rank-based, so a round hit by a noisy neighbour moves it by one rank, not
//! by its size. Its null distribution also sizes the Hodges–Lehmann interval of the paired
//! shift, so both live here.

use crate::normal::{normal_isf, normal_sf};

/// Largest number of pairs whose p-value is counted exactly (2^50 sign patterns, counted by
/// their rank sum in about n³ steps); beyond it the normal approximation is within a fraction
/// of a percent.
pub(crate) const MAX_EXACT_P: usize = 50;

/// Largest n whose interval critical value is taken from the exact distribution; the count
/// costs n³/2 steps, and beyond it the normal approximation picks the same order statistic.
const MAX_EXACT_K: usize = 200;

/// P(T+ = s) for s = 0..=n(n+1)/2 under the null with untied ranks 1..n: every one of the
/// 2^n sign patterns equally likely. Probabilities, not counts, so n may exceed 127.
fn untied_null(n: usize) -> Vec<f64> {
    let top = n * (n + 1) / 2;
    let mut p = vec![0.0; top + 1];
    p[0] = 1.0;
    let mut reach = 0;
    for rank in 1..=n {
        reach += rank;
        for s in (0..=reach).rev() {
            let with = if s >= rank { p[s - rank] } else { 0.0 };
            p[s] = 0.5 * (p[s] + with);
        }
    }
    p
}

/// Largest k ≥ 1 with P(T+ ≤ k−1) ≤ (1 − confidence)/2 under the untied null, so that the
/// interval [W(k), W(N+1−k)] of the N = n(n+1)/2 sorted Walsh averages covers the true shift
/// with at least the requested probability. `None` when even k = 1 falls short: 2/2^n > α.
pub(crate) fn critical_k(n: usize, confidence: f64) -> Option<usize> {
    if n == 0 || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let half_alpha = (1.0 - confidence) / 2.0;
    let walsh = n * (n + 1) / 2;
    if n <= MAX_EXACT_K {
        let p = untied_null(n);
        let (mut cum, mut k) = (0.0, 0);
        for (j, &pj) in p.iter().enumerate().take(walsh.div_ceil(2)) {
            cum += pj;
            if cum <= half_alpha * (1.0 + 1e-12) {
                k = j + 1;
            } else {
                break;
            }
        }
        return (k >= 1).then_some(k);
    }
    // Normal approximation with continuity correction: P(T+ ≤ k−1) ≈ Φ((k − ½ − N/2)/σ).
    let nf = n as f64;
    let sigma = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
    let k = (walsh as f64 / 2.0 + 0.5 - normal_isf(half_alpha) * sigma).floor();
    (k >= 1.0).then_some((k as usize).min(walsh.div_ceil(2)))
}

/// Two-sided signed-rank p-value of the differences `d`, zeros handled the Pratt way: every
/// difference is ranked by |d| (midranks for ties, zeros included, so they still push the
/// other ranks up), then zeros drop out of the statistic because they have no sign. This keeps
/// the same n as the Walsh-average interval, which also counts the zeros. The p-value is
/// P(|T+ − S/2| ≥ |t − S/2|) with S the sum of the nonzero ranks: exact over the 2^n sign
/// patterns for n ≤ [`MAX_EXACT_P`], the normal approximation with the exact (tie-aware)
/// variance and a continuity correction above. 1 when every difference is zero.
pub(crate) fn signed_rank_p(d: &[f64]) -> f64 {
    let doubled = doubled_midranks(d);
    let mut nonzero = Vec::with_capacity(d.len());
    let mut t_plus = 0u64;
    for (&v, &r) in d.iter().zip(&doubled) {
        if v != 0.0 {
            nonzero.push(r);
            if v > 0.0 {
                t_plus += r;
            }
        }
    }
    if nonzero.is_empty() {
        return 1.0;
    }
    let total: u64 = nonzero.iter().sum();
    if d.len() <= MAX_EXACT_P {
        exact_p(&nonzero, t_plus, total)
    } else {
        normal_p(&nonzero, t_plus, total)
    }
}

/// Twice the midrank of each |d_i| (midranks are multiples of ½, so doubling keeps them
/// integers and every comparison exact).
pub(crate) fn doubled_midranks(d: &[f64]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..d.len()).collect();
    order.sort_by(|&a, &b| d[a].abs().total_cmp(&d[b].abs()));
    let mut ranks = vec![0u64; d.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && d[order[j + 1]].abs() == d[order[i]].abs() {
            j += 1;
        }
        for &idx in &order[i..=j] {
            ranks[idx] = (i + j + 2) as u64;
        }
        i = j + 1;
    }
    ranks
}

/// Exact two-sided p from the distribution of the doubled T+ over every sign pattern.
fn exact_p(doubled: &[u64], t_plus: u64, total: u64) -> f64 {
    let width = total as usize + 1;
    let mut ways = vec![0u64; width];
    ways[0] = 1;
    let mut reach = 0usize;
    for &r in doubled {
        let r = r as usize;
        reach += r;
        for s in (r..=reach).rev() {
            ways[s] += ways[s - r];
        }
    }
    // Distances from the centre S/2, doubled again to stay in integers.
    let distance = |s: u64| (2 * s as i64 - total as i64).unsigned_abs();
    let observed = distance(t_plus);
    let (mut tail, mut all) = (0u64, 0u64);
    for (s, &w) in ways.iter().enumerate() {
        all += w;
        if distance(s as u64) >= observed {
            tail += w;
        }
    }
    (tail as f64 / all as f64).min(1.0)
}

/// Normal approximation: mean S/2, variance Σ r²/4 over the nonzero ranks (the exact null
/// variance with ties), continuity correction ½ of a rank.
fn normal_p(doubled: &[u64], t_plus: u64, total: u64) -> f64 {
    let var: f64 = doubled
        .iter()
        .map(|&r| (r as f64 / 2.0).powi(2))
        .sum::<f64>()
        / 4.0;
    let dev = (t_plus as f64 - total as f64 / 2.0).abs() / 2.0;
    if var <= 0.0 {
        return 1.0;
    }
    let z = (dev - 0.5).max(0.0) / var.sqrt();
    (2.0 * normal_sf(z)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    #[test]
    fn untied_null_counts() {
        // n = 4: 16 patterns, T+ = 0..10 with counts 1,1,1,2,2,2,2,2,1,1,1 (listing them).
        let p = untied_null(4);
        let counts: Vec<f64> = p.iter().map(|v| v * 16.0).collect();
        assert_eq!(counts, vec![1., 1., 1., 2., 2., 2., 2., 2., 1., 1., 1.]);
    }

    #[test]
    fn critical_values_match_the_tables() {
        // Two-sided 5%: the classic table's T_crit = 0 at n = 6, 2 at n = 8, 8 at n = 10,
        // 21 at n = 14, 52 at n = 20 (P(T ≤ T_crit) ≤ 0.025), so k = T_crit + 1.
        assert_eq!(critical_k(5, 0.95), None);
        assert_eq!(critical_k(6, 0.95), Some(1));
        assert_eq!(critical_k(8, 0.95), Some(4));
        assert_eq!(critical_k(10, 0.95), Some(9));
        assert_eq!(critical_k(14, 0.95), Some(22));
        assert_eq!(critical_k(20, 0.95), Some(53));
        // The approximation above the exact range picks about what the exact count does.
        let exact = critical_k(MAX_EXACT_K, 0.95).unwrap() as f64;
        let nf = MAX_EXACT_K as f64;
        let sigma = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        let approx = (nf * (nf + 1.0) / 4.0 + 0.5 - 1.959963984540054 * sigma).floor();
        assert!((exact - approx).abs() <= 2.0, "{exact} vs {approx}");
    }

    #[test]
    fn exact_p_matches_listing_every_sign_pattern() {
        let mut rng = Rng::new(11);
        for _ in 0..200 {
            let n = 1 + (rng.next_u64() % 12) as usize;
            // Small integers: many ties and zeros.
            let d: Vec<f64> = (0..n).map(|_| (rng.next_u64() % 7) as f64 - 3.0).collect();
            let ranks = doubled_midranks(&d);
            let signs: Vec<f64> = d
                .iter()
                .map(|v| v.signum() * (*v != 0.0) as u8 as f64)
                .collect();
            let stat = |s: &[f64]| -> f64 {
                let tp: f64 = s
                    .iter()
                    .zip(&ranks)
                    .filter(|(s, _)| **s > 0.0)
                    .map(|(_, &r)| r as f64)
                    .sum();
                let tot: f64 = s
                    .iter()
                    .zip(&ranks)
                    .filter(|(s, _)| **s != 0.0)
                    .map(|(_, &r)| r as f64)
                    .sum();
                (2.0 * tp - tot).abs()
            };
            let observed = stat(&signs);
            let mut tail = 0;
            for mask in 0u32..(1 << n) {
                let flipped: Vec<f64> = (0..n)
                    .map(|i| {
                        if mask & (1 << i) != 0 {
                            -signs[i]
                        } else {
                            signs[i]
                        }
                    })
                    .collect();
                tail += (stat(&flipped) >= observed) as u32;
            }
            let want = tail as f64 / (1u32 << n) as f64;
            let got = signed_rank_p(&d);
            assert!((got - want).abs() < 1e-12, "{d:?}: {got} vs {want}");
        }
    }
}
