//! Candidate against baseline, measurement by measurement: the change with its confidence interval
//! and one of four verdicts, plus a note saying why when the answer is "not yet".
//!
//! Used by `rigor run` (variants of one row, interleaved) and `rigor compare` (saved results).

use crate::measurements;
use crate::result::{Comparison, Row};
use std::collections::BTreeMap;

/// Confidence of every interval and verdict rigor reports.
pub const CONFIDENCE: f64 = 0.95;

/// Largest iteration count `n=… can never reach` advice will look for before giving up.
const MAX_SUGGESTED_ITERATIONS: usize = 100;

/// Ids left out of [`default_measurements`]: bookkeeping, not performance.
/// `load.requests` is `load.rps` times the duration (a second verdict on the same figure);
/// `app.build_time` and `app.size` come from one build per variant, so their iterations repeat one
/// number and no statistic can be drawn from them; the `load.errors.*` split is already summed in
/// `load.socket_errors`.
const BOOKKEEPING: &[&str] = &[
    "load.requests",
    "app.build_time",
    "app.size",
    "load.errors.connect",
    "load.errors.read",
    "load.errors.write",
    "load.errors.timeout",
    "load.errors.parse",
];

/// The measurements worth a verdict by default: every id that some included, successful iteration
/// reported, in catalogue order (unknown ids, e.g. a command job's own figures, last), without the
/// bookkeeping ids listed in [`BOOKKEEPING`].
pub fn default_measurements(rows: &[Row]) -> Vec<String> {
    let ids = rows
        .iter()
        .flat_map(|r| {
            r.iterations
                .iter()
                .filter(|it| !it.excluded && it.error.is_none())
        })
        .flat_map(|it| it.measurements.keys())
        .filter(|id| !BOOKKEEPING.contains(&id.as_str()))
        .cloned();
    measurements::order(ids)
}

