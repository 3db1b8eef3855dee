//! One iteration: a fresh application process, readiness, the row's own validation, the load,
//! the application sampled throughout, and a stop that leaves nothing behind.

use super::app::AppProcess;
use super::build::Built;
use super::progress::Progress;
use crate::config::{LoadJob, Ready, RowPlan, Work};
use crate::guards;
use crate::measurements::ids;
use crate::result::{Iteration, Warning, WarningKind};
use rigor_load::{Live, Phase};
use rigor_probe::{Cgroup, Mark, Sampler};
use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the iteration needs besides its row.
pub struct IterationContext<'a> {
    /// Which row this is an iteration of, for executors that need to name it (the local one
    /// runs from `row` alone).
    #[cfg_attr(not(test), allow(dead_code))]
    pub key: &'a crate::result::RowKey,
    pub row: &'a RowPlan,
    pub built: &'a Built,
    pub index: usize,
    pub sequence: usize,
    pub log: PathBuf,
    pub sample_interval: Duration,
    /// Drop the page cache before the app starts (`--drop-caches`).
    pub drop_caches: bool,
    pub progress: &'a Progress,
    pub label: String,
}

impl IterationContext<'_> {
    /// Shows `phase` of this iteration on the progress line.
    pub fn status(&self, phase: &str) {
        self.progress.status(format!(
            "{} · iteration {} · {phase}",
            self.label,
            self.index + 1
        ))
    }
}

/// Runs one iteration; faults end it with `error` set, never with a panic.
pub fn run_iteration(ctx: &IterationContext) -> Iteration {
    let mut it = Iteration::new(ctx.index, ctx.sequence);
    it.log = Some(ctx.log.display().to_string());
    if let Some(t) = ctx.built.build_time_ms {
        it.measurements.insert(ids::APP_BUILD_TIME.into(), t);
    }
    if let Some(s) = ctx.built.size_kib {
        it.measurements.insert(ids::APP_SIZE.into(), s);
    }
    if let Err(e) = run_inner(ctx, &mut it) {
        it.error = Some(format!("{e:#}"));
    }
    it
}

/// Start, measure, stop: the application's whole life in one iteration.
fn run_inner(ctx: &IterationContext, it: &mut Iteration) -> anyhow::Result<()> {
    let load_job = match &ctx.row.work {
        Work::Load(l) => l,
        Work::Command(c) => return super::command::run(ctx, it, c),
    };
    let app_job = &ctx.row.app;
    if let Some(host) = &app_job.host {
        return super::app_remote::run(ctx, it, load_job, host);
    }
    port_is_free(&app_job.ready)?;
    // Verified (hashed, so read) before the caches are dropped: the start stays cold.
    ctx.built.ensure_artifact()?;
    if ctx.drop_caches {
        super::readings::drop_caches(it);
    }
    let status = |phase: &str| ctx.status(phase);
    status("starting");
    let (app, cgroup, norm) = launch(ctx, it, None, "the application")?;
    let (mut app, sampler) = sampled(ctx, app, cgroup.as_ref(), norm)?;
    let result = drive(
        ctx,
        load_job,
        it,
        &mut app,
        &sampler,
        cgroup.as_ref(),
        &status,
    );
    // The window's last reading is taken before the app is told to stop (a no-op when the
    // load already ended it), so nothing the app does on shutdown is in the window.
    sampler.mark(Mark::WindowEnd);
    status("stopping");
    let spawned_at = app.spawned_at;
    let stop = app.stop(app_job.stop_timeout, cgroup.as_ref());
    let samples = sampler.stop();
    crate::measurements::record_app(&samples.figures(), &mut it.measurements);
    crate::series::record_app(it, &samples, spawned_at);
    if let Some(c) = cgroup {
        let _ = c.remove();
    }
    let result = stopped(it, &stop, app_job.stop_timeout, &ctx.log, result);
    if result.is_ok() {
        guards::iteration_guards(it);
    }
    result
}

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
    let job = &ctx.row.app;
    let cgroup = make_cgroup(ctx.sequence, it);
    let mut app = match AppProcess::spawn(job, &ctx.log, stdout, cgroup.as_ref()) {
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
    if job.priority_high {
        let (outcome, warning) = super::priority::raise(app.pid, who);
        it.priority = Some(outcome);
        it.warnings.extend(warning);
    }
    let norm = job
        .cpus
        .as_ref()
        .map(Vec::len)
        .unwrap_or_else(rigor_probe::online_cpus);
    Ok((app, cgroup, norm))
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

/// The application as the load phase watches it: a process here, or one on its host that
/// the agent there runs.
pub(super) trait Watched {
    /// How it exited, once it has on its own.
    fn exited(&mut self) -> Option<String>;
    /// Marks a window edge where it is sampled.
    fn mark(&mut self, mark: Mark);
    /// The end of its log, for error messages.
    fn log_tail(&self) -> String;
    /// When it was started, on this machine's monotonic clock (the series' zero).
    fn spawned_at(&self) -> std::time::Instant;
}

/// A process on this machine and its sampler.
struct Here<'a> {
    app: &'a mut AppProcess,
    sampler: &'a Sampler,
}

