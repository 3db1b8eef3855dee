//! The noise floor, said up front: from the spread the first rounds show, the smallest change
//! this run can tell from no change at its n, the change a verdict beyond the threshold needs,
//! and how many pairs would tell a change the size of the threshold. With variants the spread
//! is that of within-round ratios (what the paired test sees); a single row has no pairs, so
//! its floor is that of two independent samples with its iterations' spread.

use super::{pairing, CONFIDENCE, POWER};
use rigor_model::format::number;
use rigor_model::result::{Method, NoiseFloor, Row};

/// Fewest pairs (or iterations) a spread is estimated from.
pub const MIN_ROUNDS: usize = 3;

/// The floor of one group on `id`: `rows` are its rows with the baseline first (and the
/// candidate second), `n` the pairs (or iterations per side) to quote it for, or the pairs the
/// rows have when `None`. `None` below [`MIN_ROUNDS`] usable rounds or without a spread.
pub fn floor(rows: &[&Row], id: &str, threshold_pct: f64, n: Option<usize>) -> Option<NoiseFloor> {
    let first = rows.first()?;
    let (method, have, spread, effective) = match rows.get(1) {
        Some(second) => {
            let p = pairing::pair(first, second, id);
            let s = rigor_stats::log_ratio_spread(&p.baseline, &p.candidate)?;
            (Method::Paired, p.baseline.len(), s, s)
        }
        None => {
            let values = first.values(id);
            let s = rigor_stats::log_spread(&values)?;
            // Two independent samples of this spread differ by √2 of it.
            (
                Method::Unpaired,
                values.len(),
                s,
                s * std::f64::consts::SQRT_2,
            )
        }
    };
    if have < MIN_ROUNDS {
        return None;
    }
    let n = n.unwrap_or(have).max(1);
    let detectable_pct = rigor_stats::detectable_change_pct(effective, n, CONFIDENCE, POWER);
    let t = threshold_pct.abs();
    let verdict_pct = ((1.0 + t / 100.0) * (1.0 + detectable_pct / 100.0) - 1.0) * 100.0;
    let pairs_for_threshold = (t > 0.0)
        .then(|| rigor_stats::pairs_needed(effective, t, CONFIDENCE, POWER))
        .flatten();
    Some(NoiseFloor {
        scenario: first.scenario.clone(),
        row: first.variables.clone(),
        measurement: id.to_string(),
        method,
        pairs: n,
        spread_pct: spread.exp_m1() * 100.0,
        detectable_pct,
        threshold_pct: t,
        verdict_pct,
        pairs_for_threshold,
    })
}

