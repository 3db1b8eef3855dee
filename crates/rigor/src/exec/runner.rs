//! The schedule loop: every iteration of every row in schedule order (variants interleaved),
//! `--until-conclusive` rounds while the primary measurement is inconclusive, a row given up
//! after its application first failed to start (unless `--keep-going`), every failure noted,
//! and the result saved after each iteration. An iteration the rest of the machine interfered
//! with far beyond the run's baseline is excluded and re-run in its slot, within a budget of
//! half as many again as the iterations scheduled. The work itself is the [`Executor`]'s.

use super::build::Built;
use super::builds::Builds;
use super::contamination;
use super::executor::Executor;
use super::iteration_context::IterationContext;
use super::progress::Progress;
use super::schedule::{self, Slot};
use crate::measurements::ids;
use crate::options::run::RunOptions;
use crate::plan::RunPlan;
use crate::result::{Exclusion, Iteration, RunResult, Warning, WarningKind};
use crate::{interrupt, report};
use rand::rngs::StdRng;
use std::path::Path;

/// Runs the planned iterations of one run and remembers what failed.
pub struct Runner<'a> {
    plan: &'a RunPlan,
    options: &'a RunOptions,
    builds: &'a Builds,
    progress: &'a Progress,
    /// Where each iteration's log goes.
    run_dir: &'a Path,
    /// The next iteration's position in the run's execution order.
    sequence: usize,
    /// Rows whose application started at least once.
    started: Vec<bool>,
    /// Rows stopped after their application failed to start.
    given_up: Vec<bool>,
    failed: bool,
    /// Slots scheduled so far (`--until-conclusive` rounds included): the re-run budget is
    /// half of them, rounded up.
    scheduled: usize,
    /// Contaminated iterations re-run so far.
    reruns: usize,
    /// The machine's interference just before the run: the baseline's first figure, so a
    /// machine that was already that busy does not count its first iteration as contaminated.
    before: Option<f64>,
    /// How perf records when some row is profiled and perf works here.
    profiler: Option<rigor_profile::Settings>,
}

impl<'a> Runner<'a> {
    /// A runner for `plan`'s rows with what the builds produced; logs go in `run_dir`.
    pub fn new(
        plan: &'a RunPlan,
        options: &'a RunOptions,
        builds: &'a Builds,
        progress: &'a Progress,
        run_dir: &'a Path,
    ) -> Self {
        Runner {
            plan,
            options,
            builds,
            progress,
            run_dir,
            sequence: 0,
            started: vec![false; plan.rows.len()],
            given_up: vec![false; plan.rows.len()],
            failed: false,
            scheduled: 0,
            reruns: 0,
            before: None,
            profiler: None,
        }
    }

    /// Counts how busy the machine was before the run (in % of its CPU time) as the first
    /// figure of the interference baseline.
    pub fn with_machine_before(mut self, busy_pct: f64) -> Self {
        self.before = Some(busy_pct).filter(|v| v.is_finite());
        self
    }

    /// Runs every iteration the schedule holds (and the rounds `--until-conclusive` adds),
    /// calling `save` after each; returns whether anything, builds included, failed.
    pub fn run(
        mut self,
        executor: &mut dyn Executor,
        result: &mut RunResult,
        seed: u64,
        save: &mut dyn FnMut(&RunResult),
    ) -> bool {
        self.record_build_errors(result);
        self.check_profiler(result);
        let mut rng = schedule::rng(seed);
        let rounds = self
            .plan
            .rows
            .iter()
            .map(|r| r.iterations)
            .max()
            .unwrap_or(0);
        let mut slots: Vec<Slot> = schedule::plan(&self.plan.groups, 0, rounds, &mut rng)
            .into_iter()
            .filter(|s| s.iteration < self.plan.rows[s.row].iterations)
            .collect();
        let mut done_rounds = rounds;
        loop {
            self.scheduled += slots.len();
            for slot in slots {
                if interrupt::interrupted() {
                    break;
                }
                self.run_slot(slot, executor, result, save);
                super::finish::say_noise_floor(
                    slot,
                    result,
                    self.options,
                    self.plan,
                    self.progress,
                );
            }
            match self.next_round(result, done_rounds, &mut rng) {
                Some(more) => slots = more,
                None => break,
            }
            self.progress.grow(slots.len() as u64);
            done_rounds += 1;
        }
        self.progress.finish();
        self.failed
    }

