//! Turning a row's iterations into its summary: crank's `--exclude LOW:HIGH --exclude-order ID`
//! trimming, then n/median/mean/stdev/CV/min/max per measurement over what is left.

use rigor_model::result::{Exclusion, Row, RunResult, Warning, WarningKind};

/// Marks the `low` lowest and `high` highest successful iterations of `row`, ranked by measurement
/// `by`, as excluded (crank's `--exclude LOW:HIGH --exclude-order ID`), so one cold start or one
/// lucky run does not move the median.
///
/// Earlier exclusion marks are cleared first, so calling it again as iterations complete is safe.
/// Ties are broken by iteration order. Failed iterations and iterations without `by` are never
/// ranked (failed ones are left out of summaries anyway). When fewer than one ranked iteration
/// would remain, nothing is excluded and a warning explains why: a summary of nothing helps no one.
pub fn apply_exclusions(row: &mut Row, low: usize, high: usize, by: &str) -> Option<Warning> {
    for it in row.iterations.iter_mut() {
        if it.excluded == Exclusion::Order {
            it.excluded = Exclusion::Kept;
        }
    }
    if low == 0 && high == 0 {
        return None;
    }
    let mut ranked: Vec<(usize, f64)> = row
        .iterations
        .iter()
        .enumerate()
        // An iteration already left out for interference is not ranked again.
        .filter(|(_, it)| it.error.is_none() && !it.excluded.is_excluded())
        .filter_map(|(pos, it)| {
            it.measurements
                .get(by)
                .copied()
                .filter(|v| !v.is_nan())
                .map(|v| (pos, v))
        })
        .collect();
    if ranked.len() < low + high + 1 {
        return Some(Warning::new(
            WarningKind::ExclusionsSkipped,
            format!(
                "{}: --exclude {low}:{high} by {by} needs at least {} iterations with that measurement, \
                 only {} have it; nothing was excluded",
                row.label(),
                low + high + 1,
                ranked.len()
            ),
            format!(
                "run more iterations (-i {}) or exclude fewer",
                (low + high + 1).max(3)
            ),
        ));
    }
    // Stable sort: equal values keep iteration order.
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    let n = ranked.len();
    for (rank, (pos, _)) in ranked.iter().enumerate() {
        if rank < low || rank >= n - high {
            row.iterations[*pos].excluded = Exclusion::Order;
        }
    }
    None
}

/// The medians over all of a row's iterations of the requests and bytes the application received
/// outside the measured window (readiness probes, warmup); `None` for a row with no iterations.
pub fn outside_window(row: &Row) -> Option<(f64, f64)> {
    if row.iterations.is_empty() {
        return None;
    }
    let median = |f: &dyn Fn(&rigor_model::result::Iteration) -> u64| {
        let v: Vec<f64> = row.iterations.iter().map(|it| f(it) as f64).collect();
        rigor_stats::summarize(&v).map(|s| s.median).unwrap_or(0.0)
    };
    Some((
        median(&|it| it.outside_window.requests),
        median(&|it| it.outside_window.bytes),
    ))
}

/// Completes a result whose writer kept no summaries (an older rigor, a hand-made file): each
/// row without one is summarised from its iterations, once, as the result is loaded, so no
/// reader computes a figure on the spot.
pub fn complete(result: &mut RunResult) {
    for row in result.rows.iter_mut().filter(|r| r.summary.is_empty()) {
        summarize_row(row);
    }
}

/// Fills `row.summary` from the included, successful iterations, one entry per measurement that
/// any of them reported (an id measured in only some iterations gets a smaller `n`, never zeros).
pub fn summarize_row(row: &mut Row) {
    let mut ids: Vec<String> = row
        .kept_iterations()
        .flat_map(|it| it.measurements.keys().cloned())
        .collect();
    ids.sort();
    ids.dedup();
    row.summary.clear();
    for id in ids {
        if let Some(s) = rigor_stats::summarize(&row.values(&id)) {
            row.summary.insert(id, s);
        }
    }
}

/// Rows and iterations built in code: this crate's tests, and (with the `fixtures` feature) the
/// tests of the reports and the command line that read them.
#[cfg(any(test, feature = "fixtures"))]
#[cfg_attr(not(test), allow(dead_code, unused_imports))]
pub mod tests {
    use super::*;
    use rigor_model::result::{Iteration, OutsideWindow};
    use std::collections::BTreeMap;

