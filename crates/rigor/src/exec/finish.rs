//! After the last iteration: exclusions, summaries, row warnings, comparisons, the run's status,
//! and the exit code.

use crate::analysis::{
    comparison, gate, noise_floor, sequential, sufficiency, summary as summarize,
};
use crate::exit::Exit;
use crate::measurements::ids;
use crate::options::run::RunOptions;
use crate::plan::{Group, RunPlan};
use crate::result::{Row, RunResult, RunStatus, Sequential, Verdict, WarningKind};
use crate::{declarations, guards, interrupt};

/// Completes a run whose iterations are over: summaries, comparisons, status and end time.
/// `failed` says whether anything (a build, an iteration) failed.
pub fn conclude(result: &mut RunResult, options: &RunOptions, plan: &RunPlan, failed: bool) {
    summarize_and_compare(result, options, plan);
    result.status = if interrupt::interrupted() {
        RunStatus::Interrupted
    } else if failed {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    result.finished_at = Some(crate::clock::now_rfc3339());
}

/// Fills summaries, row warnings and comparisons of a finished run.
fn summarize_and_compare(result: &mut RunResult, options: &RunOptions, plan: &RunPlan) {
    super::row_figures::order_derived(result, plan);
    summarize_rows(result, options);
    result.sequential = looks(result, options, plan);
    result.noise_floor = final_noise_floor(result, options, plan);
    if plan.variant_order.len() < 2 {
        return;
    }
    compare_groups(result, options, plan);
}

/// The looks `--until-conclusive` has taken so far: at the planned rounds, then after every
/// added round. Recorded with every saved result, so one cut short still re-analyses at the
/// confidence its looks earned.
pub fn looks(result: &RunResult, options: &RunOptions, plan: &RunPlan) -> Option<Sequential> {
    let planned = plan.rows.iter().map(|r| r.iterations).max().unwrap_or(0);
    let all: Vec<&Row> = result.rows.iter().collect();
    sequential::looks(
        planned,
        sequential::rounds_done(&all),
        options.until_conclusive,
    )
}

/// The rows of `group` in comparison order: the baseline variant first (declared order without
/// variants).
fn group_rows<'a>(result: &'a RunResult, group: &Group, plan: &RunPlan) -> Vec<&'a Row> {
    let mut rows: Vec<&Row> = group.rows.iter().map(|i| &result.rows[*i]).collect();
    let position = |r: &&Row| {
        r.variant
            .as_ref()
            .and_then(|v| plan.variant_order.iter().position(|o| o == v))
    };
    rows.sort_by_key(position);
    rows
}

/// The noise floor of every group on the primary measurement, at the pairs it ended with.
fn final_noise_floor(
    result: &RunResult,
    options: &RunOptions,
    plan: &RunPlan,
) -> Vec<crate::result::NoiseFloor> {
    plan.groups
        .iter()
        .filter_map(|g| {
            let rows = group_rows(result, g, plan);
            noise_floor::floor(
                &rows,
                &options.primary,
                primary_threshold(result, options),
                None,
            )
        })
        .collect()
}

/// The threshold the primary measurement is judged at: its own (`[measurements.ID] threshold`,
/// `--threshold ID=PCT`), else the run's.
fn primary_threshold(result: &RunResult, options: &RunOptions) -> f64 {
    declarations::threshold(&options.primary, &result.measurements, options.threshold)
}

/// Said once per group as soon as its third round is done: the noise floor at the planned
/// iterations, so a run that cannot see the change it hunts says so before it is over.
pub fn say_noise_floor(
    slot: super::schedule::Slot,
    result: &RunResult,
    options: &RunOptions,
    plan: &RunPlan,
    progress: &super::progress::Progress,
) {
    let Some(group) = plan.groups.iter().find(|g| g.rows.contains(&slot.row)) else {
        return;
    };
    let Some(text) = noise_floor_note(result, group, slot.iteration, options, plan) else {
        return;
    };
    progress.note(&text);
}

/// The noise floor note of `group` when round `index` just completed its third round on every
/// row (exactly once: a re-run of that round adds a second iteration and says nothing).
fn noise_floor_note(
    result: &RunResult,
    group: &Group,
    index: usize,
    options: &RunOptions,
    plan: &RunPlan,
) -> Option<String> {
    let third = noise_floor::MIN_ROUNDS - 1;
    if index != third {
        return None;
    }
    let rows = group_rows(result, group, plan);
    let in_round = rows
        .iter()
        .map(|r| r.iterations.iter().filter(|it| it.index == third).count())
        .collect::<Vec<_>>();
    if in_round.iter().any(|n| *n != 1) {
        return None;
    }
    let planned = group
        .rows
        .iter()
        .map(|i| plan.rows[*i].iterations)
        .min()
        .unwrap_or(0);
    let threshold = primary_threshold(result, options);
    let f = noise_floor::floor(&rows, &options.primary, threshold, Some(planned))?;
    let label = group.key.label();
    let who = if label.is_empty() {
        String::new()
    } else {
        format!("{label}: ")
    };
    Some(format!("{who}{}", noise_floor::sentence(&f)))
}

