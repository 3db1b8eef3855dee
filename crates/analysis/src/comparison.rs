//! Candidate against baseline, measurement by measurement: the change with its confidence interval
//! and one of four verdicts, plus a note saying why when the answer is "not yet".
//!
//! Used by `rigor run` (variants of one row, interleaved) and `rigor compare` (saved results).

use super::{pairing, sequential, sufficiency, CONFIDENCE, POWER};
use rigor_model::declarations::{self, Declarations};
use rigor_model::measurements;
use rigor_model::result::{Comparison, Method, Row, RowKey, Sequential, Verdict};

/// The measurements worth a verdict by default: every id that some included, successful iteration
/// reported, in catalogue order (unknown ids, e.g. a command job's own figures, last), without the
/// catalogue's bookkeeping ids (not `judged`).
pub fn default_measurements(rows: &[Row]) -> Vec<String> {
    let ids = rows
        .iter()
        .flat_map(|r| r.kept_iterations())
        .flat_map(|it| it.measurements.keys())
        .filter(|id| measurements::info(id).is_none_or(|m| m.judged))
        .cloned();
    measurements::order(ids)
}

/// How the rows of a comparison may be compared, and at what confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Design {
    /// Whether the rows are variants of one run whose iteration `index` r ran in the same
    /// interleaved round r, so rounds can be compared as pairs.
    pub paired: bool,
    /// Confidence of intervals and verdicts: [`CONFIDENCE`], or the nominal level of the last
    /// look of a `--until-conclusive` run.
    pub confidence: f64,
    /// `--until-conclusive MAX`: the rounds the run could grow to, so the advice on an
    /// inconclusive change says when more than that would be needed.
    pub max_rounds: Option<usize>,
}

impl Design {
    /// Two independent samples at the usual confidence (`rigor compare` of separate runs).
    pub const UNPAIRED: Design = Design {
        paired: false,
        confidence: CONFIDENCE,
        max_rounds: None,
    };
}

/// Compares one candidate row with its baseline on each of `measurements`.
///
/// Measurements that neither side reported are skipped; one missing side gives an `inconclusive`
/// entry with a note, so a figure that vanished is visible rather than silently dropped. With too
/// few iterations to ever reach 95% confidence the medians and change are still filled in, but the
/// verdict is `inconclusive` and the note says how many iterations would be needed (counting the
/// iterations `--exclude` will drop again). An id with no known direction ([`declarations`]) gets
/// no verdict either, and a note saying how to declare it.
///
/// Unpaired, `change_pct` is the change of the two medians printed beside it; the interval is the
/// Hodges–Lehmann one. When the medians' change falls outside that interval the samples are not
/// one shifted distribution: the interval is withheld and the verdict is `inconclusive`, so the
/// figures shown side by side never contradict each other.
///
/// With a paired `design` the rounds both rows kept are compared as pairs ([`pairing`]):
/// `change_pct` is the median within-round change, the interval and p are the signed-rank ones
/// of the within-round ratios. Too few pairs for the signed-rank test to ever be significant
/// falls back to the unpaired comparison, with a note saying so.
///
/// `baseline`/`candidate` names are the rows' variants (`baseline`/`candidate` without one), `row`
/// their matrix variables and `scenario` the baseline's scenario; callers such as
/// `rigor compare` rename them.
pub fn compare_rows(
    baseline: &Row,
    candidate: &Row,
    measurements: &[String],
    threshold_pct: f64,
    decl: &Declarations,
    design: Design,
) -> Vec<Comparison> {
    let excluded = baseline.excluded_count().max(candidate.excluded_count());
    measurements
        .iter()
        .filter_map(|id| {
            // A measurement declared with a threshold of its own is judged at it.
            let judging = &Judging {
                threshold_pct: declarations::threshold(id, decl, threshold_pct),
                decl,
                confidence: design.confidence,
                max_rounds: design.max_rounds,
            };
            let sides = Sides {
                b: baseline.values(id),
                c: candidate.values(id),
                excluded,
            };
            if sides.b.is_empty() && sides.c.is_empty() {
                return None;
            }
            if !design.paired {
                return Some(unpaired(baseline, candidate, id, &sides, judging));
            }
            let pairs = pairing::pair(baseline, candidate, id);
            if rigor_stats::can_ever_be_significant_paired(pairs.baseline.len(), design.confidence)
            {
                return Some(paired(baseline, candidate, id, &pairs, judging));
            }
            let mut cmp = unpaired(baseline, candidate, id, &sides, judging);
            if !sides.b.is_empty() && !sides.c.is_empty() {
                let why = format!(
                    "{} round(s) paired, too few for the paired test: compared unpaired",
                    pairs.baseline.len()
                );
                cmp.note = Some(match cmp.note.take() {
                    Some(n) => format!("{why}; {n}"),
                    None => why,
                });
            }
            Some(cmp)
        })
        .collect()
}

