//! One iteration of a command job: a fresh process run to completion, measured over its whole
//! life like an application (CPU, memory, threads), its exit status checked, and the figures it
//! reported about itself read from its stdout.

use super::app::AppProcess;
use super::app_steps::{launch, sampled};
use super::capped_log::{Drained, LOG_LIMIT};
use super::iteration_context::IterationContext;
use super::procs::{self, Proc};
use super::readings::{AppCpu, MachineWatch};
use crate::config::CommandWork;
use crate::measurements::ids;
use crate::result::{Iteration, RowFigure};
use nix::sys::resource::{getrusage, UsageWho};
use rigor_probe::{Cgroup, Mark};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The largest stdout read for figures: a program that floods its output is not parsed whole.
/// It is the limit of the logs themselves: what is past it was never written.
const MAX_STDOUT_BYTES: u64 = LOG_LIMIT;

/// How long the output is waited for once the command's processes are gone.
const OUTPUT_PATIENCE: Duration = Duration::from_secs(5);

/// Runs the command once; faults are returned as the iteration's error, with the log tails.
pub fn run(ctx: &IterationContext, it: &mut Iteration, work: &CommandWork) -> anyhow::Result<()> {
    let job = &ctx.row.app;
    ctx.built.ensure_artifact()?;
    if ctx.drop_caches {
        super::readings::drop_caches(it);
    }
    let status = |phase: &str| ctx.status(phase);
    status("running");
    let stdout = stdout_path(&ctx.log);
    let children_before = children_cpu_ns();
    // The command's whole life is its window: its profile is running before it starts.
    let mut profiling = super::cpu_profile::Profiling::of(ctx);
    if let Some(p) = profiling.as_mut() {
        p.before_launch();
    }
    let (app, cgroup, norm) = launch(ctx, it, Some(&stdout), "the command")?;
    let (mut app, sampler) = sampled(ctx, app, cgroup.as_ref(), norm)?;
    if let Some(p) = profiling.as_mut() {
        p.attach(app.pid, cgroup.as_ref(), true);
    }
    // An exited command's tree is gone: without its cgroup, its CPU is what rigor reaped.
    let app_cpu = match AppCpu::of(app.pid, cgroup.as_ref()) {
        AppCpu::Tree(_) => AppCpu::ReapedChildren,
        in_cgroup => in_cgroup,
    };
    let mut machine = MachineWatch::start(app_cpu, super::readings::Client::Elsewhere);
    machine.app_tree(app.pid);
    // The command's whole life is its measured window: no start mark, whose sample would be
    // taken at once, while the shell may still be turning into the command.
    let waited = wait(&mut app, work.timeout, &mut machine, &status);
    let elapsed = app.spawned_at.elapsed();
    sampler.mark(Mark::WindowEnd);
    if let Some(p) = profiling.as_mut() {
        p.disable();
    }
    it.machine = Some(machine.finish(app_cpu, &mut it.warnings));
    let spawned_at = app.spawned_at;
    let lingering = match waited {
        Ok(_) => lingering(app.pid, cgroup.as_ref()),
        Err(_) => Vec::new(),
    };
    let piped = app.output.take();
    let stop = app.stop(job.stop_timeout, cgroup.as_ref());
    let output = piped.map(|p| p.finish(OUTPUT_PATIENCE));
    output_warnings(it, output.as_ref());
    let samples = sampler.stop();
    crate::measurements::record_app(&samples.figures(), &mut it.measurements);
    crate::series::record_app(it, &samples, spawned_at);
    crate::series::record_command_window(it, elapsed);
    it.measurements
        .insert(ids::APP_ELAPSED.into(), elapsed.as_secs_f64() * 1e3);
    let cpu_ns = if job.container.is_some() {
        // What rigor reaped is the engine's client, not the container: its cgroup or nothing.
        cgroup.as_ref().and_then(Cgroup::cpu_usage_ns)
    } else {
        cpu_used_ns(cgroup.as_ref(), children_before)
    };
    if let Some(c) = cgroup {
        let _ = c.remove();
    }
    if let Some(p) = profiling {
        p.finish(it);
    }
    if let Some(ns) = cpu_ns {
        record_cpu(it, ns, elapsed, norm);
    }
    stopped(it, &lingering, &stop)?;
    let tails = || tails(&ctx.log, &stdout, output.as_ref());
    let exit = waited.map_err(|e| anyhow::anyhow!("{e}\n{}", tails()))?;
    if !exit.success() {
        return Err(anyhow::anyhow!(
            "the command exited with {exit}\n{}",
            tails()
        ));
    }
    if let Some((out, _)) = &output {
        whole(out)?;
    }
    figures(it, &stdout, work, &ctx.row.variables)
}