impl Watched for Here<'_> {
    fn exited(&mut self) -> Option<String> {
        self.app.exited().map(|s| s.to_string())
    }
    fn mark(&mut self, mark: Mark) {
        self.sampler.mark(mark);
    }
    fn log_tail(&self) -> String {
        self.app.log_tail()
    }
    fn spawned_at(&self) -> std::time::Instant {
        self.app.spawned_at
    }
}

/// Readiness, validation and load, with the sampler marking the measured window.
fn drive(
    ctx: &IterationContext,
    load_job: &LoadJob,
    it: &mut Iteration,
    app: &mut AppProcess,
    sampler: &Sampler,
    cgroup: Option<&Cgroup>,
    status: &dyn Fn(&str),
) -> anyhow::Result<()> {
    status("waiting until ready");
    let ready = super::readings::ready_watching_memory(ctx, &load_job.spec.url, it, app)?;
    it.measurements
        .insert(ids::APP_START_TIME.into(), ready.as_secs_f64() * 1e3);
    it.network = Some(guards::proxy_guard(
        app.pid,
        load_job.addr,
        &mut it.warnings,
    ));
    let app_cpu = super::readings::AppCpu::of(app.pid, cgroup);
    let mut here = Here { app, sampler };
    under_load(ctx, load_job, it, &mut here, app_cpu, status)
}

/// From the first request to the load's end, on an application that is ready.
pub(super) fn under_load(
    ctx: &IterationContext,
    load_job: &LoadJob,
    it: &mut Iteration,
    app: &mut dyn Watched,
    app_cpu: super::readings::AppCpu,
    status: &dyn Fn(&str),
) -> anyhow::Result<()> {
    status("first request");
    let app_host = ctx.row.app.host.as_ref().map(|h| h.name.as_str());
    first_request(load_job, app_host, it, &*app)?;
    let mut scraper = crate::metrics::start(&ctx.row.app, ctx.sample_interval, app.spawned_at());
    let result = match &load_job.tool {
        Some(tool) => {
            let around = super::tool_load::Around {
                app,
                app_cpu,
                scraper: scraper.as_mut(),
                status,
                log: &ctx.log,
            };
            if load_job.hosts.is_empty() {
                super::tool_load::load(load_job, tool, it, around)
            } else {
                super::tool_hosts::load(load_job, tool, app_host, it, around)
            }
        }
        None => load(
            load_job,
            app_host,
            it,
            app,
            app_cpu,
            scraper.as_mut(),
            status,
        ),
    };
    if let Some(s) = scraper {
        crate::metrics::finish(s, &ctx.row.app, it);
    }
    result
}

/// What the row's first request found.
struct First {
    status: u16,
    latency: Duration,
    bytes_sent: u64,
    found: Option<bool>,
}

/// The row's own URL, once: first-request latency and the optional validation.
fn first_request(
    load_job: &LoadJob,
    app_host: Option<&str>,
    it: &mut Iteration,
    app: &dyn Watched,
) -> anyhow::Result<()> {
    let spec = &load_job.spec;
    let find = load_job
        .validate
        .as_ref()
        .and_then(|v| v.body_contains.as_ref())
        .map(|t| t.as_bytes());
    let timeout = spec.timeout.max(Duration::from_secs(5));
    // From the first load host that is not this machine when the load comes from other hosts:
    // they reach the URL, this machine may not.
    let remote = load_job
        .hosts
        .iter()
        .find(|h| h.name != crate::config::LOCAL);
    let first = match remote {
        Some(host) => super::load_hosts::first_request(host, app_host, spec, timeout, find)
            .map(|(status, latency, bytes_sent, found)| First {
                status,
                latency,
                bytes_sent,
                found,
            })
            .map_err(|e| {
                anyhow::anyhow!(
                    "first request to {} from load host {} failed: {e}\n{}",
                    spec.url,
                    host.name,
                    app.log_tail()
                )
            })?,
        None => rigor_load::probe_request_as(spec.http2)(
            &spec.url,
            &spec.method,
            &spec.headers,
            spec.body.as_deref(),
            timeout,
            find,
            spec.insecure,
        )
        .map(|r| First {
            status: r.status,
            latency: r.latency,
            bytes_sent: r.bytes_sent,
            found: r.found,
        })
        .map_err(|e| {
            anyhow::anyhow!(
                "first request to {} failed: {e}\n{}",
                spec.url,
                app.log_tail()
            )
        })?,
    };
    it.outside_window.requests += 1;
    it.outside_window.bytes += first.bytes_sent;
    it.measurements.insert(
        ids::APP_FIRST_REQUEST.into(),
        first.latency.as_secs_f64() * 1e3,
    );
    let Some(v) = &load_job.validate else {
        return Ok(());
    };
    if let Some(want) = v.status {
        if first.status != want {
            return Err(anyhow::anyhow!(
                "validation failed: {} answered {} (expected {want})",
                spec.url,
                first.status
            ));
        }
    }
    if let Some(text) = &v.body_contains {
        if first.found == Some(false) {
            return Err(anyhow::anyhow!(
                "validation failed: the body of {} does not contain `{text}`",
                spec.url
            ));
        }
    }
    Ok(())
}