    /// When some row is to be profiled: whether perf works here, or a warning with the fix
    /// (the run goes on without profiles).
    fn check_profiler(&mut self, result: &mut RunResult) {
        let every = self.options.cpu_profile.every_row;
        if !self
            .plan
            .rows
            .iter()
            .any(|r| every.or(r.cpu_profile).is_some())
        {
            return;
        }
        let perf = "perf".to_string();
        match rigor_profile::check(&perf) {
            Ok(()) => {
                self.profiler = Some(rigor_profile::Settings {
                    perf,
                    hz: self.options.cpu_profile.hz,
                    call_graph: rigor_profile::CallGraph::FramePointer,
                })
            }
            Err(u) => {
                let w = Warning::new(
                    WarningKind::CpuProfile,
                    format!("no CPU profiles in this run: {}", u.reason),
                    u.fix,
                );
                self.progress
                    .note(&format!("warning: {}", report::warning_text(&w)));
                result.warnings.push(w);
            }
        }
    }

    /// A row whose build failed runs nothing: its build error is recorded on the row.
    fn record_build_errors(&mut self, result: &mut RunResult) {
        for (i, p) in self.plan.rows.iter().enumerate() {
            if let Some(Err(e)) = self.builds.get(&p.build_key) {
                self.failed = true;
                result.rows[i].build_error = Some(format!("{e:#}"));
            }
        }
    }

    /// One slot: the iteration run (unless its row was given up or never built) and recorded,
    /// then run again in the same slot as long as it came out contaminated and may be re-run;
    /// the result is saved after each.
    fn run_slot(
        &mut self,
        slot: Slot,
        executor: &mut dyn Executor,
        result: &mut RunResult,
        save: &mut dyn FnMut(&RunResult),
    ) {
        if self.given_up[slot.row] {
            self.progress.advance();
            return;
        }
        let Some(Ok(built)) = self.builds.get(&self.plan.rows[slot.row].build_key) else {
            return;
        };
        for attempt in 0.. {
            let mut it = self.attempt(slot, attempt, built, executor);
            let rerun = self.judge(&mut it, result);
            self.record(slot.row, it, result);
            result.sequential = super::finish::looks(result, self.options, self.plan);
            save(result);
            if !rerun {
                break;
            }
            self.progress.grow(1);
        }
    }

    /// Runs the slot's iteration once; `attempt` 0 is the scheduled one, each re-run the next
    /// (its log named `-rerunN`, so no log overwrites another).
    fn attempt(
        &mut self,
        slot: Slot,
        attempt: usize,
        built: &Built,
        executor: &mut dyn Executor,
    ) -> Iteration {
        let p = &self.plan.rows[slot.row];
        let rerun = match attempt {
            0 => String::new(),
            n => format!("-rerun{n}"),
        };
        let ctx = IterationContext {
            key: &p.key,
            row: &p.plan,
            built,
            index: slot.iteration,
            sequence: self.sequence,
            log: self.run_dir.join(format!(
                "row{}-iter{}{rerun}.log",
                slot.row + 1,
                slot.iteration + 1
            )),
            sample_interval: self.options.sample_interval,
            drop_caches: self.options.drop_caches,
            cpu_profile: self.profiler.as_ref().and_then(|s| {
                let walk = self.options.cpu_profile.every_row.or(p.cpu_profile)?;
                Some(rigor_profile::Settings {
                    call_graph: match walk {
                        crate::config::StackWalk::Dwarf => rigor_profile::CallGraph::Dwarf,
                        crate::config::StackWalk::FramePointer => {
                            rigor_profile::CallGraph::FramePointer
                        }
                    },
                    ..s.clone()
                })
            }),
            progress: self.progress,
            label: self.plan.row_label(slot.row),
        };
        let it = executor.iteration(&ctx);
        self.sequence += 1;
        self.progress.advance();
        it
    }

    /// Whether `it` is contaminated against the run so far and is to be re-run: then it is
    /// excluded; either way a contaminated iteration gets a warning saying what became of it.
    fn judge(&mut self, it: &mut Iteration, result: &RunResult) -> bool {
        let mut history: Vec<f64> = self.before.into_iter().collect();
        history.extend(contamination::history(
            result.rows.iter().flat_map(|r| r.iterations.iter()),
        ));
        let waits =
            contamination::wait_history(result.rows.iter().flat_map(|r| r.iterations.iter()));
        let Some(c) = contamination::judge(it, &history, &waits) else {
            return false;
        };
        let budget = self.scheduled.div_ceil(2);
        let (rerun, outcome) = if self.options.keep_noisy {
            (false, "kept (--keep-noisy)".to_string())
        } else if interrupt::interrupted() {
            (
                false,
                "kept: the run was interrupted before a re-run".into(),
            )
        } else if self.reruns >= budget {
            (
                false,
                format!("kept: the run's re-run budget ({budget}) is spent"),
            )
        } else {
            (true, "excluded and re-run".into())
        };
        if rerun {
            self.reruns += 1;
            it.excluded = Exclusion::Interference;
        }
        it.warnings.push(Warning::of(
            WarningKind::Contaminated,
            format!("{}: {outcome}", c.describe()),
        ));
        rerun
    }

