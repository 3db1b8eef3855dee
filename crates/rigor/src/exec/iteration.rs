//! One iteration: a fresh application process, readiness, the row's own validation, the load,
//! the application sampled throughout, and a stop that leaves nothing behind.

use super::app::AppProcess;
use super::build::Built;
use super::progress::Progress;
use crate::config::{Ready, RowPlan};
use crate::guards;
use crate::result::{Iteration, Warning};
use rigor_load::{Live, LoadSpec, Phase};
use rigor_probe::{Cgroup, Mark, Sampler};
use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

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

/// Runs one iteration; faults end it with `error` set, never with a panic.
pub fn run_iteration(ctx: &IterationContext) -> Iteration {
    let mut it = Iteration::new(ctx.index, ctx.sequence);
    it.log = Some(ctx.log.display().to_string());
    if let Some(t) = ctx.built.build_time_ms {
        it.measurements.insert("app.build_time".into(), t);
    }
    if let Some(s) = ctx.built.size_kib {
        it.measurements.insert("app.size".into(), s);
    }
    if let Err(e) = run_inner(ctx, &mut it) {
        it.error = Some(e);
    }
    it
}

fn run_inner(ctx: &IterationContext, it: &mut Iteration) -> Result<(), String> {
    let row = ctx.row;
    let app_job = &row.app;
    // The app's own port: where readiness is checked (a proxy may already own the load's port).
    let app_port = match &app_job.ready {
        Ready::Http(url) => rigor_load::resolve_url(url).ok(),
        Ready::Tcp(addr) => addr.to_socket_addrs().ok().and_then(|mut a| a.next()),
        // The app's port is unknown until it runs: a proxy on the load's port is named after
        // readiness (the proxy guard), not refused as taken.
        Ready::Stdout(_) | Ready::Stderr(_) => None,
    };
    if let Some(addr) = app_port {
        let owners = rigor_probe::listener_owners(addr);
        if let Some(o) = owners.first() {
            return Err(format!(
                "port {} is already taken by PID {} ({}) before the application started: \
                 stop it or change the port",
                addr.port(),
                o.pid,
                o.comm
            ));
        }
    }
    if ctx.drop_caches {
        super::readings::drop_caches(it);
    }
    let cgroup = match Cgroup::create(&format!("rigor-{}-{}", std::process::id(), ctx.sequence)) {
        Ok(c) => Some(c),
        Err(why) => {
            it.warnings.push(Warning::new(
                "no_cgroup",
                format!("no cgroup for the application: {why}"),
                "run as root on a machine with cgroup v2 or v1 memory to get app.cgroup.*",
            ));
            None
        }
    };
    let status = |phase: &str| {
        ctx.progress.status(format!(
            "{} · iteration {} · {phase}",
            ctx.label,
            ctx.index + 1
        ))
    };
    status("starting");
    // Exactly what this row's build produced, verified by hash, or no start at all.
    if let Err(e) = ctx.built.ensure_artifact() {
        if let Some(c) = cgroup {
            let _ = c.remove();
        }
        return Err(e);
    }
    let mut app = match AppProcess::spawn(app_job, &ctx.log, cgroup.as_ref()) {
        Ok(a) => a,
        Err(e) => {
            if let Some(c) = cgroup {
                let _ = c.remove();
            }
            return Err(e);
        }
    };
    it.pid = Some(app.pid);
    if app_job.priority_high {
        let (outcome, warning) = super::priority::raise(app.pid, "the application");
        it.priority = Some(outcome);
        it.warnings.extend(warning);
    }
    let norm = app_job
        .cpus
        .as_ref()
        .map(Vec::len)
        .unwrap_or_else(rigor_probe::online_cpus);
    let sampler = Sampler::start_with(app.pid, cgroup.clone(), ctx.sample_interval, norm);
    let result = drive(ctx, it, &mut app, &sampler, &status);
    // The window's last reading is taken before the app is told to stop (a no-op when the
    // load already ended it), so nothing the app does on shutdown is in the window.
    sampler.mark(Mark::WindowEnd);
    status("stopping");
    let stop = app.stop(app_job.stop_timeout, cgroup.as_ref());
    let samples = sampler.stop();
    guards::record_figures(&samples.figures(), &mut it.measurements);
    if stop.forced {
        it.warnings
            .push(ignored_sigterm(&stop, app_job.stop_timeout));
    }
    if !stop.left_behind.is_empty() {
        it.warnings.push(Warning::new(
            "left_behind",
            format!(
                "processes outlived the application and were killed: {}",
                super::procs::names(&stop.left_behind)
            ),
            "a daemonising or `setsid` child escapes its process group: keep it in the \
             foreground, or stop it when the application gets SIGTERM",
        ));
    }
    if let Some(c) = cgroup {
        let _ = c.remove();
    }
    let mut result = result;
    if result.is_ok() {
        if let Some(status) = stop.exited_early {
            result = Err(format!(
                "the application exited ({status}) during the run\n{}",
                super::logtail::tail(&ctx.log, 15)
            ));
        }
    }
    if !stop.survivors.is_empty() {
        let msg = format!(
            "processes of the application survived SIGKILL: {:?}",
            stop.survivors
        );
        result = Err(match result {
            Err(e) => format!("{e}; {msg}"),
            Ok(()) => msg,
        });
    }
    if result.is_ok() {
        guards::iteration_guards(it);
    }
    result
}