/// A warning for each stream whose log is not all the command printed (the limit, a full
/// disk, a stream still held open).
fn output_warnings(it: &mut Iteration, output: Option<&(Drained, Drained)>) {
    let Some((out, err)) = output else {
        return;
    };
    for (d, stream) in [(out, "stdout"), (err, "stderr")] {
        let said = d.describe(stream).or_else(|| {
            d.unfinished.then(|| {
                format!(
                    "the command's {stream} was still held open by a process {}s after it \
                     ended: {} may lack its last output",
                    OUTPUT_PATIENCE.as_secs(),
                    d.path.display()
                )
            })
        });
        if let Some(message) = said {
            it.warnings.push(crate::result::Warning::of(
                crate::result::WarningKind::OutputCut,
                message,
            ));
        }
    }
}

/// Figures are read only from a whole stdout: a figure printed past the limit, after the disk
/// refused a write, or still in a pipe held open, would be lost or misread.
fn whole(out: &Drained) -> anyhow::Result<()> {
    if out.unfinished {
        return Err(anyhow::anyhow!(
            "the command's stdout was still held open by a process {}s after it ended: its \
             figures cannot be read whole from {}",
            OUTPUT_PATIENCE.as_secs(),
            out.path.display()
        ));
    }
    if let Some(e) = &out.write_error {
        return Err(anyhow::anyhow!(
            "the command's stdout could not be written to {}: {e}; its figures cannot be read",
            out.path.display()
        ));
    }
    if out.printed() > MAX_STDOUT_BYTES {
        anyhow::bail!(too_much(out.printed()));
    }
    Ok(())
}

/// The error for a stdout longer than rigor reads for figures.
fn too_much(size: u64) -> String {
    format!(
        "the command printed {:.0} MiB on stdout, more than the {} MiB rigor reads for \
         figures: print less (or print the figures to a file and `cat` it last)",
        size as f64 / 1048576.0,
        MAX_STDOUT_BYTES / 1048576
    )
}

/// Where a command's stdout goes: beside its log.
pub fn stdout_path(log: &Path) -> PathBuf {
    log.with_extension("stdout")
}