    /// Notes a finished attempt (its failure or its figures) and puts it in its row.
    fn record(&mut self, row: usize, mut it: Iteration, result: &mut RunResult) {
        let label = self.plan.row_label(row);
        match &it.error {
            Some(e) => {
                self.progress.note(&format!(
                    "error: {label} iteration {} failed: {e}",
                    it.number()
                ));
                self.after_failure(row, &it, &label, result);
            }
            None => {
                self.started[row] = true;
                self.progress.note(&iteration_line(&label, &it));
            }
        }
        super::row_figures::distribute(result, row, &mut it);
        result.rows[row].iterations.push(it);
    }

    /// A failed iteration fails the run; a row whose application never started stops after
    /// its first failure to start (it would fail the same way every time) unless --keep-going.
    fn after_failure(&mut self, row: usize, it: &Iteration, label: &str, result: &mut RunResult) {
        self.failed = true;
        // A command job has no readiness: it started when it got a process.
        let start_failed = match self.plan.rows[row].plan.work {
            crate::config::Work::Load(_) => !it.measurements.contains_key(ids::APP_START_TIME),
            crate::config::Work::Command(_) => it.pid.is_none(),
        };
        self.started[row] |= !start_failed;
        if !start_failed || self.started[row] || self.options.keep_going || interrupt::interrupted()
        {
            return;
        }
        self.given_up[row] = true;
        let message = "the application failed to start, so the row's other iterations were skipped";
        self.progress.note(&format!(
            "note: {label}: {message} (--keep-going tries every one)"
        ));
        result.rows[row]
            .warnings
            .push(Warning::of(WarningKind::RowStopped, message));
    }

    /// With `--until-conclusive`: one more round of the groups still inconclusive on the
    /// primary measurement, until MAX rounds; `None` when the run is over.
    fn next_round(
        &self,
        result: &RunResult,
        done_rounds: usize,
        rng: &mut StdRng,
    ) -> Option<Vec<Slot>> {
        let max = self.options.until_conclusive?;
        if interrupt::interrupted() || done_rounds >= max || self.plan.variant_order.len() < 2 {
            return None;
        }
        let again = super::finish::inconclusive_groups(result, self.options, self.plan);
        if again.is_empty() {
            return None;
        }
        Some(schedule::plan(&again, done_rounds, done_rounds + 1, rng))
    }
}

/// One line per finished iteration, so progress survives in a non-terminal log: its load and
/// application figures, or for a command how long it ran and what it reported.
fn iteration_line(label: &str, it: &Iteration) -> String {
    let m = |id: &str| it.measurements.get(id).copied();
    let mut parts: Vec<String> = Vec::new();
    if let Some(v) = m(ids::LOAD_RPS) {
        parts.push(format!("{} rps", report::format::number(v)));
    }
    if let Some(v) = m(ids::LOAD_LATENCY_P99) {
        parts.push(format!("p99 {v:.2} ms"));
    }
    if let Some(v) = m(ids::APP_ELAPSED) {
        parts.push(format!("ran {v:.0} ms"));
    }
    if let Some(v) = m(ids::APP_RSS) {
        parts.push(format!("rss {v:.1} MiB"));
    }
    if let Some(v) = m(ids::APP_CPU) {
        parts.push(format!("cpu {v:.0}%"));
    }
    let own = it
        .measurements
        .keys()
        .filter(|id| id.starts_with("cmd."))
        .count();
    let rows = it.row_figures.len();
    if own + rows > 0 {
        parts.push(format!("{} figure(s) reported", own + rows));
    }
    let mut s = format!("{label} iteration {}: {}", it.number(), parts.join(", "));
    if parts.is_empty() {
        s.pop();
        s.pop();
    }
    s.push_str(&super::progress::warning_kinds(&it.warnings));
    s
}
