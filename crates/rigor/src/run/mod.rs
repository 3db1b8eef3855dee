//! `rigor run`: plans every selected scenario, builds once per distinct build, runs every
//! iteration in a fresh process in a (for variants, interleaved) order, writes results as it
//! goes, then summarises, compares and reports.

mod app;
mod artifact;
mod build;
mod builds;
pub mod console;
mod environment;
mod finish;
mod iteration;
mod logtail;
mod output;
mod plan;
mod procs;
mod progress;
mod readings;
mod reaper;
mod schedule;
pub mod sentinel;
mod settings;
mod shell;
mod stale;

use crate::cli::run::RunArgs;
use crate::exit::Exit;
use crate::failure::Failure;
use crate::measurements::ids;
use crate::result::{Iteration, Row, RunResult, RunStatus, WarningKind, SCHEMA};
use crate::{guards, interrupt, report};
use iteration::{run_iteration, IterationContext};
use output::Outputs;
use progress::Progress;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs `rigor run`; returns the process exit code.
pub fn execute(args: &RunArgs) -> Result<Exit, Failure> {
    // The sentinel is forked while rigor is still single-threaded, before any handler or thread.
    sentinel::start();
    interrupt::install();
    reaper::become_subreaper();
    let (settings, planned) = match plan::prepare(args) {
        Ok(ready) => ready,
        Err(problems) => {
            plan::print_problems(&problems);
            return Ok(Exit::Usage);
        }
    };
    if let Some(e) =
        planned.exclusions_leave_nothing(settings.exclude, args.until_conclusive.is_some())
    {
        return Err(Failure::usage(e));
    }
    // Two builds whose outputs rigor could not tell apart: refused before anything is built.
    if let Err(e) = builds::check_plan(&planned.rows) {
        return Err(Failure::usage(e));
    }

    // Where logs and results go.
    let run_dir = args.out_dir.join(crate::clock::now_compact());
    if let Err(e) = std::fs::create_dir_all(&run_dir) {
        return Err(Failure::usage(format!(
            "cannot create {}: {e}",
            run_dir.display()
        )));
    }
    let run_dir = std::fs::canonicalize(&run_dir).unwrap_or(run_dir);
    let outputs = Outputs {
        json: args
            .json
            .clone()
            .unwrap_or_else(|| run_dir.join("result.json")),
        markdown: args.markdown.clone(),
        csv: args.csv.clone(),
        html: args.html.clone(),
        run_dir: run_dir.clone(),
    };
    if let Err(e) = outputs.check() {
        let _ = std::fs::remove_dir(&run_dir);
        return Err(Failure::usage(e));
    }
    let seed = args.seed.unwrap_or_else(rand::random);
    let (cgroup_note, mut housekeeping) = housekeeping();
    let mut result = new_result(args, &planned, seed, &cgroup_note);
    result.warnings.append(&mut housekeeping);
    result
        .warnings
        .extend(planned.never_enough(settings.exclude, args.until_conclusive.is_some()));
    outputs.remember(&result);
    interrupt::set_last_words(output::write_last_words);
    keep_results_on_panic();
    let total: usize = planned.rows.iter().map(|r| r.iterations).sum();
    let progress = Progress::new(total as u64);
    for w in &result.warnings {
        progress.note(&format!("warning: {}", report::warning_text(w)));
    }

    if planned.rows.iter().any(|r| r.plan.load.priority_high) {
        app::remember_base_nice();
        let outcome = rigor_probe::set_priority_high(std::process::id() as i32);
        if let serde_json::Value::Object(env) = &mut result.environment {
            env.insert(
                "load_priority".into(),
                match &outcome {
                    Ok(()) => "raised".into(),
                    Err(why) => format!("not raised: {why}").into(),
                },
            );
        }
        if let Err(why) = outcome {
            result.warnings.push(crate::result::Warning::new(
                WarningKind::Priority,
                format!("could not raise the load client's priority: {why}"),
                "run as root (or with CAP_SYS_NICE), or drop `priority = \"high\"`",
            ));
        }
    }
    let builds = builds::build_all(&planned.rows, &run_dir, &progress, &mut result);
    let (left, _) = reaper::sweep(std::time::Duration::from_millis(300));
    if !left.is_empty() {
        progress.note(&format!(
            "note: the build left processes running; killed {}",
            procs::names(&left)
        ));
    }
    let mut failed = false;
    for (i, p) in planned.rows.iter().enumerate() {
        if let Some(Err(e)) = builds.get(&p.build_key) {
            failed = true;
            let mut it = Iteration::new(0, 0);
            it.error = Some(e.clone());
            result.rows[i].iterations.push(it);
        }
    }

    // Iterations, in schedule order; --until-conclusive adds rounds while the primary
    // measurement is inconclusive.
    let groups = planned.groups();
    let mut rng = schedule::rng(seed);
    let max_n = planned.rows.iter().map(|r| r.iterations).max().unwrap_or(0);
    let mut slots: Vec<schedule::Slot> = schedule::plan(&groups, 0, max_n, &mut rng)
        .into_iter()
        .filter(|s| s.iteration < planned.rows[s.row].iterations)
        .collect();
    let mut done_rounds = max_n;
    let mut sequence = 0usize;
    // Rows whose application never started: after its first failure to start, a row stops
    // (it would fail the same way every time) unless --keep-going.
    let mut started = vec![false; planned.rows.len()];
    let mut given_up = vec![false; planned.rows.len()];
    loop {
        for slot in std::mem::take(&mut slots) {
            if interrupt::interrupted() {
                break;
            }
            if given_up[slot.row] {
                progress.advance();
                continue;
            }
            let p = &planned.rows[slot.row];
            let Some(Ok(built)) = builds.get(&p.build_key) else {
                continue;
            };
            let label = row_label(&result.rows[slot.row], slot.row, planned.rows.len());
            let ctx = IterationContext {
                row: &p.plan,
                built,
                index: slot.iteration,
                sequence,
                log: run_dir.join(format!(
                    "row{}-iter{}.log",
                    slot.row + 1,
                    slot.iteration + 1
                )),
                sample_interval: settings.sample_interval,
                drop_caches: args.drop_caches,
                progress: &progress,
                label: label.clone(),
            };
            let it = run_iteration(&ctx);
            sequence += 1;
            progress.advance();
            let start_failed =
                it.error.is_some() && !it.measurements.contains_key(ids::APP_START_TIME);
            started[slot.row] |= !start_failed;
            match &it.error {
                Some(e) => {
                    failed = true;
                    progress.note(&format!(
                        "error: {label} iteration {} failed: {e}",
                        slot.iteration + 1
                    ));
                    if start_failed
                        && !started[slot.row]
                        && !args.keep_going
                        && !interrupt::interrupted()
                    {
                        given_up[slot.row] = true;
                        let message = "the application failed to start, so the row's other \
                                       iterations were skipped";
                        progress.note(&format!(
                            "note: {label}: {message} (--keep-going tries every one)"
                        ));
                        result.rows[slot.row]
                            .warnings
                            .push(crate::result::Warning::new(
                                WarningKind::RowStopped,
                                message,
                                "fix what stops it from starting, or pass --keep-going",
                            ));
                    }
                }
                None => progress.note(&iteration_line(&label, &it)),
            }
            result.rows[slot.row].iterations.push(it);
            if let Err(e) = outputs.save(&result, false) {
                progress.note(&format!("error: {e}"));
            }
        }
        let Some(max) = args.until_conclusive else {
            break;
        };
        if interrupt::interrupted() || done_rounds >= max || planned.variant_order.len() < 2 {
            break;
        }
        let again = finish::inconclusive_groups(
            &result,
            args,
            &planned.variant_order,
            &groups,
            settings.threshold,
        );
        if again.is_empty() {
            break;
        }
        slots = schedule::plan(&again, done_rounds, done_rounds + 1, &mut rng);
        progress.grow(slots.len() as u64);
        done_rounds += 1;
    }
    progress.finish();

    finish::summarize_and_compare(
        &mut result,
        args,
        settings.exclude,
        &planned.variant_order,
        &groups,
        settings.threshold,
    );
    result.status = if interrupt::interrupted() {
        RunStatus::Interrupted
    } else if failed {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    result.finished_at = Some(crate::clock::now_rfc3339());
    if let Err(e) = outputs.save(&result, true) {
        console::err(&format!("error: {e}"));
        failed = true;
    }
    report_run(&result, &outputs, &run_dir);
    Ok(finish::exit_code(&result, args, failed))
}

/// A panic of the run itself (never expected) still writes what was measured and kills the
/// application, after the usual panic message.
fn keep_results_on_panic() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        if std::thread::current().name() == Some("main") {
            interrupt::kill_all();
            output::write_after_panic();
        }
    }));
}