/// Each row: its iterations in order, exclusions, summary and the row's own warnings.
fn summarize_rows(result: &mut RunResult, options: &RunOptions) {
    let primary = &options.primary;
    for row in &mut result.rows {
        // A slot's excluded iteration stays before its replacement (they share the index).
        row.iterations.sort_by_key(|i| (i.index, i.sequence));
        if let Some((low, high)) = options.exclude {
            if let Some(w) = summarize::apply_exclusions(row, low, high, &options.exclude_order) {
                row.warnings.push(w);
            }
        }
        summarize::summarize_row(row);
        if let Some(w) = guards::noisy_row(primary, row.summary.get(primary)) {
            row.warnings.push(w);
        }
        // Iterations that started with a dropped page cache carried nothing over.
        let caches: Vec<(usize, f64)> = row
            .iterations
            .iter()
            .filter(|i| i.error.is_none() && i.caches_dropped != Some(true))
            .filter_map(|i| Some((i.index, *i.measurements.get(ids::APP_CGROUP_CACHE)?)))
            .collect();
        guards::carried_page_cache_guard(&caches, &mut row.warnings);
    }
}

/// The variants of each group compared, and what the comparisons could not say.
fn compare_groups(result: &mut RunResult, options: &RunOptions, plan: &RunPlan) {
    let ids = comparison::default_measurements(&result.rows);
    let derived = super::row_figures::derived_groups(result, plan);
    let seq = result.sequential.clone();
    for g in plan.groups.iter().chain(&derived) {
        result.comparisons.extend(compare_group(
            result,
            g,
            options,
            &plan.variant_order,
            &ids,
            seq.as_ref(),
        ));
    }
    let undeclared = declarations::undeclared(
        result.comparisons.iter().map(|c| &c.measurement),
        &result.measurements,
    );
    result
        .warnings
        .extend(declarations::undeclared_warning(&undeclared));
    // The kept iterations of the smallest compared row, and what --exclude took from it.
    // Rows without the primary at all (the row that ran a command whose figures went to rows
    // of their own) say nothing about how many iterations it has, and rows of a scenario
    // without variants are compared with nothing.
    let Some((kept, excluded, failed)) = result
        .rows
        .iter()
        .filter(|r| r.variant.is_some())
        .map(|r| {
            let failed = r.iterations.iter().filter(|it| it.error.is_some()).count();
            (
                r.values(&options.primary).len(),
                excluded_by_order(r),
                failed,
            )
        })
        .filter(|(kept, excluded, _)| kept + excluded > 0)
        .min()
    else {
        return;
    };
    let already_said = result
        .warnings
        .iter()
        .any(|w| w.kind == WarningKind::TooFewIterations);
    if !already_said {
        result.warnings.extend(sufficiency::never_enough_after(
            kept + excluded + failed,
            excluded,
            failed,
        ));
    }
}

/// How many of a row's iterations `--exclude` left out: an iteration excluded for interference
/// was replaced, so it is not one the user's `-i` planned.
fn excluded_by_order(row: &Row) -> usize {
    row.iterations
        .iter()
        .filter(|it| it.excluded == crate::result::Exclusion::Order && it.error.is_none())
        .count()
}

/// The comparisons of one group's variants on `ids`, on the iterations `--exclude` keeps (so
/// `--until-conclusive` decides on the same data as the final verdict), round by round, at the
/// confidence of the group's last look when `sequential` holds the looks of the run.
fn compare_group(
    result: &RunResult,
    group: &Group,
    options: &RunOptions,
    variant_order: &[String],
    ids: &[String],
    sequential: Option<&Sequential>,
) -> Vec<crate::result::Comparison> {
    let rows: Vec<Row> = group
        .rows
        .iter()
        .map(|i| {
            let mut row = result.rows[*i].clone();
            if let Some((low, high)) = options.exclude {
                summarize::apply_exclusions(&mut row, low, high, &options.exclude_order);
            }
            row
        })
        .collect();
    comparison::compare_variants(
        &rows,
        variant_order,
        ids,
        options.threshold,
        &result.measurements,
        true,
        sequential,
    )
}

/// The groups whose variants are still inconclusive on the primary measurement, each judged at
/// the nominal confidence of this look (not a fresh 95%: see [`sequential`]).
pub fn inconclusive_groups(result: &RunResult, options: &RunOptions, plan: &RunPlan) -> Vec<Group> {
    let seq = looks(result, options, plan);
    let inconclusive = |g: &Group| {
        compare_group(
            result,
            g,
            options,
            &plan.variant_order,
            std::slice::from_ref(&options.primary),
            seq.as_ref(),
        )
        .iter()
        .any(|c| c.verdict == Verdict::Inconclusive)
    };
    // A command's own rows are re-run through the planned group that ran it.
    let derived = super::row_figures::derived_groups(result, plan);
    plan.groups
        .iter()
        .filter(|g| {
            inconclusive(g)
                || derived
                    .iter()
                    .any(|d| super::row_figures::descends_from(d, g) && inconclusive(d))
        })
        .cloned()
        .collect()
}

/// The exit code for a finished run: failure, then regression, then a limit not met, then
/// --strict warnings.
pub fn exit_code(result: &RunResult, options: &RunOptions, failed: bool) -> Exit {
    let rules = gate::Rules {
        fail_on_regression: options.fail_on_regression,
        watched: &options.gated,
        strict: &options.strict,
    };
    let failed = failed || result.status == RunStatus::Interrupted;
    let decision = gate::decide(
        &result.comparisons,
        failed,
        &gate::warning_kinds(result),
        &rules,
    )
    .limits(result.limits.iter().filter(|l| !l.passed).count());
    for line in decision.messages() {
        crate::console::err(&line);
    }
    decision.gate.into()
}