/// The floor as one sentence: what this machine tells apart at this n, what a verdict needs at
/// the threshold, and the n that would tell a change the size of the threshold.
pub fn sentence(f: &NoiseFloor) -> String {
    let threshold_pct = f.threshold_pct;
    let (unit, how) = match f.method {
        Method::Paired => ("pairs", String::new()),
        Method::Unpaired => (
            "iterations per side",
            " (unpaired: no variants to pair, so two independent samples)".to_string(),
        ),
    };
    let t = number(threshold_pct);
    // Too few pairs for the test ever to call a change: an infinite floor, said in words
    // rather than as "≥ inf%".
    if !f.detectable_pct.is_finite() {
        let mut s = format!(
            "noise floor{how}: with n={} {unit} no change in {} can be told from no change (too \
             few for the test to call one)",
            f.pairs, f.measurement
        );
        if let Some(k) = f.pairs_for_threshold.filter(|_| threshold_pct > 0.0) {
            s.push_str(&format!("; {k} {unit} would tell {t}%"));
        }
        return s;
    }
    let mut s = format!(
        "noise floor{how}: with n={} {unit} this machine tells a change ≥ {:.1}% in {} from no \
         change (4 times in 5)",
        f.pairs, f.detectable_pct, f.measurement
    );
    if threshold_pct > 0.0 {
        s.push_str(&format!(
            "; at the {t}% threshold a verdict needs ≥ {:.1}%",
            f.verdict_pct
        ));
        match f.pairs_for_threshold {
            Some(k) if k <= f.pairs => {
                s.push_str(&format!("; {t}% is already within reach"));
            }
            Some(k) => s.push_str(&format!("; {k} {unit} would tell {t}%")),
            None => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::tests::row_with;

    #[test]
    fn too_few_pairs_say_so_and_survive_a_round_trip_through_json() {
        let b = [1000.0, 1100.0, 900.0];
        let c = [980.0, 1090.0, 880.0];
        let rb = row_with(&[], Some("a"), "load.rps", &b);
        let rc = row_with(&[], Some("b"), "load.rps", &c);
        let f = floor(&[&rb, &rc], "load.rps", 2.0, None).unwrap();
        assert!(f.detectable_pct.is_infinite(), "{f:?}");
        let line = sentence(&f);
        assert!(!line.contains("inf"), "{line}");
        assert!(
            line.starts_with("noise floor: with n=3 pairs no change in load.rps can be told"),
            "{line}"
        );
        // JSON has no infinity: written as null, read back as infinite.
        let text = serde_json::to_string(&f).unwrap();
        assert!(text.contains("\"detectable_pct\":null"), "{text}");
        let back: NoiseFloor = serde_json::from_str(&text).unwrap();
        assert!(back.detectable_pct.is_infinite() && back.verdict_pct.is_infinite());
    }

    #[test]
    fn paired_floor_comes_from_the_within_round_spread() {
        // Rounds drift a lot (±20%), the candidate follows the baseline within ±1%.
        let b: Vec<f64> = (0..10).map(|i| 1000.0 * (1.0 + 0.04 * i as f64)).collect();
        let jitter = [1.01, 0.99, 1.0, 1.005, 0.995, 1.01, 0.99, 1.0, 1.005, 0.995];
        let c: Vec<f64> = b.iter().zip(jitter).map(|(v, j)| v * 0.98 * j).collect();
        let rb = row_with(&[], Some("a"), "load.rps", &b);
        let rc = row_with(&[], Some("b"), "load.rps", &c);
        let f = floor(&[&rb, &rc], "load.rps", 2.0, None).unwrap();
        assert_eq!(f.method, Method::Paired);
        assert_eq!(f.pairs, 10);
        // The same from the statistics directly, on the log ratios.
        let s = rigor_stats::log_ratio_spread(&b, &c).unwrap();
        let want = rigor_stats::detectable_change_pct(s, 10, 0.95, 0.8);
        assert!((f.detectable_pct - want).abs() < 1e-12);
        assert!(f.detectable_pct < 2.0, "{}", f.detectable_pct);
        // The unpaired floor of the drifting baseline alone is far higher.
        let u = floor(&[&rb], "load.rps", 2.0, None).unwrap();
        assert_eq!(u.method, Method::Unpaired);
        assert!(u.detectable_pct > 5.0 * f.detectable_pct, "{u:?}");
        let line = sentence(&f);
        assert!(
            line.starts_with("noise floor: with n=10 pairs this machine tells a change ≥ "),
            "{line}"
        );
        assert!(
            line.contains("in load.rps from no change (4 times in 5)"),
            "{line}"
        );
        assert!(sentence(&u).contains("unpaired"));
    }

    #[test]
    fn quoted_at_the_planned_n_and_never_from_two_rounds() {
        let rb = row_with(&[], Some("a"), "load.rps", &[100.0, 103.0, 98.0]);
        let rc = row_with(&[], Some("b"), "load.rps", &[99.0, 101.0, 99.5]);
        let at3 = floor(&[&rb, &rc], "load.rps", 2.0, None).unwrap();
        let at12 = floor(&[&rb, &rc], "load.rps", 2.0, Some(12)).unwrap();
        assert_eq!(at12.pairs, 12);
        assert!(at12.detectable_pct < at3.detectable_pct);
        let line = sentence(&at12);
        let k = at12.pairs_for_threshold.unwrap();
        assert!(
            line.ends_with(&format!("; {k} pairs would tell 2%")) || k <= 12,
            "{line}"
        );
        let two_b = row_with(&[], Some("a"), "load.rps", &[100.0, 103.0]);
        let two_c = row_with(&[], Some("b"), "load.rps", &[99.0, 101.0]);
        assert!(floor(&[&two_b, &two_c], "load.rps", 2.0, Some(10)).is_none());
    }
}
