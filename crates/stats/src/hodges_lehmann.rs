use serde::Serialize;

use crate::mann_whitney::{hl_critical_k, mann_whitney_p};
use crate::summary::{median_of_sorted, sorted_clean};

/// How the candidate differs from the baseline, with its uncertainty, ready to be
/// turned into a verdict. Percentages are relative to the baseline.
///
/// Two point estimates travel together because readers see medians: `median_change_pct` is
/// what the two medians say, `change_pct` the Hodges–Lehmann shift the interval is built
/// around. On overlapping or bimodal samples they can differ even in sign; [`Change::agrees`]
/// says whether the medians' change lies inside the interval, and the verdict requires it.
#[derive(Serialize, Clone, Debug)]
pub struct Change {
    pub baseline_median: f64,
    pub candidate_median: f64,
    /// Hodges–Lehmann point estimate of candidate/baseline − 1, in %.
    pub change_pct: f64,
    /// candidate median / baseline median − 1, in % (additive relative to |baseline median| in
    /// the fallback for zero or negative data); NaN when the baseline median is 0.
    pub median_change_pct: f64,
    /// Confidence interval for the change, in %. −∞/+∞ (JSON `null`) when the
    /// sample sizes cannot support an interval at the requested confidence at all
    /// (see `can_ever_be_significant`).
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    /// Two-sided Mann–Whitney U p-value.
    pub p_value: f64,
}

/// Compares two samples of one measurement. For positive data (RPS, latency, memory)
/// the change is a ratio: the Hodges–Lehmann shift of ln values (median of all
/// pairwise ln(candidate) − ln(baseline)) with its distribution-free interval from
/// the order statistics of those differences, cut at the Mann–Whitney critical value.
/// It is robust to the odd slow iteration and exact in coverage for any continuous
/// distribution shape. When a value is zero or negative (counts of errors, say) it
/// falls back to the additive shift relative to |baseline median|. `None` when a
/// side is empty (after dropping NaNs), `confidence` is not in (0, 1), or the
/// baseline median is 0 while the samples differ (no relative change exists).
pub fn compare(baseline: &[f64], candidate: &[f64], confidence: f64) -> Option<Change> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let base = sorted_clean(baseline);
    let cand = sorted_clean(candidate);
    if base.is_empty() || cand.is_empty() {
        return None;
    }
    let baseline_median = median_of_sorted(&base);
    let candidate_median = median_of_sorted(&cand);
    let p_value = mann_whitney_p(&base, &cand)?;
    let k = hl_critical_k(base.len(), cand.len(), confidence);

    let positive = base[0] > 0.0 && cand[0] > 0.0;
    let (point, lo, hi) = if positive {
        let lb: Vec<f64> = base.iter().map(|v| v.ln()).collect();
        let lc: Vec<f64> = cand.iter().map(|v| v.ln()).collect();
        let (point, lo, hi) = shift_with_ci(&lb, &lc, k);
        // exp_m1 would map an unbounded interval to [-100 %, +inf]; keep it symmetric.
        let pct = |d: f64| {
            if d.is_infinite() {
                d
            } else {
                d.exp_m1() * 100.0
            }
        };
        (pct(point), pct(lo), pct(hi))
    } else {
        let (point, lo, hi) = shift_with_ci(&base, &cand, k);
        let scale = baseline_median.abs();
        if scale == 0.0 {
            if point == 0.0 && lo == 0.0 && hi == 0.0 {
                (0.0, 0.0, 0.0)
            } else {
                return None;
            }
        } else {
            let pct = |d: f64| d / scale * 100.0;
            (pct(point), pct(lo), pct(hi))
        }
    };
    let median_change_pct = if baseline_median != 0.0 {
        if positive {
            (candidate_median / baseline_median - 1.0) * 100.0
        } else {
            (candidate_median - baseline_median) / baseline_median.abs() * 100.0
        }
    } else if candidate_median == 0.0 {
        0.0
    } else {
        f64::NAN
    };
    Some(Change {
        baseline_median,
        candidate_median,
        change_pct: point,
        median_change_pct,
        ci_low_pct: lo,
        ci_high_pct: hi,
        p_value,
    })
}