/// The result skeleton: the machine's story, run-level guards, one empty row per planned row.
fn new_result(args: &RunArgs, planned: &plan::RunPlan, seed: u64, cgroup_note: &str) -> RunResult {
    let env = rigor_probe::environment();
    let apps: Vec<&crate::config::AppJob> = planned.rows.iter().map(|p| &p.plan.app).collect();
    // Debug-build warnings come per build, from the builds themselves.
    let warnings = guards::noisy_machine_before_run(&env, guards::busy_now_pct());
    RunResult {
        schema: SCHEMA.into(),
        rigor_version: env!("CARGO_PKG_VERSION").into(),
        scenario: planned.scenarios.join(","),
        profile: args.profile.clone(),
        description: args.description.clone(),
        started_at: crate::clock::now_rfc3339(),
        finished_at: None,
        status: RunStatus::Running,
        seed: (planned.variant_order.len() > 1).then_some(seed),
        environment: environment::collect(&env, &apps, cgroup_note),
        warnings,
        builds: Vec::new(),
        rows: planned
            .rows
            .iter()
            .map(|p| Row {
                scenario: p.scenario.clone(),
                variables: p.plan.variables.clone(),
                variant: p.plan.variant.clone(),
                iterations: Vec::new(),
                summary: BTreeMap::new(),
                warnings: Vec::new(),
            })
            .collect(),
        comparisons: Vec::new(),
        measurements: planned.declarations.clone(),
    }
}