/// The warning for an application killed after SIGTERM: states the grace it actually had, and
/// when an interrupt shortened `stop_timeout`, says so instead of advising to raise it.
fn ignored_sigterm(stop: &super::app::StopOutcome, stop_timeout: Duration) -> Warning {
    let waited = stop.grace_given.as_secs_f64();
    if stop.grace_cut_short {
        Warning::new(
            "ignored_sigterm",
            format!(
                "the application ignored SIGTERM for {waited:.1}s and was killed: the run was \
                 interrupted, so it did not get its full `stop_timeout` of {:.1}s",
                stop_timeout.as_secs_f64()
            ),
            "handle SIGTERM for a clean shutdown",
        )
    } else {
        Warning::new(
            "ignored_sigterm",
            format!("the application ignored SIGTERM for {waited:.1}s and was killed"),
            "handle SIGTERM for a clean shutdown, or raise `stop_timeout`",
        )
    }
}

/// Readiness, validation and load, with the sampler marking the measured window.
fn drive(
    ctx: &IterationContext,
    it: &mut Iteration,
    app: &mut AppProcess,
    sampler: &Sampler,
    status: &dyn Fn(&str),
) -> Result<(), String> {
    let row = ctx.row;
    let load_job = &row.load;
    status("waiting until ready");
    let ready = super::readings::ready_watching_memory(ctx, it, app)?;
    it.measurements
        .insert("app.start_time".into(), ready.as_secs_f64() * 1e3);
    it.network = Some(guards::proxy_guard(
        app.pid,
        load_job.addr,
        &mut it.warnings,
    ));
    // The row's own URL, once: first-request latency and the optional validation.
    let headers = load_job.headers.clone();
    let body = load_job.body.as_ref().map(|b| b.as_bytes().to_vec());
    status("first request");
    let find = load_job
        .validate
        .as_ref()
        .and_then(|v| v.body_contains.as_ref())
        .map(|t| t.as_bytes());
    let first = rigor_load::probe_request_finding(
        &load_job.url,
        &load_job.method,
        &headers,
        body.as_deref(),
        load_job.timeout.max(Duration::from_secs(5)),
        find,
    )
    .map_err(|e| {
        format!(
            "first request to {} failed: {e}\n{}",
            load_job.url,
            app.log_tail()
        )
    })?;
    it.outside_window.requests += 1;
    it.outside_window.bytes += first.bytes_sent;
    it.measurements.insert(
        "app.first_request".into(),
        first.latency.as_secs_f64() * 1e3,
    );
    if let Some(v) = &load_job.validate {
        if let Some(want) = v.status {
            if first.status != want {
                return Err(format!(
                    "validation failed: {} answered {} (expected {want})",
                    load_job.url, first.status
                ));
            }
        }
        if let Some(text) = &v.body_contains {
            if first.found == Some(false) {
                return Err(format!(
                    "validation failed: the body of {} does not contain `{text}`",
                    load_job.url
                ));
            }
        }
    }
    let spec = LoadSpec {
        url: load_job.url.clone(),
        connections: load_job.connections,
        threads: load_job.threads,
        duration: load_job.duration,
        warmup: load_job.warmup,
        pipeline: load_job.pipeline,
        rate: load_job.rate,
        timeout: load_job.timeout,
        method: load_job.method.clone(),
        headers,
        body,
        cpus: load_job.cpus.clone(),
    };
    let live = Live::default();
    let before = rigor_probe::cpu_counters();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let started = Instant::now();
    let (report, crashed) = std::thread::scope(|s| {
        let handle = s.spawn(|| rigor_load::run(&spec, &live, &stop));
        let mut marked_start = false;
        let mut crashed = None;
        let mut last = (Instant::now(), 0u64);
        let mut rps = 0.0;
        while !handle.is_finished() {
            let phase = live.phase();
            if phase == Phase::Measuring && !marked_start {
                sampler.mark(Mark::WindowStart);
                marked_start = true;
            }
            if phase == Phase::Done && marked_start {
                sampler.mark(Mark::WindowEnd);
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
            let done = live.completed.load(Ordering::Relaxed);
            if last.0.elapsed() >= Duration::from_millis(500) {
                rps = (done - last.1.min(done)) as f64 / last.0.elapsed().as_secs_f64();
                last = (Instant::now(), done);
            }
            let phase_name = match phase {
                Phase::Starting => "connecting",
                Phase::Warmup => "warmup",
                Phase::Measuring => "measuring",
                Phase::Done => "finishing",
            };
            status(&format!(
                "{phase_name} {:.0}s · {} rps",
                started.elapsed().as_secs_f64(),
                crate::report::format::number(rps)
            ));
            std::thread::sleep(Duration::from_millis(20));
        }
        if marked_start {
            sampler.mark(Mark::WindowEnd);
        }
        (handle.join(), crashed)
    });
    let after = rigor_probe::cpu_counters();
    it.machine = Some(guards::machine_guards(&before, &after, &mut it.warnings));
    let report = match report {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Err(format!("load failed: {e}")),
        Err(_) => return Err("the load engine panicked".into()),
    };
    it.outside_window.requests += report.outside_window.requests;
    it.outside_window.bytes += report.outside_window.bytes;
    for (k, v) in report.measurements() {
        it.measurements.insert(k.to_string(), v);
    }
    guards::load_guards(&report, &mut it.warnings);
    it.load = serde_json::to_value(&report).ok();
    if let Some(st) = crashed {
        return Err(format!(
            "the application crashed during the load ({st})\n{}",
            app.log_tail()
        ));
    }
    if crate::interrupt::interrupted() {
        return Err("interrupted during the load".into());
    }
    Ok(())
}
