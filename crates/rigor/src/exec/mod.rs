//! `rigor run` carried out: prepare (plan, outputs, the result's skeleton), build once per
//! distinct build, run every iteration in a fresh process in a (for variants, interleaved)
//! order while writing results as it goes, then summarise, compare, report and pick the exit
//! code. Process work sits behind an [`executor::Executor`]; the phases around it are the same
//! for every executor.

mod app;
mod app_on_host;
mod app_remote;
mod app_wire_job;
mod artifact;
mod build;
mod builds;
mod capped_log;
pub use builds::keep_builds;
mod app_steps;
mod command;
pub(crate) mod container;
mod contamination;
mod cpu_profile;
pub(crate) mod cpu_profile_rows;
mod environment;
mod executor;
mod finish;
mod iteration;
mod iteration_context;
mod load_hosts;
mod logtail;
pub(crate) mod output;
mod prepare;
mod priority;
mod procs;
mod progress;
mod readings;
mod reaper;
mod redact;
mod row_figures;
pub mod run_folder;
mod runner;
mod same_artifact;
mod schedule;
pub mod sentinel;
mod shell;
mod stale;
pub(crate) mod tool_child;
pub(crate) mod tool_hosts;
pub(crate) mod tool_load;
pub(crate) mod tool_on_host;
mod under_load;

#[cfg(test)]
mod mock;
#[cfg(test)]
mod runner_tests;

use crate::console;
use crate::exit::Exit;
use crate::failure::Failure;
use crate::options::run::RunOptions;
use crate::result::{RunResult, RunStatus};
use crate::{interrupt, report};
pub use app_on_host::AppHost;
pub(crate) use build::kill_tree;
use executor::LocalExecutor;
use output::Outputs;
use progress::Progress;
use runner::Runner;
use std::path::Path;

/// What `rigor agent` needs before it starts anything: the sentinel (forked while it is still
/// single-threaded) and the reaper, so no application outlives the agent however it ends.
pub fn agent_guards() {
    sentinel::start();
    reaper::become_subreaper();
}

/// Runs `rigor run` on this machine; returns how it ended.
pub fn execute(options: &RunOptions) -> Result<Exit, Failure> {
    execute_then(options, |_| Ok(()))
}

/// Runs `rigor run` as [`execute`] does and hands the finished result to `after` once the report
/// is printed: how `rigor bench` ends the same run with its own verdict lines (`after` says
/// whether they reached stdout, as [`console::report`] does).
pub fn execute_then(
    options: &RunOptions,
    after: impl FnOnce(&RunResult) -> anyhow::Result<()>,
) -> Result<Exit, Failure> {
    if let Some(spec) = &options.store {
        interrupt::set_undone(Some(format!(
            "rigor: the run was not stored in the history {} (stopped at once); `rigor history \
             import` loads its result file",
            spec.name()
        )));
    }
    let run = measure(options)?;
    let shown = report_run(&run.result, &run.outputs, &run.run_dir, run.written)
        .and_then(|()| after(&run.result));
    // The report is what the run is for: one lost (a full disk) fails a run that went well.
    if let Err(e) = &shown {
        console::err(&format!("error: {e}"));
    }
    // After the result files: a store that fails loses nothing the run measured.
    let stored = store_history(&run.result, &run.options);
    interrupt::set_undone(None);
    let exit = match finish::exit_code(&run.result, &run.options, run.failed) {
        Exit::Success if !stored || shown.is_err() => Exit::Failed,
        exit => exit,
    };
    Ok(pivot_check(&run.result, &run.options.view, exit))
}

/// A finished run before its report: what `rigor bisect` reads of each run it makes.
pub struct Measured {
    pub result: RunResult,
    /// Whether anything (a build, an iteration, writing the result) failed.
    pub failed: bool,
    /// The options as the plan completed them (the primary of a command job…).
    pub options: RunOptions,
    outputs: Outputs,
    run_dir: std::path::PathBuf,
    /// Whether the final result files were all written where they were asked for.
    written: bool,
}