impl Change {
    /// Whether the change of the medians lies inside the interval, so a table printing the
    /// medians, their change and the interval side by side cannot contradict itself. An
    /// unbounded interval holds anything; a NaN median change agrees with nothing.
    pub fn agrees(&self) -> bool {
        let m = self.median_change_pct;
        // A relative tolerance keeps identical figures computed two ways (ln/exp vs a
        // division) from disagreeing in the last bit.
        let slack = 1e-9 * m.abs().max(1.0);
        m >= self.ci_low_pct - slack && m <= self.ci_high_pct + slack
    }
}

/// Hodges–Lehmann shift (median of all y_j − x_i) and the interval [D(k), D(mn+1−k)]
/// of the sorted differences; an unbounded interval when `k` is `None`.
pub(crate) fn shift_with_ci(x: &[f64], y: &[f64], k: Option<usize>) -> (f64, f64, f64) {
    let mut d: Vec<f64> = Vec::with_capacity(x.len() * y.len());
    for &b in x {
        for &c in y {
            d.push(c - b);
        }
    }
    d.sort_by(f64::total_cmp);
    let point = median_of_sorted(&d);
    match k {
        Some(k) => (point, d[k - 1], d[d.len() - k]),
        None => (point, f64::NEG_INFINITY, f64::INFINITY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    #[allow(clippy::approx_constant)] // 3.14 is data, not pi
    fn additive_shift_reference() {
        // Samples from R's ?wilcox.test example (Hollander & Wolfe 1973, p. 29).
        // Independent reference, numpy: d = sort(y[None,:] - x[:,None]); median(d) = -0.56,
        // d[17] = -1.183, d[81-18] = 0.37; k = 18 from the exact null of U(9, 9) (brute-force
        // recurrence: P(U<=17) = 0.019992 <= 0.025 < P(U<=18) = 0.025154).
        let x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
        let k = hl_critical_k(9, 9, 0.95);
        assert_eq!(k, Some(18));
        let (pt, lo, hi) = shift_with_ci(&x, &y, k);
        assert!(close(pt, -0.56, 1e-12), "{pt}");
        assert!(close(lo, -1.183, 1e-12), "{lo}");
        assert!(close(hi, 0.37, 1e-12), "{hi}");
    }

    #[test]
    fn ratio_reference() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0];
        let cand = [110.0, 111.5, 108.0, 109.0, 112.0];
        let c = compare(&base, &cand, 0.95).unwrap();
        // numpy: d = sorted(log(c_j) - log(b_i)); k = 3 (exact, n = m = 5)
        //   100*expm1(median(d)) = 10.101010101010088, 100*expm1(d[2]) = 6.93069306930693,
        //   100*expm1(d[22]) = 13.131313131313101
        assert!(
            close(c.change_pct, 10.101010101010088, 1e-12),
            "{}",
            c.change_pct
        );
        assert!(
            close(c.ci_low_pct, 6.93069306930693, 1e-12),
            "{}",
            c.ci_low_pct
        );
        assert!(
            close(c.ci_high_pct, 13.131313131313101, 1e-12),
            "{}",
            c.ci_high_pct
        );
        // scipy.stats.mannwhitneyu(base, cand, method='exact').pvalue = 0.007936507936507936
        assert!(close(c.p_value, 0.007936507936507936, 1e-12));
        assert_eq!((c.baseline_median, c.candidate_median), (100.0, 110.0));
    }

    #[test]
    fn scale_invariance_and_symmetry() {
        let base = [5.0, 5.3, 4.9, 5.1, 5.2, 5.05];
        let cand = [5.5, 5.4, 5.7, 5.6, 5.35, 5.65];
        let a = compare(&base, &cand, 0.95).unwrap();
        let scaled: Vec<f64> = base.iter().map(|v| v * 1000.0).collect();
        let scaled_c: Vec<f64> = cand.iter().map(|v| v * 1000.0).collect();
        let b = compare(&scaled, &scaled_c, 0.95).unwrap();
        assert!(close(a.change_pct, b.change_pct, 1e-9));
        assert!(close(a.ci_low_pct, b.ci_low_pct, 1e-9));
        // swapping sides inverts the ratio: (1 + r) * (1 + r') = 1
        let r = compare(&cand, &base, 0.95).unwrap();
        assert!(close(
            (1.0 + a.change_pct / 100.0) * (1.0 + r.change_pct / 100.0),
            1.0,
            1e-12
        ));
        assert!(close(
            (1.0 + a.ci_low_pct / 100.0) * (1.0 + r.ci_high_pct / 100.0),
            1.0,
            1e-12
        ));
    }

    #[test]
    fn zeros_and_negatives_fall_back_to_additive() {
        // error counts: baseline median 2, candidate shifted by +2 → +100 %
        let base = [2.0, 1.0, 0.0, 3.0, 2.0, 2.0];
        let cand = [4.0, 3.0, 2.0, 5.0, 4.0, 4.0];
        let c = compare(&base, &cand, 0.95).unwrap();
        assert_eq!(c.change_pct, 100.0);
        // all zeros on both sides: no change at all
        let z = compare(&[0.0; 6], &[0.0; 6], 0.95).unwrap();
        assert_eq!(
            (z.change_pct, z.ci_low_pct, z.ci_high_pct, z.p_value),
            (0.0, 0.0, 0.0, 1.0)
        );
        // baseline median 0 but the candidate differs: no relative change exists
        assert!(compare(&[0.0; 6], &[1.0; 6], 0.95).is_none());
    }

    #[test]
    fn medians_and_shift_can_disagree_in_sign() {
        // Two modes (≈26 and ≈34): the baseline's middle value sits in the low mode, the
        // candidate's in the high one. numpy: medians 26.93 and 33.9, so the medians moved
        // 100*(33.9/26.93 - 1) = 25.88191607872261 %, while d = sorted(log(c_j) - log(b_i)) gives
        // 100*expm1(median(d)) = -0.2932551319647856 and, k = 3, the interval
        // [100*expm1(d[2]), 100*expm1(d[22])] = [-23.615160349854214, 29.885057471264343].
        let base = [26.10, 26.50, 26.93, 34.10, 34.30];
        let cand = [26.00, 26.20, 33.90, 34.00, 34.20];
        let c = compare(&base, &cand, 0.95).unwrap();
        assert_eq!((c.baseline_median, c.candidate_median), (26.93, 33.9));
        assert!(close(c.median_change_pct, 25.88191607872261, 1e-12));
        assert!(
            close(c.change_pct, -0.2932551319647856, 1e-9),
            "{}",
            c.change_pct
        );
        assert!(close(c.ci_low_pct, -23.615160349854214, 1e-9));
        assert!(close(c.ci_high_pct, 29.885057471264343, 1e-9));
        // The medians' change lies inside the interval: the two can be shown side by side.
        assert!(c.agrees());
        // scipy.stats.mannwhitneyu(base, cand, method='exact').pvalue = 0.8412698412698413
        assert!(close(c.p_value, 0.8412698412698413, 1e-12));
    }

    #[test]
    fn agreement_needs_the_median_change_inside_the_interval() {
        let mut c = compare(&[100.0, 101.0, 99.0, 100.5, 99.5], &[110.0; 5], 0.95).unwrap();
        assert!(c.agrees());
        c.median_change_pct = c.ci_high_pct + 1.0;
        assert!(!c.agrees());
        c.median_change_pct = f64::NAN;
        assert!(!c.agrees());
        // Too few iterations: an unbounded interval holds any change.
        let tiny = compare(&[100.0, 101.0], &[200.0, 201.0], 0.95).unwrap();
        assert!(tiny.agrees());
    }

    #[test]
    fn too_small_gives_unbounded_interval() {
        let c = compare(&[100.0, 101.0], &[200.0, 201.0], 0.95).unwrap();
        assert!(c.ci_low_pct.is_infinite() && c.ci_high_pct.is_infinite());
        // numpy: 100*expm1(median(log([200,201])[None,:] - log([100,101])[:,None])) = 99.5043362887628
        assert!(
            close(c.change_pct, 99.5043362887628, 1e-9),
            "{}",
            c.change_pct
        );
        // JSON: infinities serialize as null
        let j = serde_json::to_value(&c).unwrap();
        assert!(j["ci_low_pct"].is_null());
        assert!(compare(&[], &[1.0], 0.95).is_none());
        assert!(compare(&[1.0], &[1.0], 1.5).is_none());
    }
}