/// What every verdict of one comparison is judged against.
struct Judging<'a> {
    threshold_pct: f64,
    decl: &'a Declarations,
    confidence: f64,
    max_rounds: Option<usize>,
}

/// Two independent samples: Hodges–Lehmann shift of the ratio, Mann–Whitney p.
fn unpaired(
    baseline: &Row,
    candidate: &Row,
    id: &str,
    sides: &Sides,
    judging: &Judging,
) -> Comparison {
    let mut cmp = unjudged(baseline, candidate, id, sides, judging.decl);
    cmp.method = Some(Method::Unpaired);
    cmp.confidence = Some(judging.confidence);
    if sides.b.is_empty() || sides.c.is_empty() {
        let side = if sides.b.is_empty() {
            "baseline"
        } else {
            "candidate"
        };
        cmp.note = Some(format!("{id} was not measured in the {side}"));
        return cmp;
    }
    let change = rigor_stats::compare(&sides.b, &sides.c, judging.confidence);
    fill_statistics(&mut cmp, change.as_ref(), sides);
    judge(&mut cmp, change, sides, judging);
    cmp
}

/// Round by round: the signed-rank comparison of the within-round ratios of `pairs`.
fn paired(
    baseline: &Row,
    candidate: &Row,
    id: &str,
    pairs: &pairing::Pairs,
    judging: &Judging,
) -> Comparison {
    let sides = Sides {
        b: pairs.baseline.clone(),
        c: pairs.candidate.clone(),
        excluded: pairs.dropped,
    };
    let mut cmp = unjudged(baseline, candidate, id, &sides, judging.decl);
    cmp.method = Some(Method::Paired);
    cmp.pairs = Some(pairs.baseline.len());
    cmp.confidence = Some(judging.confidence);
    let change = rigor_stats::compare_paired(&sides.b, &sides.c, judging.confidence);
    fill_statistics(&mut cmp, change.as_ref(), &sides);
    judge(&mut cmp, change, &sides, judging);
    cmp.adjusted = adjusted(pairs, judging.confidence);
    if pairs.dropped > 0 {
        let why = format!(
            "{} round(s) left unpaired (excluded, failed or unmeasured on one side) and left out",
            pairs.dropped
        );
        cmp.note = Some(match cmp.note.take() {
            Some(n) => format!("{n}; {why}"),
            None => why,
        });
    }
    cmp
}

/// One measurement's kept values on each side, and the most iterations `--exclude` dropped from
/// either (advice counts them again).
struct Sides {
    b: Vec<f64>,
    c: Vec<f64>,
    excluded: usize,
}

/// The entry before any statistics: names, medians and direction, verdict `inconclusive`.
fn unjudged(
    baseline: &Row,
    candidate: &Row,
    id: &str,
    sides: &Sides,
    decl: &Declarations,
) -> Comparison {
    Comparison {
        scenario: baseline.scenario.clone(),
        row: baseline.variables.clone(),
        measurement: id.to_string(),
        baseline: baseline
            .variant
            .clone()
            .unwrap_or_else(|| "baseline".into()),
        candidate: candidate
            .variant
            .clone()
            .unwrap_or_else(|| "candidate".into()),
        baseline_median: rigor_stats::summarize(&sides.b).map(|s| s.median),
        candidate_median: rigor_stats::summarize(&sides.c).map(|s| s.median),
        change_pct: None,
        ci_low_pct: None,
        ci_high_pct: None,
        shift_pct: None,
        p_value: None,
        direction: declarations::direction_str(id, decl),
        verdict: Verdict::Inconclusive,
        note: None,
        method: None,
        pairs: None,
        confidence: None,
        adjusted: None,
        floor: None,
    }
}