/// Waits for the command to exit: `Err` when it outlives its `timeout` or the user interrupts
/// (it is then stopped by the caller).
fn wait(
    app: &mut AppProcess,
    timeout: Duration,
    machine: &mut MachineWatch,
    status: &dyn Fn(&str),
) -> anyhow::Result<std::process::ExitStatus> {
    let started = Instant::now();
    let mut said = 0;
    loop {
        if let Some(exit) = app.exited() {
            return Ok(exit);
        }
        if crate::interrupt::interrupted() {
            anyhow::bail!("interrupted while the command ran");
        }
        let ran = started.elapsed();
        if ran >= timeout {
            return Err(anyhow::anyhow!(
                "the command was still running after its timeout of {:.1}s and was stopped",
                timeout.as_secs_f64()
            ));
        }
        machine.tick();
        if ran.as_secs() > said {
            said = ran.as_secs();
            status(&format!("running {said}s"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// CPU time of rigor's waited-for children, ns: the command and every descendant it waited
/// for are counted once reaped.
pub(super) fn children_cpu_ns() -> Option<u64> {
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
    let ns =
        |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000_000 + t.tv_usec() as u64 * 1000;
    Some(ns(u.user_time()) + ns(u.system_time()))
}

/// The command tree's whole CPU time: its cgroup's counter (every process that ran in it),
/// else what the kernel accounted to rigor's children while it ran.
fn cpu_used_ns(cgroup: Option<&Cgroup>, children_before: Option<u64>) -> Option<u64> {
    if let Some(ns) = cgroup.and_then(Cgroup::cpu_usage_ns) {
        return Some(ns);
    }
    Some(children_cpu_ns()?.saturating_sub(children_before?))
}

/// `app.cpu_time`, and `app.cpu.avg` as that time over the run's length on the cores it had:
/// exact where the samples can miss the start and the end of a short run.
fn record_cpu(it: &mut Iteration, cpu_ns: u64, elapsed: Duration, cores: usize) {
    let ms = cpu_ns as f64 / 1e6;
    it.measurements.insert(ids::APP_CPU_TIME.into(), ms);
    let wall_ms = elapsed.as_secs_f64() * 1e3;
    if wall_ms > 0.0 && cores > 0 {
        it.measurements
            .insert(ids::APP_CPU_AVG.into(), ms / wall_ms / cores as f64 * 100.0);
    }
}

/// Processes of the command still running once it exited: its process group (a job it put in
/// the background) and its cgroup.
fn lingering(pgid: i32, cgroup: Option<&Cgroup>) -> Vec<Proc> {
    let mut out: Vec<Proc> = procs::all()
        .into_iter()
        .filter(|p| p.pgrp == pgid && !p.zombie)
        .collect();
    for pid in cgroup.map(Cgroup::pids).unwrap_or_default() {
        if !out.iter().any(|p| p.pid == pid) {
            out.extend(procs::read(pid).filter(|p| !p.zombie));
        }
    }
    out
}

/// Processes that outlived the command (still in its group or cgroup when it exited, or
/// escaped from both) are warned about, and were killed; survivors of SIGKILL fail the
/// iteration.
fn stopped(
    it: &mut Iteration,
    lingering: &[Proc],
    stop: &super::app::StopOutcome,
) -> anyhow::Result<()> {
    let mut left: Vec<Proc> = lingering.to_vec();
    for p in &stop.left_behind {
        if !left.iter().any(|l| l.pid == p.pid) {
            left.push(p.clone());
        }
    }
    if !left.is_empty() {
        it.warnings.push(crate::result::Warning::new(
            crate::result::WarningKind::LeftBehind,
            format!(
                "processes outlived the command and were killed: {}",
                procs::names(&left)
            ),
            "a command job is measured until it exits: wait for its children before exiting \
             (a background job or a daemon is not part of its figures)",
        ));
    }
    if stop.survivors.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "processes of the command survived SIGKILL: {:?}",
            stop.survivors
        ))
    }
}

/// The tails of the command's stdout and of its log (stderr); one line when it said nothing,
/// and what could not be written when its output did not reach the logs.
fn tails(log: &Path, stdout: &Path, output: Option<&(Drained, Drained)>) -> String {
    let refused: Vec<String> = output
        .map(|(o, e)| {
            [(o, "stdout"), (e, "stderr")]
                .into_iter()
                .filter(|(d, _)| d.write_error.is_some())
                .filter_map(|(d, s)| d.describe(s))
                .map(|l| format!("    ({l})"))
                .collect()
        })
        .unwrap_or_default();
    let shown = tails_of(log, stdout);
    if refused.is_empty() {
        shown
    } else if shown.contains("(the command printed nothing)") {
        refused.join("\n")
    } else {
        format!("{shown}\n{}", refused.join("\n"))
    }
}

/// The tails of what the logs hold.
fn tails_of(log: &Path, stdout: &Path) -> String {
    let empty = |p: &Path| std::fs::metadata(p).map_or(true, |m| m.len() == 0);
    match (empty(stdout), empty(log)) {
        (true, true) => "    (the command printed nothing)".to_string(),
        (false, true) => super::logtail::tail(stdout, 15),
        (true, false) => super::logtail::tail(log, 15),
        (false, false) => format!(
            "{}\n{}",
            super::logtail::tail(stdout, 10),
            super::logtail::tail(log, 10)
        ),
    }
}

/// Reads the figures the command printed: those of the run go in the iteration, those of a
/// row of their own are handed to the runner. A row named like one of the row's own variables
/// would pool figures of different rows, so it is refused.
fn figures(
    it: &mut Iteration,
    stdout: &Path,
    work: &CommandWork,
    variables: &std::collections::BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let text = read_bounded(stdout)?;
    let reported = crate::selfreport::read(&text, &work.extract)
        .map_err(|e| anyhow::anyhow!("{e} (in {})", stdout.display()))?;
    for r in reported {
        if let Some(k) = r.row.keys().find(|k| variables.contains_key(*k)) {
            return Err(anyhow::anyhow!(
                "{}: the output puts it in the row `{k}={}`, but `{k}` is already this row's \
                 variable ({k}={}): name the reported row differently (in {})",
                r.id,
                r.row[k],
                variables[k],
                stdout.display()
            ));
        }
        if !r.declaration.is_empty() {
            it.declared
                .entry(r.id.clone())
                .or_insert_with(|| r.declaration.clone());
        }
        if r.row.is_empty() {
            it.measurements.insert(r.id, r.value);
        } else {
            it.row_figures.push(RowFigure {
                row: r.row,
                id: r.id,
                value: r.value,
            });
        }
    }
    Ok(())
}

/// The command's stdout as text (lossy UTF-8). Output beyond [`MAX_STDOUT_BYTES`] is refused
/// rather than cut: a figure printed after the cut would be lost or misread.
fn read_bounded(path: &Path) -> anyhow::Result<String> {
    use std::io::Read;
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if size > MAX_STDOUT_BYTES {
        anyhow::bail!(too_much(size));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_STDOUT_BYTES).read_to_end(&mut bytes))
        .map_err(|e| anyhow::anyhow!("cannot read the command's output {}: {e}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
