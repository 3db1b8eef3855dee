//! Starting, sampling and stopping an application fresh for an iteration, shared by the
//! local run, a command job and an application on its host.

use super::app::AppProcess;
use super::iteration_context::IterationContext;
use crate::config::Ready;
use crate::result::{Iteration, Warning, WarningKind};
use rigor_probe::{Cgroup, Sampler};
use std::net::ToSocketAddrs;
use std::time::Duration;

/// Refuses to start when something already listens on the app's own port (where readiness is
/// checked; a proxy may already own the load's port).
pub(super) fn port_is_free(ready: &Ready) -> anyhow::Result<()> {
    let app_port = match ready {
        Ready::Http(url) => rigor_load::resolve_url(url).ok(),
        Ready::Tcp(addr) => addr.to_socket_addrs().ok().and_then(|mut a| a.next()),
        // The app's port is unknown until it runs: a proxy on the load's port is named after
        // readiness (the proxy guard), not refused as taken.
        Ready::Stdout(_) | Ready::Stderr(_) => None,
    };
    let Some(addr) = app_port else {
        return Ok(());
    };
    match rigor_probe::listener_owners(addr).first() {
        Some(o) => Err(anyhow::anyhow!(
            "port {} is already taken by PID {} ({}) before the application started: \
             stop it or change the port",
            addr.port(),
            o.pid,
            o.comm
        )),
        None => Ok(()),
    }
}

/// A fresh cgroup for this iteration's application, or a warning saying why there is none.
pub(super) fn make_cgroup(sequence: usize, it: &mut Iteration) -> Option<Cgroup> {
    match Cgroup::create(&format!("rigor-{}-{sequence}", std::process::id())) {
        Ok(c) => Some(c),
        Err(why) => {
            it.warnings
                .push(no_cgroup(&format!("no cgroup for the application: {why}")));
            None
        }
    }
}

/// The warning for an application measured without its own cgroup.
fn no_cgroup(message: &str) -> Warning {
    Warning::of(WarningKind::NoCgroup, message)
}

/// Exactly what this row's build produced (verified before), started fresh in a cgroup of its
/// own (stdout in its own file when given), its PID, cgroup and priority recorded; `who` names
/// it in warnings. Returns the process, its cgroup and the CPU count "100%" means for it.
/// The sampler of a launched application. When its thread cannot be started (a limit on
/// processes, threads or memory) nothing could be measured: the application is stopped, its
/// cgroup removed, and the error says why.
pub(super) fn sampled(
    ctx: &IterationContext,
    app: AppProcess,
    cgroup: Option<&Cgroup>,
    norm: usize,
) -> anyhow::Result<(AppProcess, Sampler)> {
    match Sampler::start_with(app.pid, cgroup.cloned(), ctx.sample_interval, norm) {
        Ok(s) => Ok((app, s)),
        Err(e) => {
            let _ = app.stop(ctx.row.app.stop_timeout, cgroup);
            if let Some(c) = cgroup {
                let _ = c.clone().remove();
            }
            Err(anyhow::anyhow!(
                "cannot start the thread that samples the application: {e} (a limit on \
                 processes, threads or memory); the application was stopped"
            ))
        }
    }
}

pub(super) fn launch(
    ctx: &IterationContext,
    it: &mut Iteration,
    stdout: Option<&std::path::Path>,
    who: &str,
) -> anyhow::Result<(AppProcess, Option<Cgroup>, usize)> {
    if ctx.row.app.container.is_some() {
        return super::container::launch(ctx, it, stdout, who);
    }
    launch_process(&ctx.row.app, ctx.sequence, &ctx.log, stdout, it, who)
}

/// Starts the job's command in a cgroup made for it: the process, its cgroup, and the CPU
/// count "100%" means for it.
pub(super) fn launch_process(
    job: &crate::config::AppJob,
    sequence: usize,
    log: &std::path::Path,
    stdout: Option<&std::path::Path>,
    it: &mut Iteration,
    who: &str,
) -> anyhow::Result<(AppProcess, Option<Cgroup>, usize)> {
    let cgroup = make_cgroup(sequence, it);
    let mut app = match AppProcess::spawn(job, log, stdout, cgroup.as_ref()) {
        Ok(app) => app,
        Err(e) => {
            if let Some(c) = cgroup {
                let _ = c.remove();
            }
            return Err(e);
        }
    };
    it.pid = Some(app.pid);
    if let Some(why) = app.cgroup_error.take() {
        it.warnings.push(no_cgroup(&format!(
            "{who} could not join its cgroup: {why}"
        )));
    }
    let norm = started(job, app.pid, it, who);
    Ok((app, cgroup, norm))
}

/// What follows every start, of a process or a container: its priority raised when the job
/// asks, and the CPU count "100%" means for it (its CPU set, else the machine's).
pub(super) fn started(
    job: &crate::config::AppJob,
    pid: i32,
    it: &mut Iteration,
    who: &str,
) -> usize {
    if job.priority_high {
        let (outcome, warning) = super::priority::raise(pid, who);
        it.priority = Some(outcome);
        it.warnings.extend(warning);
    }
    job.cpus
        .as_ref()
        .map(Vec::len)
        .unwrap_or_else(rigor_probe::online_cpus)
}

/// What the stop said about the application, turned into warnings and errors: killed after
/// SIGTERM, processes left behind, an exit during the run, survivors of SIGKILL.
pub(super) fn stopped(
    it: &mut Iteration,
    stop: &super::app::StopOutcome,
    stop_timeout: Duration,
    log: &std::path::Path,
    result: anyhow::Result<()>,
) -> anyhow::Result<()> {
    if stop.forced {
        it.warnings.push(ignored_sigterm(stop, stop_timeout));
    }
    if !stop.left_behind.is_empty() {
        it.warnings.push(Warning::of(
            WarningKind::LeftBehind,
            format!(
                "processes outlived the application and were killed: {}",
                super::procs::names(&stop.left_behind)
            ),
        ));
    }
    let mut result = result;
    if result.is_ok() {
        if let Some(status) = &stop.exited_early {
            result = Err(anyhow::anyhow!(
                "the application exited ({status}) during the run\n{}",
                super::logtail::tail(log, 15)
            ));
        }
    }
    if !stop.survivors.is_empty() {
        let msg = format!(
            "processes of the application survived SIGKILL: {:?}",
            stop.survivors
        );
        result = Err(match result {
            Err(e) => anyhow::anyhow!("{e}; {msg}"),
            Ok(()) => anyhow::anyhow!(msg),
        });
    }
    result
}

/// The warning for an application killed after SIGTERM: states the grace it actually had, and
/// when an interrupt shortened `stop_timeout`, says so instead of advising to raise it.
fn ignored_sigterm(stop: &super::app::StopOutcome, stop_timeout: Duration) -> Warning {
    let waited = stop.grace_given.as_secs_f64();
    if stop.grace_cut_short {
        Warning::new(
            WarningKind::IgnoredSigterm,
            format!(
                "the application ignored SIGTERM for {waited:.1}s and was killed: the run was \
                 interrupted, so it did not get its full `stop_timeout` of {:.1}s",
                stop_timeout.as_secs_f64()
            ),
            "handle SIGTERM for a clean shutdown",
        )
    } else {
        Warning::of(
            WarningKind::IgnoredSigterm,
            format!("the application ignored SIGTERM for {waited:.1}s and was killed"),
        )
    }
}