/// The medians' change, the shift, its interval and the p-value, each only where it is finite.
fn fill_statistics(cmp: &mut Comparison, change: Option<&rigor_stats::Change>, sides: &Sides) {
    // The statistics' own medians' change where there is one: the figure its interval was
    // checked against, not a second computation of it.
    cmp.change_pct = match (change, cmp.baseline_median, cmp.candidate_median) {
        (Some(ch), _, _) => Some(ch.median_change_pct).filter(|v| v.is_finite()),
        (None, Some(bm), Some(cm)) if bm != 0.0 => Some((cm - bm) / bm.abs() * 100.0),
        (None, Some(_), Some(0.0)) => Some(0.0),
        _ => None,
    };
    if let Some(ch) = change {
        cmp.shift_pct = Some(ch.change_pct).filter(|v| v.is_finite());
        // An unbounded interval (too few iterations) is "no interval", JSON null; so is one
        // the medians' own change falls outside of (it would contradict the figures beside it).
        if ch.agrees() {
            cmp.ci_low_pct = Some(ch.ci_low_pct).filter(|v| v.is_finite());
            cmp.ci_high_pct = Some(ch.ci_high_pct).filter(|v| v.is_finite());
        }
        cmp.p_value = Some(ch.p_value).filter(|v| v.is_finite());
    } else if cmp.method != Some(Method::Paired) {
        // No relative change exists (a zero baseline median), but the rank test still does.
        cmp.p_value = rigor_stats::mann_whitney_p(&sides.b, &sides.c).filter(|v| v.is_finite());
    }
}

/// The verdict, or the note saying why there is none: no direction, too few iterations, no
/// relative change, medians and interval disagreeing, or a change not yet settled.
fn judge(
    cmp: &mut Comparison,
    change: Option<rigor_stats::Change>,
    sides: &Sides,
    judging: &Judging,
) {
    let id = &cmp.measurement;
    let (b, c) = (&sides.b, &sides.c);
    // A figure that moves by whole pages or threads is judged on its absolute floor where that
    // is wider than the threshold at this baseline: never a verdict on one page more.
    let (threshold_pct, floor) =
        measurements::floored_threshold_pct(id, cmp.baseline_median, judging.threshold_pct);
    cmp.floor = floor;
    let Some(direction) = declarations::direction(id, judging.decl) else {
        cmp.note = Some(format!(
            "no verdict: whether higher or lower is better for {id} is not declared"
        ));
        return;
    };
    let is_paired = cmp.method == Some(Method::Paired);
    let settle = || {
        if is_paired {
            rounds_to_settle(b, c, change.as_ref(), threshold_pct, judging.confidence)
        } else {
            rigor_stats::iterations_to_settle(b, c, threshold_pct, judging.confidence)
        }
    };
    if !is_paired && !sufficiency::can_reach(b.len(), c.len()) {
        cmp.note = Some(sufficiency::too_few_note(
            b.len(),
            c.len(),
            sides.excluded,
            settle(),
            cmp.change_pct.zip(cmp.p_value),
        ));
        return;
    }
    let Some(ch) = change.clone() else {
        cmp.note = Some(match within_floor(&cmp.measurement, b, c) {
            Some(f) => {
                cmp.floor = Some(f);
                cmp.verdict = Verdict::NoChange;
                format!(
                    "every value of both sides is within {} of the others, the floor of {}",
                    rigor_model::format::number(f),
                    cmp.measurement
                )
            }
            None => identical_or_undefined(b, c, cmp),
        });
        return;
    };
    if !ch.agrees() {
        cmp.note = Some(disagreement_note(&ch, cmp));
        return;
    }
    let v = rigor_stats::verdict(&ch, direction, threshold_pct);
    cmp.verdict = v.into();
    if matches!(v, rigor_stats::Verdict::Inconclusive) {
        let kept = b.len().max(c.len());
        cmp.note = Some(sufficiency::settle_note(
            kept,
            sides.excluded,
            settle(),
            threshold_pct,
            judging.max_rounds,
        ));
    }
}

/// Rounds a paired comparison would likely need to settle: enough pairs, at the spread of the
/// within-round log ratios, to tell the current estimate from the nearest threshold edge 4 times
/// in 5. `None` when the estimate sits on an edge or the spread is unknown.
fn rounds_to_settle(
    b: &[f64],
    c: &[f64],
    change: Option<&rigor_stats::Change>,
    threshold_pct: f64,
    confidence: f64,
) -> Option<usize> {
    let estimate = change?.change_pct;
    let t = threshold_pct.abs();
    let gap = [t, -t]
        .iter()
        .map(|edge| (estimate - edge).abs())
        .fold(f64::INFINITY, f64::min);
    let spread = rigor_stats::log_ratio_spread(b, c)?;
    if spread == 0.0 {
        return Some(b.len());
    }
    rigor_stats::pairs_needed(spread, gap, confidence, POWER).map(|n| n.max(b.len()))
}

