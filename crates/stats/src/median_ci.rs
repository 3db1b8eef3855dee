use crate::mann_whitney::ln_choose;
use crate::summary::sorted_clean;

/// Confidence interval for the median from order statistics: [x(k), x(n+1−k)] covers
/// the true median with probability 1 − 2·P(Binomial(n, ½) ≤ k−1) whatever the
/// distribution, which is what skewed benchmark samples need. The widest k meeting
/// `confidence` is used. `None` when even [min, max] falls short (n < 6 at 95%), or
/// when `confidence` is not in (0, 1). NaNs are dropped.
pub fn median_ci(xs: &[f64], confidence: f64) -> Option<(f64, f64)> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let sorted = sorted_clean(xs);
    let n = sorted.len();
    let k = median_ci_k(n, confidence)?;
    Some((sorted[k - 1], sorted[n - k]))
}

/// Largest k ≥ 1 with P(Binomial(n, ½) ≤ k−1) ≤ (1 − confidence)/2.
fn median_ci_k(n: usize, confidence: f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let half_alpha = (1.0 - confidence) / 2.0 * (1.0 + 1e-12);
    let ln_half_n = n as f64 * std::f64::consts::LN_2;
    let mut cdf = 0.0;
    let mut k = 0;
    for j in 0..n.div_ceil(2) {
        cdf += (ln_choose(n, j) - ln_half_n).exp();
        if cdf <= half_alpha {
            k = j + 1;
        } else {
            break;
        }
    }
    (k >= 1).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_statistic_indices() {
        // scipy.stats.binom.cdf(k-1, n, 0.5) <= 0.025:
        //   n=5: cdf(0)=0.03125 > 0.025 → none; n=6: cdf(0)=0.015625 → k=1;
        //   n=10: cdf(1)=0.010742, cdf(2)=0.054688 → k=2;
        //   n=20: cdf(5)=0.020695, cdf(6)=0.057659 → k=6;
        //   n=100: cdf(39)=0.017600, cdf(40)=0.028444 → k=40.
        assert_eq!(median_ci_k(5, 0.95), None);
        assert_eq!(median_ci_k(6, 0.95), Some(1));
        assert_eq!(median_ci_k(10, 0.95), Some(2));
        assert_eq!(median_ci_k(20, 0.95), Some(6));
        assert_eq!(median_ci_k(100, 0.95), Some(40));
        // n=10 at 90%: cdf(2)=0.054688 > 0.05 → k=2 still
        assert_eq!(median_ci_k(10, 0.90), Some(2));
        // large n does not underflow: n=2000 at 95%: binom.cdf(955)=0.023276, cdf(956)=0.025851 → k=956
        assert_eq!(median_ci_k(2000, 0.95), Some(956));
    }

    #[test]
    fn interval_values() {
        let xs = [9.1, 3.2, 7.7, 1.5, 4.4, 8.0, 2.9, 6.3, 5.0, 10.6];
        // sorted: 1.5 2.9 3.2 4.4 5.0 6.3 7.7 8.0 9.1 10.6; k=2 → (x(2), x(9))
        // scipy.stats.quantile_test(xs, q=5.65, p=0.5).confidence_interval(0.95)
        //   = ConfidenceInterval(low=2.9, high=9.1)
        assert_eq!(median_ci(&xs, 0.95), Some((2.9, 9.1)));
        assert_eq!(median_ci(&xs[..5], 0.95), None);
        assert_eq!(median_ci(&xs, 1.0), None);
        assert_eq!(median_ci(&[], 0.95), None);
    }
}