/// Compares one candidate row with its baseline on each of `measurements`.
///
/// Measurements that neither side reported are skipped; one missing side gives an `inconclusive`
/// entry with a note, so a figure that vanished is visible rather than silently dropped. With too
/// few iterations to ever reach 95% confidence the medians and change are still filled in, but the
/// verdict is `inconclusive` and the note says how many iterations would be needed.
/// `baseline`/`candidate` names are the rows' variants (`baseline`/`candidate` without one) and
/// `row` their matrix variables; callers such as `rigor compare` rename them.
pub fn compare_rows(
    baseline: &Row,
    candidate: &Row,
    measurements: &[String],
    threshold_pct: f64,
) -> Vec<Comparison> {
    let mut out = Vec::new();
    for id in measurements {
        let b = baseline.values(id);
        let c = candidate.values(id);
        if b.is_empty() && c.is_empty() {
            continue;
        }
        let mut cmp = Comparison {
            row: baseline.variables.clone(),
            measurement: id.clone(),
            baseline: baseline
                .variant
                .clone()
                .unwrap_or_else(|| "baseline".into()),
            candidate: candidate
                .variant
                .clone()
                .unwrap_or_else(|| "candidate".into()),
            baseline_median: rigor_stats::summarize(&b).map(|s| s.median),
            candidate_median: rigor_stats::summarize(&c).map(|s| s.median),
            change_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
            p_value: None,
            verdict: "inconclusive".into(),
            note: None,
        };
        if b.is_empty() || c.is_empty() {
            let side = if b.is_empty() {
                "baseline"
            } else {
                "candidate"
            };
            cmp.note = Some(format!("{id} was not measured in the {side}"));
            out.push(cmp);
            continue;
        }
        if let (Some(bm), Some(cm)) = (cmp.baseline_median, cmp.candidate_median) {
            if bm != 0.0 {
                cmp.change_pct = Some((cm - bm) / bm.abs() * 100.0);
            } else if cm == 0.0 {
                cmp.change_pct = Some(0.0);
            }
        }
        let change = rigor_stats::compare(&b, &c, CONFIDENCE);
        if let Some(ch) = &change {
            if ch.change_pct.is_finite() {
                cmp.change_pct = Some(ch.change_pct);
            }
            // An unbounded interval (too few iterations) is "no interval", JSON null.
            cmp.ci_low_pct = Some(ch.ci_low_pct).filter(|v| v.is_finite());
            cmp.ci_high_pct = Some(ch.ci_high_pct).filter(|v| v.is_finite());
            cmp.p_value = Some(ch.p_value).filter(|v| v.is_finite());
        }
        if !rigor_stats::can_ever_be_significant(b.len(), c.len(), CONFIDENCE) {
            let settle = rigor_stats::iterations_to_settle(&b, &c, threshold_pct, CONFIDENCE);
            cmp.note = Some(too_few_note(b.len(), c.len(), settle));
            out.push(cmp);
            continue;
        }
        let Some(ch) = change else {
            cmp.note = Some(identical_or_undefined(&b, &c, &mut cmp));
            out.push(cmp);
            continue;
        };
        let v = rigor_stats::verdict(&ch, measurements::direction(id), threshold_pct);
        cmp.verdict = verdict_str(v).to_string();
        if matches!(v, rigor_stats::Verdict::Inconclusive) {
            cmp.note = Some(
                match rigor_stats::iterations_to_settle(&b, &c, threshold_pct, CONFIDENCE) {
                    Some(k) if k > MAX_SUGGESTED_ITERATIONS => format!(
                        "over {MAX_SUGGESTED_ITERATIONS} iterations per side would be needed: \
                         the change is small next to the noise (quiet the machine, or accept it as unsettled)"
                    ),
                    Some(k) => {
                        let more = k.saturating_sub(b.len().max(c.len())).max(1);
                        format!(
                            "about {more} more iterations per side would likely settle it (-i {})",
                            b.len().max(c.len()) + more
                        )
                    }
                    None => format!(
                        "the change is too close to the ±{}% threshold to settle with a reasonable number of iterations",
                        crate::report::format::number(threshold_pct)
                    ),
                },
            );
        }
        out.push(cmp);
    }
    out
}

/// When the statistics cannot express a relative change (a zero baseline, e.g. zero errors), the
/// only honest verdicts are "no change" for identical samples and "inconclusive" otherwise.
fn identical_or_undefined(b: &[f64], c: &[f64], cmp: &mut Comparison) -> String {
    let all_same = b.iter().chain(c).all(|v| *v == b[0]);
    if all_same {
        cmp.verdict = "no change".into();
        cmp.change_pct = Some(0.0);
        "every iteration of both sides gave the same value".into()
    } else {
        "a relative change is undefined for a zero baseline".into()
    }
}

/// The advice for samples too small for any test to reach 95% confidence: the smallest
/// per-side count that could, or the statistics' estimate of what would settle it if larger.
fn too_few_note(nb: usize, nc: usize, settle: Option<usize>) -> String {
    let need = (nb.max(nc).max(1)..=MAX_SUGGESTED_ITERATIONS)
        .find(|&n| rigor_stats::can_ever_be_significant(n, n, CONFIDENCE))
        .map(|n| {
            n.max(
                settle
                    .filter(|&s| s <= MAX_SUGGESTED_ITERATIONS)
                    .unwrap_or(0),
            )
        });
    let advice = match need {
        Some(n) => format!("run more iterations (-i {n})"),
        None => "run more iterations".to_string(),
    };
    format!(
        "n={nb} vs {nc} can never reach {}% confidence: {advice}",
        (CONFIDENCE * 100.0).round()
    )
}

/// The contract spelling of a verdict (JSON `verdict`, table cells, `--fail-on-regression`).
pub fn verdict_str(v: rigor_stats::Verdict) -> &'static str {
    match v {
        rigor_stats::Verdict::Regression => "regression",
        rigor_stats::Verdict::Improvement => "improvement",
        rigor_stats::Verdict::NoChange => "no change",
        rigor_stats::Verdict::Inconclusive => "inconclusive",
    }
}