/// Before the first iteration: makes (and removes) one cgroup, so the result says where
/// iterations' cgroups go or why there are none; removes cgroups of rigor runs that died
/// beside it; kills processes a dead rigor left running. Returns the cgroup note and warnings.
fn housekeeping() -> (String, Vec<crate::result::Warning>) {
    let mut warnings = Vec::new();
    let left = reaper::previous_leftovers();
    if !left.is_empty() {
        warnings.push(crate::result::Warning::new(
            WarningKind::Leftovers,
            format!(
                "processes of an earlier rigor run that ended abnormally were still running \
                 (killed now): {}",
                left.join(", ")
            ),
            "they competed for the machine until now; nothing to do unless it happens again",
        ));
    }
    let probe_name = format!("rigor-{}-check", std::process::id());
    let note = match rigor_probe::Cgroup::create(&probe_name) {
        Ok(c) => {
            let parents: Vec<PathBuf> = c
                .procs_path()
                .iter()
                .filter_map(|p| p.parent()?.parent().map(Path::to_path_buf))
                .collect();
            let d = c.describe().replace(&format!("/{probe_name}"), "");
            let _ = c.remove();
            let stale = reaper::stale_cgroups(&parents);
            if !stale.is_empty() {
                let names: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
                console::err(&format!(
                    "note: removed cgroups of rigor runs that ended abnormally: {}",
                    names.join(", ")
                ));
            }
            format!("{d} (a new cgroup per iteration)")
        }
        Err(why) => format!("unavailable: {why}"),
    };
    (note, warnings)
}

/// Prints the report, says where the files are, and feeds `$GITHUB_STEP_SUMMARY`.
fn report_run(result: &RunResult, outputs: &Outputs, run_dir: &Path) {
    console::out(&report::terminal::render(
        result,
        report::terminal::use_color(),
    ));
    console::err(&format!(
        "results: {} (logs in {})",
        outputs.json.display(),
        run_dir.display()
    ));
    if result.status == RunStatus::Interrupted {
        console::err(&format!(
            "rigor: interrupted; finished iterations are kept in {}",
            outputs.json.display()
        ));
    }
    if !result.comparisons.is_empty() {
        if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY") {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(PathBuf::from(summary))
            {
                let _ = writeln!(f, "{}", report::markdown::render(result));
            }
        }
    }
}

/// `plaintext row 2/3 (connections=64 slow)`.
fn row_label(row: &Row, index: usize, total: usize) -> String {
    let detail = match row.label() {
        l if l == row.scenario => String::new(),
        l => format!(" ({l})"),
    };
    format!("{} row {}/{}{detail}", row.scenario, index + 1, total)
}

/// One line per finished iteration, so progress survives in a non-terminal log.
fn iteration_line(label: &str, it: &Iteration) -> String {
    let m = |id: &str| it.measurements.get(id).copied();
    let mut s = format!("{label} iteration {}:", it.number());
    if let Some(v) = m(ids::LOAD_RPS) {
        s.push_str(&format!(" {} rps", report::format::number(v)));
    }
    if let Some(v) = m(ids::LOAD_LATENCY_P99) {
        s.push_str(&format!(", p99 {v:.2} ms"));
    }
    if let Some(v) = m(ids::APP_RSS) {
        s.push_str(&format!(", rss {v:.1} MiB"));
    }
    if let Some(v) = m(ids::APP_CPU) {
        s.push_str(&format!(", cpu {v:.0}%"));
    }
    for w in &it.warnings {
        s.push_str(&format!("\n  warning: {}", report::warning_text(w)));
    }
    s
}