    /// An iteration with the given measurements, for hand-built results in tests. `index` is
    /// 0-based, as `rigor run` writes it.
    pub fn iteration(index: usize, values: &[(&str, f64)]) -> Iteration {
        let mut it = Iteration::new(index, index);
        it.pid = Some(1001 + index as i32);
        it.measurements = values.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        it.outside_window = OutsideWindow {
            requests: 2,
            bytes: 180,
        };
        it
    }

    /// A row whose iterations carry one value each of `id`.
    pub fn row_with(
        variables: &[(&str, &str)],
        variant: Option<&str>,
        id: &str,
        values: &[f64],
    ) -> Row {
        Row {
            scenario: "plaintext".into(),
            variables: variables
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
            variant: variant.map(str::to_string),
            iterations: values
                .iter()
                .enumerate()
                .map(|(i, v)| iteration(i, &[(id, *v)]))
                .collect(),
            summary: BTreeMap::new(),
            warnings: vec![],
            build_error: None,
            profile: None,
        }
    }

    /// The 1-based numbers of the excluded iterations.
    fn excluded(row: &Row) -> Vec<usize> {
        row.iterations
            .iter()
            .filter(|it| it.excluded.is_excluded())
            .map(|it| it.number())
            .collect()
    }

    #[test]
    fn excludes_lowest_and_highest_like_crank() {
        // crank --iterations 6 --exclude 2:1: the worst two and the best one go.
        let mut row = row_with(
            &[],
            None,
            "load.rps",
            &[100.0, 90.0, 120.0, 95.0, 110.0, 105.0],
        );
        assert!(apply_exclusions(&mut row, 2, 1, "load.rps").is_none());
        assert_eq!(excluded(&row), vec![2, 3, 4]);
        summarize_row(&mut row);
        let s = &row.summary["load.rps"];
        assert_eq!(s.n, 3);
        assert_eq!(s.median, 105.0);
        assert_eq!(s.min, 100.0);
        assert_eq!(s.max, 110.0);
    }

    #[test]
    fn failed_iterations_are_not_ranked_and_marks_reset() {
        let mut row = row_with(&[], None, "load.rps", &[1.0, 50.0, 60.0, 70.0]);
        row.iterations[0].error = Some("crashed".into());
        row.iterations[3].excluded = Exclusion::Order; // stale mark from an earlier call
        assert!(apply_exclusions(&mut row, 1, 0, "load.rps").is_none());
        assert_eq!(excluded(&row), vec![2]);
    }

    #[test]
    fn too_few_iterations_exclude_nothing_and_warn() {
        let mut row = row_with(&[], None, "load.rps", &[1.0, 2.0]);
        let w = apply_exclusions(&mut row, 1, 1, "load.rps").expect("warning");
        assert_eq!(w.kind, "exclusions_skipped");
        assert!(w.message.contains("needs at least 3"), "{}", w.message);
        assert!(excluded(&row).is_empty());
    }

    #[test]
    fn zero_exclusions_is_a_no_op() {
        let mut row = row_with(&[], None, "load.rps", &[1.0]);
        assert!(apply_exclusions(&mut row, 0, 0, "app.rss").is_none());
    }

    #[test]
    fn summary_covers_every_measurement_of_included_iterations() {
        let mut row = row_with(&[], None, "load.rps", &[10.0, 20.0, 30.0]);
        row.iterations[0]
            .measurements
            .insert("app.rss".into(), 61.0);
        row.iterations[1]
            .measurements
            .insert("app.rss".into(), 63.0);
        row.iterations[1].excluded = Exclusion::Order;
        row.iterations[2].error = Some("timeout".into());
        row.iterations[2]
            .measurements
            .insert("app.threads.max".into(), 9.0);
        summarize_row(&mut row);
        assert_eq!(
            row.summary.keys().cloned().collect::<Vec<_>>(),
            vec!["app.rss", "load.rps"]
        );
        assert_eq!(row.summary["load.rps"].n, 1);
        assert_eq!(row.summary["app.rss"].median, 61.0);
    }
}