/// Compares the variants of one run: rows with the same scenario and matrix `variables` form a
/// group, the group's row for `variants_in_order[0]` is the baseline and every other listed variant
/// a candidate. Groups keep the order rows first appear in. An empty `measurements` means
/// [`default_measurements`] of `rows`. When `rows` span several scenarios, each entry's `row` map
/// also carries a `scenario` key so entries stay distinguishable (Comparison has no scenario field).
pub fn compare_variants(
    rows: &[Row],
    variants_in_order: &[String],
    measurements: &[String],
    threshold_pct: f64,
) -> Vec<Comparison> {
    let Some(base_name) = variants_in_order.first() else {
        return Vec::new();
    };
    let ids: Vec<String> = if measurements.is_empty() {
        default_measurements(rows)
    } else {
        measurements.to_vec()
    };
    let several_scenarios = rows
        .iter()
        .any(|r| r.scenario != rows.first().map(|f| f.scenario.as_str()).unwrap_or(""));
    type Key<'a> = (&'a str, &'a BTreeMap<String, String>);
    let mut groups: Vec<Key> = Vec::new();
    for r in rows {
        let key = (r.scenario.as_str(), &r.variables);
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    let find = |key: &Key, variant: &str| {
        rows.iter().find(|r| {
            r.scenario == key.0 && &r.variables == key.1 && r.variant.as_deref() == Some(variant)
        })
    };
    let mut out = Vec::new();
    for key in &groups {
        let Some(base) = find(key, base_name) else {
            continue;
        };
        for cand_name in &variants_in_order[1..] {
            let Some(cand) = find(key, cand_name) else {
                continue;
            };
            for mut c in compare_rows(base, cand, &ids, threshold_pct) {
                if several_scenarios {
                    c.row.insert("scenario".into(), key.0.to_string());
                }
                out.push(c);
            }
        }
    }
    out
}

/// The regressions among `ids` (all measurements when `ids` is empty): what
/// `--fail-on-regression` turns into exit code 3.
pub fn regressions<'a>(cmp: &'a [Comparison], ids: &[String]) -> Vec<&'a Comparison> {
    cmp.iter()
        .filter(|c| c.verdict == "regression")
        .filter(|c| ids.is_empty() || ids.contains(&c.measurement))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize::tests::row_with;

    fn spread(center: f64, n: usize) -> Vec<f64> {
        // Deterministic ±0.5% jitter around the centre.
        (0..n)
            .map(|i| center * (1.0 + 0.005 * ((i as f64 * 7.0) % 5.0 - 2.0) / 2.0))
            .collect()
    }

    #[test]
    fn clear_rps_drop_is_a_regression() {
        let base = row_with(&[], Some("base"), "load.rps", &spread(100_000.0, 10));
        let cand = row_with(&[], Some("slow"), "load.rps", &spread(90_000.0, 10));
        let c = compare_rows(&base, &cand, &["load.rps".into()], 2.0);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].verdict, "regression");
        assert_eq!(c[0].baseline, "base");
        assert_eq!(c[0].candidate, "slow");
        let change = c[0].change_pct.unwrap();
        assert!((change + 10.0).abs() < 1.0, "{change}");
        assert!(c[0].ci_high_pct.unwrap() < -2.0);
        assert_eq!(regressions(&c, &["load.rps".into()]).len(), 1);
        assert!(regressions(&c, &["app.rss".into()]).is_empty());
    }

    #[test]
    fn lower_latency_is_an_improvement_and_equal_is_no_change() {
        let base = row_with(&[], Some("a"), "load.latency.p99", &spread(10.0, 10));
        let cand = row_with(&[], Some("b"), "load.latency.p99", &spread(8.0, 10));
        let same = row_with(&[], Some("c"), "load.latency.p99", &spread(10.0, 10));
        let ids = vec!["load.latency.p99".to_string()];
        assert_eq!(
            compare_rows(&base, &cand, &ids, 2.0)[0].verdict,
            "improvement"
        );
        assert_eq!(
            compare_rows(&base, &same, &ids, 2.0)[0].verdict,
            "no change"
        );
    }

    #[test]
    fn two_iterations_are_inconclusive_with_advice() {
        let base = row_with(&[], None, "load.rps", &[100.0, 101.0]);
        let cand = row_with(&[], None, "load.rps", &[50.0, 51.0]);
        let c = &compare_rows(&base, &cand, &["load.rps".into()], 2.0)[0];
        assert_eq!(c.verdict, "inconclusive");
        let note = c.note.as_deref().unwrap();
        assert!(
            note.starts_with("n=2 vs 2 can never reach 95% confidence: run more iterations (-i "),
            "{note}"
        );
        // The numbers are still there for the table.
        assert_eq!(c.baseline_median, Some(100.5));
        assert!((c.change_pct.unwrap() + 49.25).abs() < 1.0);
    }

    #[test]
    fn missing_side_is_reported_not_dropped() {
        let base = row_with(&[], None, "load.rps", &[1.0, 2.0, 3.0]);
        let cand = row_with(&[], None, "app.rss", &[1.0, 2.0, 3.0]);
        let c = compare_rows(&base, &cand, &["load.rps".into(), "app.cpu".into()], 2.0);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].verdict, "inconclusive");
        assert!(c[0]
            .note
            .as_deref()
            .unwrap()
            .contains("not measured in the candidate"));
    }

    #[test]
    fn zero_errors_on_both_sides_is_no_change() {
        let base = row_with(&[], None, "load.bad_responses", &[0.0; 10]);
        let cand = row_with(&[], None, "load.bad_responses", &[0.0; 10]);
        let c = &compare_rows(&base, &cand, &["load.bad_responses".into()], 2.0)[0];
        assert_eq!(c.verdict, "no change");
    }

    #[test]
    fn variants_group_by_matrix_row_with_first_as_baseline() {
        let mut rows = Vec::new();
        for conns in ["16", "64"] {
            for (variant, rps) in [("base", 100.0), ("slow", 80.0), ("fast", 120.0)] {
                rows.push(row_with(
                    &[("connections", conns)],
                    Some(variant),
                    "load.rps",
                    &spread(rps, 10),
                ));
            }
        }
        let order = vec!["base".to_string(), "slow".to_string(), "fast".to_string()];
        let c = compare_variants(&rows, &order, &[], 2.0);
        let summary: Vec<(String, String, String, String)> = c
            .iter()
            .map(|c| {
                (
                    c.row["connections"].clone(),
                    c.baseline.clone(),
                    c.candidate.clone(),
                    c.verdict.clone(),
                )
            })
            .collect();
        let expect = |n: &str, cand: &str, v: &str| {
            (
                n.to_string(),
                "base".to_string(),
                cand.to_string(),
                v.to_string(),
            )
        };
        assert_eq!(
            summary,
            vec![
                expect("16", "slow", "regression"),
                expect("16", "fast", "improvement"),
                expect("64", "slow", "regression"),
                expect("64", "fast", "improvement"),
            ]
        );
        assert!(!c[0].row.contains_key("scenario"));
    }

    #[test]
    fn default_measurements_skip_bookkeeping() {
        let mut row = row_with(&[], None, "load.rps", &[1.0]);
        let m = &mut row.iterations[0].measurements;
        m.insert("load.requests".into(), 10.0);
        m.insert("app.rss".into(), 10.0);
        m.insert("app.size".into(), 10.0);
        m.insert("my.figure".into(), 1.0);
        assert_eq!(
            default_measurements(&[row]),
            vec!["app.rss", "load.rps", "my.figure"]
        );
    }
}
