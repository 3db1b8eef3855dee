//! Paired comparison of interleaved rounds. Baseline and candidate iterations that ran in the
//! same round share the machine's state at that moment (a noisy neighbour, a warm cache, a slow
//! drift of the clock), so their ratio cancels what they share and keeps what differs: the
//! change. The unpaired comparison has to carry all that shared noise in its interval.

use crate::hodges_lehmann::Change;
use crate::signed_rank::{critical_k, signed_rank_p};
use crate::summary::median_of_sorted;

/// Paired comparison of aligned samples: `baseline[i]` and `candidate[i]` ran in the same round.
///
/// Works on the log ratios r_i = ln(candidate[i]/baseline[i]); a pair with a non-positive or
/// non-finite value, or without a partner (the longer slice's tail), is skipped. Returns the
/// same [`Change`] as the unpaired [`crate::compare`], so `verdict()` reads it unchanged:
/// - `change_pct`: exp(HL) − 1 in %, HL the median of the Walsh averages (r_i + r_j)/2, i ≤ j
///   (the Hodges–Lehmann estimate of the paired shift);
/// - `ci_low_pct`/`ci_high_pct`: the Walsh averages' order statistics W(k), W(N+1−k) at the
///   exact signed-rank critical value k, the interval the signed-rank test inverts to. Ties
///   among the log ratios (identical ratios) carry one sign per tie group, so T+(θ) =
///   #{W > θ} still holds and the interval is the same; its critical value comes from the
///   untied distribution, which is conservative when ties shrink the variance. Unbounded
///   (±∞) when n is too small for the confidence at all;
/// - `p_value`: two-sided Wilcoxon signed-rank p, zeros handled the Pratt way (ranked, then
///   without a sign), ties by midranks; exact for n ≤ 50, normal approximation above;
/// - `median_change_pct`: the median of the within-round changes exp(r_i) − 1, in % (with an
///   even number of pairs the mean of the middle two changes, not of their logs, which could
///   differ from it in sign), the paired analogue of the medians' change;
/// - `baseline_median`/`candidate_median`: the medians of the values in usable pairs.
///
/// `None` when fewer than 2 pairs are usable or `confidence` is not in (0, 1).
pub fn compare_paired(baseline: &[f64], candidate: &[f64], confidence: f64) -> Option<Change> {
    if !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let usable: Vec<(f64, f64)> = baseline
        .iter()
        .zip(candidate)
        .map(|(&b, &c)| (b, c))
        .filter(|&(b, c)| b > 0.0 && c > 0.0 && b.is_finite() && c.is_finite())
        .collect();
    if usable.len() < 2 {
        return None;
    }
    let r: Vec<f64> = usable.iter().map(|&(b, c)| (c / b).ln()).collect();
    let walsh = sorted_walsh_averages(&r);
    let hl = median_of_sorted(&walsh);
    let (lo, hi) = match critical_k(r.len(), confidence) {
        Some(k) => (walsh[k - 1], walsh[walsh.len() - k]),
        None => (f64::NEG_INFINITY, f64::INFINITY),
    };
    let median_of = |v: Vec<f64>| {
        let mut v = v;
        v.sort_by(f64::total_cmp);
        median_of_sorted(&v)
    };
    Some(Change {
        baseline_median: median_of(usable.iter().map(|p| p.0).collect()),
        candidate_median: median_of(usable.iter().map(|p| p.1).collect()),
        change_pct: log_to_pct(hl),
        median_change_pct: median_of(r.iter().map(|&x| log_to_pct(x)).collect()),
        ci_low_pct: log_to_pct(lo),
        ci_high_pct: log_to_pct(hi),
        p_value: signed_rank_p(&r),
    })
}

/// Whether n pairs can ever reach `confidence` two-sided: even all n ratios on one side give
/// a signed-rank p of 2/2^n, so 5 pairs (0.0625) can never reach 95% and 6 (0.031) can.
/// Running fewer is a warning, not a verdict.
pub fn can_ever_be_significant_paired(pairs: usize, confidence: f64) -> bool {
    critical_k(pairs, confidence).is_some()
}

/// All n(n+1)/2 averages (r_i + r_j)/2 with i ≤ j, ascending.
pub(crate) fn sorted_walsh_averages(r: &[f64]) -> Vec<f64> {
    let mut w = Vec::with_capacity(r.len() * (r.len() + 1) / 2);
    for (i, &a) in r.iter().enumerate() {
        for &b in &r[i..] {
            w.push((a + b) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    w
}

/// A log ratio as a change in %; an unbounded end stays unbounded (exp_m1 would turn −∞ into
/// −100 %, an interval that looks finite).
fn log_to_pct(d: f64) -> f64 {
    if d.is_infinite() {
        d
    } else {
        d.exp_m1() * 100.0
    }
}