/// Runs `options` to the end and writes its result files, printing no report.
pub fn measure(options: &RunOptions) -> Result<Measured, Failure> {
    // The sentinel is forked while rigor is still single-threaded, before any handler or thread.
    sentinel::start();
    interrupt::install();
    reaper::become_subreaper();
    let prepare::Prepared {
        plan,
        mut outputs,
        run_dir,
        seed,
        mut result,
        busy_before_pct,
    } = prepare::prepare(options)?;
    let options = options.for_plan(&plan);
    let options = &options;
    // The primary of what the plan runs picks each timeline's median iteration.
    outputs.view = options.view.in_file();
    outputs.remember(&result);
    interrupt::set_last_words(output::write_last_words);
    keep_results_on_panic();
    let progress = Progress::new(plan.total_iterations() as u64);
    for w in &result.warnings {
        progress.note(&format!("warning: {}", report::warning_text(w)));
    }
    if plan
        .rows
        .iter()
        .any(|r| r.plan.work.load().is_some_and(|l| l.priority_high))
    {
        priority::raise_own(&mut result);
    }
    let mut executor = LocalExecutor;
    let builds = builds::build_all(&mut executor, &plan.rows, &run_dir, &progress, &mut result);
    let mut save = |r: &RunResult| {
        if let Err(e) = outputs.save(r, false) {
            progress.note(&format!("error: {e}"));
        }
    };
    let runner = Runner::new(&plan, options, &builds, &progress, &run_dir)
        .with_machine_before(busy_before_pct);
    let mut failed = runner.run(&mut executor, &mut result, seed, &mut save);
    load_hosts::disconnect_all();
    app_remote::record_hosts(&mut result.environment);
    app_remote::disconnect_all();
    finish::conclude(&mut result, options, &plan, failed);
    cpu_profile_rows::conclude(&mut result, &run_dir);
    result.limits = crate::analysis::limits::check(&plan.limits, &result);
    if let Some(tool) = &options.selection.cross_check {
        let pipelined = plan
            .rows
            .iter()
            .any(|r| r.plan.work.load().is_some_and(|l| l.spec.pipeline > 1));
        result.cross_check = Some(crate::crosscheck::findings(&result, tool.tool, pipelined));
    }
    let written = match outputs.save(&result, true) {
        Ok(()) => true,
        Err(e) => {
            console::err(&format!("error: {e}"));
            failed = true;
            false
        }
    };
    Ok(Measured {
        result,
        failed,
        options: options.clone(),
        outputs,
        run_dir,
        written,
    })
}

/// Makes the worktree of a commit variant and runs the job's verified build alone, logging to
/// `log` and keeping the artifact under `snapshots`: `rigor bisect` skips a commit that does
/// not build before measuring anything against it.
pub fn build_only(app: &crate::config::AppJob, log: &Path, snapshots: &Path) -> anyhow::Result<()> {
    crate::config::ensure_worktrees([app]).map_err(anyhow::Error::msg)?;
    builds::build_once(app, log, snapshots)
}

/// Appends the run to the history store (unless `--no-store`); says where, or why it could
/// not. Returns false when the store failed.
fn store_history(result: &RunResult, options: &RunOptions) -> bool {
    let Some(spec) = &options.store else {
        return true;
    };
    match crate::history::store_run(spec, result, crate::history::HOOKS) {
        Ok(crate::history::record::Stored::Added(id)) => {
            console::err(&format!("history: run {id} stored in {}", spec.name()));
            true
        }
        Ok(crate::history::record::Stored::AlreadyThere(id)) => {
            console::err(&format!("history: already in {} as run {id}", spec.name()));
            true
        }
        Err(e) => {
            console::err(&format!(
                "error: cannot store the run in the history: {e} (the result files are written; \
                 `rigor history import` loads them later)"
            ));
            false
        }
    }
}

/// `--pivot` or `--pivot-by` naming what no row measured can only be known once the rows are
/// in (a command's figures are named by its output): an error naming what exists, exit 2 unless
/// the run already ended worse (a failure or a gated regression keeps its own code).
fn pivot_check(result: &RunResult, view: &report::View, exit: Exit) -> Exit {
    let problem = report::pivot_blocks::problem(result, view);
    match problem {
        Some(p) => {
            console::err(&format!("error: {p}"));
            if exit == Exit::Success {
                Exit::Usage
            } else {
                exit
            }
        }
        None => exit,
    }
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

/// Prints the report, says where the files are (or that they were not all written), and feeds
/// `$GITHUB_STEP_SUMMARY`. An error when the report did not reach stdout (a reader that went
/// away is none).
fn report_run(
    result: &RunResult,
    outputs: &Outputs,
    run_dir: &Path,
    written: bool,
) -> anyhow::Result<()> {
    let mut shown = console::report(&report::terminal::render_with(
        result,
        &outputs.view.on_terminal(),
        report::terminal::use_color(),
    ));
    if let Some(c) = &result.cross_check {
        shown = shown.and_then(|()| console::report(&crate::crosscheck::render(c)));
    }
    if written {
        console::err(&format!(
            "results: {} (logs in {})",
            outputs.json.display(),
            run_dir.display()
        ));
    } else {
        console::err(&format!(
            "results: NOT all written (the error above says which and why); logs in {}",
            run_dir.display()
        ));
    }
    if written && result.status == RunStatus::Interrupted {
        console::err(&format!(
            "rigor: interrupted; finished iterations are kept in {}",
            outputs.json.display()
        ));
    }
    if !result.comparisons.is_empty() {
        if let Some(problem) =
            crate::step_summary::append(&report::markdown::render_with(result, &outputs.view))
        {
            console::err(&problem);
        }
    }
    shown
}