/// The paired change adjusted for the rounds' interference difference x: the log ratios less
/// θ·x (the change at equal interference on both sides), compared again as ratios of 1. `None` unless every paired round measured
/// interference on both sides and it varied.
fn adjusted(pairs: &pairing::Pairs, confidence: f64) -> Option<rigor_model::result::Adjusted> {
    let x: Vec<f64> = pairs.interference.iter().copied().collect::<Option<_>>()?;
    let d: Vec<f64> = pairs
        .baseline
        .iter()
        .zip(&pairs.candidate)
        .map(|(b, c)| (c / b).ln())
        .collect();
    if d.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let adj = rigor_stats::adjust(&d, &x)?;
    let ones = vec![1.0; adj.adjusted.len()];
    let ratios: Vec<f64> = adj.adjusted.iter().map(|v| v.exp()).collect();
    let ch = rigor_stats::compare_paired(&ones, &ratios, confidence)?;
    Some(rigor_model::result::Adjusted {
        theta: adj.theta,
        change_pct: ch.change_pct,
        ci_low_pct: Some(ch.ci_low_pct).filter(|v| v.is_finite()),
        ci_high_pct: Some(ch.ci_high_pct).filter(|v| v.is_finite()),
        variance_reduction: adj.variance_reduction,
    })
}

/// Why a comparison whose medians and Hodges–Lehmann interval disagree has no verdict.
fn disagreement_note(ch: &rigor_stats::Change, cmp: &Comparison) -> String {
    use rigor_model::format::signed_pct;
    let level = rigor_model::format::confidence_label(cmp.confidence.unwrap_or(CONFIDENCE));
    let (moved, typical) = if cmp.method == Some(Method::Paired) {
        (
            "the median within-round change is",
            "typical within-round change",
        )
    } else {
        ("the medians moved", "typical pairwise change")
    };
    format!(
        "{moved} {} but the {typical} is {} ({level} interval {} to {}): \
         the iterations do not move as one (two modes? drift?), so there is no verdict; \
         look at the iterations",
        signed_pct(ch.median_change_pct),
        signed_pct(ch.change_pct),
        signed_pct(ch.ci_low_pct),
        signed_pct(ch.ci_high_pct)
    )
}

/// The floor of `id` when every value of both sides lies within it of every other (a page cache
/// empty in the baseline and a few pages in the candidate): no relative change exists, and
/// none is needed to say nothing moved.
fn within_floor(id: &str, b: &[f64], c: &[f64]) -> Option<f64> {
    let f = measurements::floor(id)?;
    let all = b.iter().chain(c);
    let (lo, hi) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(*v), hi.max(*v))
    });
    (hi - lo < f).then_some(f)
}

/// When the statistics cannot express a relative change (a zero baseline, e.g. zero errors), the
/// only honest verdicts are "no change" for identical samples and "inconclusive" otherwise.
fn identical_or_undefined(b: &[f64], c: &[f64], cmp: &mut Comparison) -> String {
    let all_same = b.iter().chain(c).all(|v| *v == b[0]);
    if all_same {
        cmp.verdict = Verdict::NoChange;
        cmp.change_pct = Some(0.0);
        "every iteration of both sides gave the same value".into()
    } else {
        "a relative change is undefined for a zero baseline".into()
    }
}

/// Compares the variants of one run: rows with the same scenario and matrix `variables` form a
/// group; in each group the first variant of `variants_in_order` it has is the baseline and every
/// later one a candidate (scenarios may declare different variants). Groups keep the order rows
/// first appear in, and every entry carries its scenario. An empty `measurements` means
/// [`default_measurements`] of `rows`.
///
/// `paired` compares each group's rounds as pairs; `sequential` (the looks of
/// `--until-conclusive`) sets each group's confidence to that of its own last look.
pub fn compare_variants(
    rows: &[Row],
    variants_in_order: &[String],
    measurements: &[String],
    threshold_pct: f64,
    decl: &Declarations,
    paired: bool,
    sequential: Option<&Sequential>,
) -> Vec<Comparison> {
    let ids: Vec<String> = if measurements.is_empty() {
        default_measurements(rows)
    } else {
        measurements.to_vec()
    };
    let mut out = Vec::new();
    for present in variant_groups(rows, variants_in_order) {
        let Some((base, candidates)) = present.split_first() else {
            continue;
        };
        let design = Design {
            paired,
            confidence: sequential::confidence(sequential, sequential::rounds_done(&present)),
            max_rounds: sequential.map(|s| s.max),
        };
        for cand in candidates {
            out.extend(compare_rows(base, cand, &ids, threshold_pct, decl, design));
        }
    }
    out
}