/// The engine in rigor itself, or shared by the load role's hosts (with what each measured).
fn engine(
    job: &LoadJob,
    app_host: Option<&str>,
    live: &Live,
    stop: &AtomicBool,
) -> anyhow::Result<(rigor_load::LoadReport, Vec<super::load_hosts::HostLoad>)> {
    if job.hosts.is_empty() {
        return rigor_load::run(&job.spec, live, stop)
            .map(|r| (r, Vec::new()))
            .map_err(anyhow::Error::from);
    }
    super::load_hosts::run(&job.spec, &job.hosts, app_host, live, stop).map(|h| (h.merged, h.hosts))
}

/// The measured load: the engine runs while the app is watched (a crash or an interrupt stops
/// the engine) and the sampler marks the window; then the engine's report is recorded.
#[allow(clippy::too_many_arguments)]
fn load(
    load_job: &LoadJob,
    app_host: Option<&str>,
    it: &mut Iteration,
    app: &mut dyn Watched,
    app_cpu: super::readings::AppCpu,
    mut scraper: Option<&mut crate::metrics::Scraper>,
    status: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let spec = &load_job.spec;
    let live = Live::default();
    // Load hosts drive the load elsewhere (a local one runs in an agent process).
    let client = match load_job.hosts.is_empty() {
        true => super::readings::Client::Engine,
        false => super::readings::Client::Elsewhere,
    };
    let mut machine = super::readings::MachineWatch::start(app_cpu, client);
    let stop = AtomicBool::new(false);
    let (report, crashed) = std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("rigor-engine".into())
            .spawn_scoped(s, || engine(load_job, app_host, &live, &stop));
        let handle = match spawned {
            Ok(h) => h,
            Err(e) => {
                return (
                    Ok(Err(anyhow::anyhow!("cannot start the load's thread: {e}"))),
                    None,
                )
            }
        };
        let mut marked_start = false;
        let mut crashed = None;
        crate::live_rate::watch(
            &live,
            Duration::from_millis(20),
            || handle.is_finished(),
            |r| {
                machine.tick();
                if r.phase == Phase::Measuring && !marked_start {
                    app.mark(Mark::WindowStart);
                    if let Some(m) = scraper.as_mut() {
                        m.window_start();
                    }
                    marked_start = true;
                }
                if let Some(m) = scraper.as_mut().filter(|_| marked_start) {
                    m.tick(spec.duration);
                }
                if r.phase == Phase::Done && marked_start {
                    // The sampler's edge first: a slow metrics page must not widen the window.
                    app.mark(Mark::WindowEnd);
                    if let Some(m) = scraper.as_mut() {
                        m.window_end();
                    }
                    marked_start = false;
                }
                if crashed.is_none() {
                    if let Some(st) = app.exited() {
                        crashed = Some(st);
                        stop.store(true, Ordering::SeqCst);
                    }
                }
                if crate::interrupt::interrupted() {
                    stop.store(true, Ordering::SeqCst);
                }
                status(&format!(
                    "{} {:.0}s · {} rps",
                    r.phase_name(),
                    r.elapsed.as_secs_f64(),
                    crate::report::format::number(r.rps)
                ));
            },
        );
        if marked_start {
            if let Some(m) = scraper.as_mut() {
                m.window_end();
            }
            app.mark(Mark::WindowEnd);
        }
        (handle.join(), crashed)
    });
    it.machine = Some(machine.finish(app_cpu, &mut it.warnings));
    // A crash or Ctrl-C stops the engine too; the cause is said, not the engine's stop.
    let cause = || match crashed {
        Some(st) => Some(format!(
            "the application crashed during the load ({st})\n{}",
            app.log_tail()
        )),
        None if crate::interrupt::interrupted() => Some("interrupted during the load".into()),
        None => None,
    };
    let (report, hosts) = match report {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            return Err(anyhow::anyhow!(
                cause().unwrap_or_else(|| format!("load failed: {e}"))
            ))
        }
        Err(_) => anyhow::bail!("the load engine panicked"),
    };
    it.outside_window.requests += report.outside_window.requests;
    it.outside_window.bytes += report.outside_window.bytes;
    crate::measurements::record_load(&report, &mut it.measurements);
    crate::series::record_load(it, &report, app.spawned_at());
    guards::load_guards(&report, &mut it.warnings);
    it.load = serde_json::to_value(&report).ok();
    super::load_hosts::record(&hosts, it);
    match cause() {
        Some(why) => Err(anyhow::anyhow!(why)),
        None => Ok(()),
    }
}
