//! After the last iteration: exclusions, summaries, row warnings, comparisons, and the exit code.

use crate::analysis::{comparison, gate, sufficiency, summary as summarize};
use crate::cli::run::RunArgs;
use crate::exit::Exit;
use crate::result::{Row, RunResult};
use crate::{declarations, guards};

/// Fills summaries, row warnings and comparisons of a finished run.
pub fn summarize_and_compare(
    result: &mut RunResult,
    args: &RunArgs,
    exclude: Option<(usize, usize)>,
    variant_order: &[String],
    groups: &[Vec<usize>],
    threshold: f64,
) {
    for row in &mut result.rows {
        row.iterations.sort_by_key(|i| i.index);
        if let Some((low, high)) = exclude {
            if let Some(w) = summarize::apply_exclusions(row, low, high, &args.exclude_order) {
                row.warnings.push(w);
            }
        }
        summarize::summarize_row(row);
        if let Some(w) = guards::noisy_row(&args.primary, row.summary.get(&args.primary)) {
            row.warnings.push(w);
        }
        // Iterations that started with a dropped page cache carried nothing over.
        let caches: Vec<(usize, f64)> = row
            .iterations
            .iter()
            .filter(|i| i.error.is_none() && i.caches_dropped != Some(true))
            .filter_map(|i| Some((i.index, *i.measurements.get("app.cgroup.cache")?)))
            .collect();
        guards::carried_page_cache_guard(&caches, &mut row.warnings);
    }
    if variant_order.len() < 2 {
        return;
    }
    let ids = comparison::default_measurements(&result.rows);
    for g in groups {
        let rows: Vec<Row> = g.iter().map(|i| result.rows[*i].clone()).collect();
        result.comparisons.extend(comparison::compare_variants(
            &rows,
            variant_order,
            &ids,
            threshold,
            &result.measurements,
        ));
    }
    let undeclared = declarations::undeclared(
        result.comparisons.iter().map(|c| &c.measurement),
        &result.measurements,
    );
    result
        .warnings
        .extend(declarations::undeclared_warning(&undeclared));
    // The kept iterations of the smallest row, and what --exclude took from it.
    let (kept, excluded) = result
        .rows
        .iter()
        .map(|r| {
            let kept = r.values(&args.primary).len();
            let dropped = r
                .iterations
                .iter()
                .filter(|it| it.excluded && it.error.is_none())
                .count();
            (kept, dropped)
        })
        .min()
        .unwrap_or((0, 0));
    let already_said = result
        .warnings
        .iter()
        .any(|w| w.kind == "too_few_iterations");
    if !already_said {
        result
            .warnings
            .extend(sufficiency::never_enough(kept + excluded, excluded));
    }
}

/// Whether any group of variants is still inconclusive on the primary measurement.
pub fn inconclusive_groups(
    result: &RunResult,
    args: &RunArgs,
    variant_order: &[String],
    groups: &[Vec<usize>],
    threshold: f64,
) -> Vec<Vec<usize>> {
    groups
        .iter()
        .filter(|g| {
            let rows: Vec<Row> = g.iter().map(|i| result.rows[*i].clone()).collect();
            comparison::compare_variants(
                &rows,
                variant_order,
                std::slice::from_ref(&args.primary),
                threshold,
                &result.measurements,
            )
            .iter()
            .any(|c| c.verdict == "inconclusive")
        })
        .cloned()
        .collect()
}

/// The exit code for a finished run: failure, then regression, then --strict warnings.
pub fn exit_code(result: &RunResult, args: &RunArgs, failed: bool) -> Exit {
    let watched = args
        .measurements
        .clone()
        .unwrap_or_else(|| vec![args.primary.clone()]);
    let rules = gate::Rules {
        fail_on_regression: args.fail_on_regression,
        watched: &watched,
        strict: args.strict,
    };
    let failed = failed || result.status == "interrupted";
    let decision = gate::decide(
        &result.comparisons,
        failed,
        gate::has_warnings(result),
        &rules,
    );
    for line in decision.messages() {
        super::console::err(&line);
    }
    decision.exit
}