/// The rows of each group (same scenario and matrix values) in `variants_in_order`, baseline
/// first; groups in the order their rows first appear.
pub fn variant_groups<'a>(rows: &'a [Row], variants_in_order: &[String]) -> Vec<Vec<&'a Row>> {
    // Each group's first row of each variant, found in one pass (linear in the rows).
    let mut groups: Vec<RowKey> = Vec::new();
    let mut found: std::collections::HashMap<(RowKey, &str), &Row> =
        std::collections::HashMap::new();
    let mut seen = std::collections::HashSet::new();
    for r in rows {
        let key = r.key_in(&r.scenario).group();
        if seen.insert(key.clone()) {
            groups.push(key.clone());
        }
        if let Some(variant) = r.variant.as_deref() {
            found.entry((key, variant)).or_insert(r);
        }
    }
    groups
        .into_iter()
        .map(|key| {
            let mut probe = (key, "");
            variants_in_order
                .iter()
                .filter_map(|v| {
                    probe.1 = v.as_str();
                    found.get(&probe).copied()
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::tests::row_with;

    fn none() -> Declarations {
        Declarations::new()
    }

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
        let c = compare_rows(
            &base,
            &cand,
            &["load.rps".into()],
            2.0,
            &none(),
            Design::UNPAIRED,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].verdict, "regression");
        assert_eq!(c[0].baseline, "base");
        assert_eq!(c[0].candidate, "slow");
        let change = c[0].change_pct.unwrap();
        assert!((change + 10.0).abs() < 1.0, "{change}");
        assert!(c[0].ci_high_pct.unwrap() < -2.0);
    }

    #[test]
    fn lower_latency_is_an_improvement_and_equal_is_no_change() {
        let base = row_with(&[], Some("a"), "load.latency.p99", &spread(10.0, 10));
        let cand = row_with(&[], Some("b"), "load.latency.p99", &spread(8.0, 10));
        let same = row_with(&[], Some("c"), "load.latency.p99", &spread(10.0, 10));
        let ids = vec!["load.latency.p99".to_string()];
        assert_eq!(
            compare_rows(&base, &cand, &ids, 2.0, &none(), Design::UNPAIRED)[0].verdict,
            "improvement"
        );
        assert_eq!(
            compare_rows(&base, &same, &ids, 2.0, &none(), Design::UNPAIRED)[0].verdict,
            "no change"
        );
    }

    #[test]
    fn figures_that_move_by_whole_threads_or_pages_are_judged_on_their_floor() {
        // One thread more in every iteration is +100%, clear as day to the statistics, and
        // still two threads within the floor: no change, with the floor said.
        let ids = vec![
            "app.threads.end".to_string(),
            "app.cgroup.cache".to_string(),
        ];
        let mut base = row_with(&[], None, "app.threads.end", &[1.0; 10]);
        let mut cand = row_with(&[], None, "app.threads.end", &[2.0; 10]);
        // A page of cache against fifteen: 4 KiB → 60 KiB, under the 1 MiB floor.
        let page = 4.0 / 1024.0;
        for (i, it) in base.iterations.iter_mut().enumerate() {
            it.measurements
                .insert(ids[1].clone(), page * (1.0 + i as f64 * 0.01));
        }
        for (i, it) in cand.iterations.iter_mut().enumerate() {
            it.measurements
                .insert(ids[1].clone(), 15.0 * page * (1.0 + i as f64 * 0.01));
        }
        let c = compare_rows(&base, &cand, &ids, 2.0, &none(), Design::UNPAIRED);
        assert_eq!(c.len(), 2);
        for (c, floor) in c.iter().zip([2.0, 1.0]) {
            assert_eq!(c.floor, Some(floor), "{c:?}");
            assert_eq!(c.verdict, "no change", "{c:?}");
        }
        // An empty page cache against a few pages: no relative change exists, and the floor
        // says nothing moved.
        let zero = row_with(&[], None, "app.cgroup.cache", &[0.0; 6]);
        let few = row_with(
            &[],
            None,
            "app.cgroup.cache",
            &[page, 2.0 * page, page, 0.0, page, page],
        );
        let c = &compare_rows(&zero, &few, &ids[1..], 2.0, &none(), Design::UNPAIRED)[0];
        assert_eq!(
            (c.floor, c.verdict),
            (Some(1.0), Verdict::NoChange),
            "{c:?}"
        );
        assert!(c.note.as_deref().unwrap().contains("floor"), "{c:?}");
        // 300 threads against 600: two threads are 0.67% of 300, the 2% threshold is the wider
        // one and applies; at 30 the floor (6.7%) would still be the wider.
        let base = row_with(&[], None, "app.threads.end", &spread(300.0, 10));
        let cand = row_with(&[], None, "app.threads.end", &spread(600.0, 10));
        let c = &compare_rows(&base, &cand, &ids[..1], 2.0, &none(), Design::UNPAIRED)[0];
        assert_eq!((c.floor, c.verdict), (None, Verdict::Regression), "{c:?}");
    }

    #[test]
    fn two_iterations_are_inconclusive_with_advice() {
        let base = row_with(&[], None, "load.rps", &[100.0, 101.0]);
        let cand = row_with(&[], None, "load.rps", &[50.0, 51.0]);
        let c = &compare_rows(
            &base,
            &cand,
            &["load.rps".into()],
            2.0,
            &none(),
            Design::UNPAIRED,
        )[0];
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
        let c = compare_rows(
            &base,
            &cand,
            &["load.rps".into(), "app.cpu".into()],
            2.0,
            &none(),
            Design::UNPAIRED,
        );
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
        let c = &compare_rows(
            &base,
            &cand,
            &["load.bad_responses".into()],
            2.0,
            &none(),
            Design::UNPAIRED,
        )[0];
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
        let c = compare_variants(&rows, &order, &[], 2.0, &none(), false, None);
        let summary: Vec<(String, String, String, String)> = c
            .iter()
            .map(|c| {
                (
                    c.row["connections"].clone(),
                    c.baseline.clone(),
                    c.candidate.clone(),
                    c.verdict.to_string(),
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
    fn the_change_shown_agrees_with_the_medians_beside_it() {
        // Two-mode samples whose medians rise 26.93 → 33.90 while the Hodges–Lehmann shift is
        // slightly negative (numpy: 100*expm1(median of pairwise log ratios) = -0.2932551319647856).
        let base = row_with(
            &[],
            Some("a"),
            "load.latency.p99",
            &[26.10, 26.50, 26.93, 34.10, 34.30],
        );
        let cand = row_with(
            &[],
            Some("b"),
            "load.latency.p99",
            &[26.00, 26.20, 33.90, 34.00, 34.20],
        );
        let c = &compare_rows(
            &base,
            &cand,
            &["load.latency.p99".into()],
            2.0,
            &none(),
            Design::UNPAIRED,
        )[0];
        assert_eq!(
            (c.baseline_median, c.candidate_median),
            (Some(26.93), Some(33.9))
        );
        // 100*(33.9/26.93 - 1) = 25.88191607872261: same sign as the medians.
        let change = c.change_pct.unwrap();
        assert!((change - 25.88191607872261).abs() < 1e-9, "{change}");
        assert!((c.shift_pct.unwrap() + 0.2932551319647856).abs() < 1e-9);
        // The interval [-23.6%, +29.9%] holds the medians' change, so it is shown.
        let (lo, hi) = (c.ci_low_pct.unwrap(), c.ci_high_pct.unwrap());
        assert!(lo <= change && change <= hi, "{lo} {change} {hi}");
        assert_eq!(c.verdict, "inconclusive");
    }

    #[test]
    fn advice_counts_the_iterations_exclude_drops() {
        // -i 6 --exclude 2:1 keeps 3 per side: 3 vs 3 can never reach 95%; 4 kept would need
        // -i 7, not the -i 4 a count of kept iterations alone suggests (the warning before the
        // run says the same: see `sufficiency`).
        let mut base = row_with(
            &[],
            Some("a"),
            "load.rps",
            &[100., 99., 101., 98., 102., 100.5],
        );
        let mut cand = row_with(&[], Some("b"), "load.rps", &[90., 89., 91., 88., 92., 90.5]);
        for r in [&mut base, &mut cand] {
            assert!(crate::summary::apply_exclusions(r, 2, 1, "load.rps").is_none());
        }
        let c = &compare_rows(
            &base,
            &cand,
            &["load.rps".into()],
            2.0,
            &none(),
            Design::UNPAIRED,
        )[0];
        assert_eq!(c.verdict, "inconclusive");
        let note = c.note.as_deref().unwrap();
        assert!(
            note.starts_with("n=3 vs 3 can never reach 95% confidence: run more iterations (-i 7: 4 kept after excluding 3)"),
            "{note}"
        );
    }

    #[test]
    fn every_scenario_is_compared_with_its_own_first_variant() {
        // Scenario `a` declares variants base/fast, scenario `b` declares old/new: one run's
        // variant order is [base, fast, old, new], and `b` has no `base`.
        let mut rows = Vec::new();
        for (scenario, variant, rps) in [
            ("a", "base", 100.0),
            ("a", "fast", 120.0),
            ("b", "old", 100.0),
            ("b", "new", 80.0),
        ] {
            let mut r = row_with(
                &[("connections", "64")],
                Some(variant),
                "load.rps",
                &spread(rps, 10),
            );
            r.scenario = scenario.into();
            rows.push(r);
        }
        let order: Vec<String> = ["base", "fast", "old", "new"].map(String::from).to_vec();
        let c = compare_variants(&rows, &order, &[], 2.0, &none(), false, None);
        let got: Vec<(&str, &str, &str, &str, &str)> = c
            .iter()
            .map(|c| {
                (
                    c.scenario.as_str(),
                    c.row["connections"].as_str(),
                    c.baseline.as_str(),
                    c.candidate.as_str(),
                    c.verdict.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("a", "64", "base", "fast", "improvement"),
                ("b", "64", "old", "new", "regression"),
            ]
        );
    }

    #[test]
    fn unknown_ids_get_a_verdict_only_once_declared() {
        // A self-reported throughput that dropped 10%.
        let base = row_with(&[], Some("a"), "cmd.msgs_per_sec", &spread(800_000.0, 10));
        let cand = row_with(&[], Some("b"), "cmd.msgs_per_sec", &spread(720_000.0, 10));
        let ids = vec!["cmd.msgs_per_sec".to_string()];
        let c = &compare_rows(&base, &cand, &ids, 2.0, &none(), Design::UNPAIRED)[0];
        assert_eq!(c.verdict, "inconclusive");
        assert_eq!(c.direction, None);
        assert!(
            c.note.as_deref().unwrap().contains("is not declared"),
            "{:?}",
            c.note
        );
        assert!(c.ci_high_pct.unwrap() < -2.0, "the figures are still there");
        let mut decl = none();
        decl.insert(
            "cmd.msgs_per_sec".into(),
            rigor_model::declarations::Declaration {
                direction: Some(rigor_model::declarations::Better::Higher),
                ..Default::default()
            },
        );
        let c = &compare_rows(&base, &cand, &ids, 2.0, &decl, Design::UNPAIRED)[0];
        assert_eq!(c.verdict, "regression");
        assert_eq!(c.direction.as_deref(), Some("higher"));
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

    fn paired_design() -> Design {
        Design {
            paired: true,
            confidence: 0.95,
            max_rounds: None,
        }
    }

    #[test]
    fn rounds_are_compared_as_pairs_when_enough_are_kept() {
        // Rounds drift ±15% together; the candidate is 3% slower in every round (±0.3%).
        let drift = [1.0, 1.15, 0.85, 1.1, 0.9, 1.05, 0.95, 1.12];
        let b: Vec<f64> = drift.iter().map(|d| 1000.0 * d).collect();
        let c: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(i, v)| v * (0.97 + 0.003 * ((i % 3) as f64 - 1.0)))
            .collect();
        let base = row_with(&[], Some("a"), "load.rps", &b);
        let cand = row_with(&[], Some("b"), "load.rps", &c);
        let ids = vec!["load.rps".to_string()];
        let p = &compare_rows(&base, &cand, &ids, 2.0, &none(), paired_design())[0];
        assert_eq!(p.method, Some(Method::Paired));
        assert_eq!(p.pairs, Some(8));
        assert_eq!(p.confidence, Some(0.95));
        assert_eq!(p.verdict, "regression");
        let want = rigor_stats::compare_paired(&b, &c, 0.95).unwrap();
        assert_eq!(p.change_pct, Some(want.median_change_pct));
        assert_eq!(p.ci_low_pct, Some(want.ci_low_pct));
        assert_eq!(p.p_value, Some(want.p_value));
        // The drift swamps the same samples compared unpaired.
        let u = &compare_rows(&base, &cand, &ids, 2.0, &none(), Design::UNPAIRED)[0];
        assert_eq!(u.method, Some(Method::Unpaired));
        assert_eq!(u.pairs, None);
        assert_eq!(u.verdict, "inconclusive");
    }

    #[test]
    fn too_few_pairs_fall_back_to_unpaired_with_a_note() {
        let mut base = row_with(&[], Some("a"), "load.rps", &spread(100.0, 7));
        let mut cand = row_with(&[], Some("b"), "load.rps", &spread(80.0, 7));
        // Two rounds lost on one side each: 5 pairs can never reach 95% (2/32).
        base.iterations[1].excluded = rigor_model::result::Exclusion::Interference;
        cand.iterations[4].error = Some("crashed".into());
        let c = &compare_rows(
            &base,
            &cand,
            &["load.rps".into()],
            2.0,
            &none(),
            paired_design(),
        )[0];
        assert_eq!(c.method, Some(Method::Unpaired));
        assert_eq!(c.verdict, "regression");
        let note = c.note.as_deref().unwrap();
        assert!(
            note.starts_with("5 round(s) paired, too few for the paired test: compared unpaired"),
            "{note}"
        );
    }

    #[test]
    fn dropped_rounds_are_said() {
        let base = row_with(&[], Some("a"), "load.rps", &spread(100.0, 9));
        let mut cand = row_with(&[], Some("b"), "load.rps", &spread(80.0, 9));
        cand.iterations[0].excluded = rigor_model::result::Exclusion::Interference;
        let c = &compare_rows(
            &base,
            &cand,
            &["load.rps".into()],
            2.0,
            &none(),
            paired_design(),
        )[0];
        assert_eq!((c.method, c.pairs), (Some(Method::Paired), Some(8)));
        assert_eq!(c.verdict, "regression");
        assert_eq!(
            c.note.as_deref(),
            Some("1 round(s) left unpaired (excluded, failed or unmeasured on one side) and left out")
        );
    }

    #[test]
    fn interference_that_explains_the_ratios_is_adjusted_for_and_shown() {
        // The candidate is 3% slower; rounds where its interference exceeded the baseline's
        // lost 1% more per point.
        let x = [0.0, 4.0, -2.0, 1.0, 6.0, -3.0, 2.0, 0.5];
        let b = row_with(&[], Some("a"), "load.rps", &[1000.0; 8]);
        let noise = [0.002, -0.001, 0.0, 0.001, -0.002, 0.0015, -0.0005, 0.0];
        let c_values: Vec<f64> = x
            .iter()
            .zip(noise)
            .map(|(x, n)| 1000.0 * (0.97f64.ln() - 0.01 * x + n).exp())
            .collect();
        let mut c = row_with(&[], Some("b"), "load.rps", &c_values);
        let mut b = b;
        for (i, xi) in x.iter().enumerate() {
            let m = |v: f64| rigor_model::result::MachineDuring {
                interference_pct: Some(v),
                app_wait_per_cpu: None,
                client_wait_per_cpu: None,
                ..Default::default()
            };
            b.iterations[i].machine = Some(m(10.0));
            c.iterations[i].machine = Some(m(10.0 + xi));
        }
        let cmp = &compare_rows(&b, &c, &["load.rps".into()], 2.0, &none(), paired_design())[0];
        let a = cmp.adjusted.as_ref().expect("adjusted");
        assert!((a.theta + 0.01).abs() < 0.001, "{a:?}");
        assert!(a.variance_reduction > 0.9, "{a:?}");
        // The change at equal interference on both sides: the 3% the candidate really lost.
        assert!((a.change_pct + 3.0).abs() < 0.3, "{a:?}");
        let width = |l: Option<f64>, h: Option<f64>| h.unwrap() - l.unwrap();
        assert!(width(a.ci_low_pct, a.ci_high_pct) < width(cmp.ci_low_pct, cmp.ci_high_pct));
        // Without interference readings there is nothing to adjust.
        for it in c.iterations.iter_mut() {
            it.machine = None;
        }
        let plain = &compare_rows(&b, &c, &["load.rps".into()], 2.0, &none(), paired_design())[0];
        assert!(plain.adjusted.is_none());
    }
}
