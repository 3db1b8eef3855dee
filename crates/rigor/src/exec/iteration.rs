//! One iteration: a fresh application process, readiness, the row's own validation, the load,
//! the application sampled throughout, and a stop that leaves nothing behind.

use super::app::AppProcess;
use super::app_steps::{launch, port_is_free, sampled, stopped};
use super::cpu_profile::Profiling;
use super::iteration_context::{IterationContext, Watched};
use super::under_load::under_load;
use crate::config::{LoadJob, Work};
use crate::guards;
use crate::measurements::ids;
use crate::result::Iteration;
use rigor_probe::{Cgroup, Mark, Sampler};

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
        if ctx.cpu_profile.is_some() {
            it.warnings.push(crate::result::Warning::of(
                crate::result::WarningKind::CpuProfile,
                format!(
                    "no CPU profile: the application runs on host `{}`, and profiles are taken \
                     of applications on this machine",
                    host.name
                ),
            ));
        }
        return super::app_remote::run(ctx, it, load_job, host);
    }
    if let Some(image) = &ctx.built.image {
        let _ = super::container::sweep_left(image)?;
    }
    if !load_job.in_container {
        // In the container's own network the port is the container's, not this machine's.
        port_is_free(&app_job.ready)?;
    }
    // Verified (hashed, so read) before the caches are dropped: the start stays cold.
    ctx.built.ensure_artifact()?;
    if ctx.drop_caches {
        super::readings::drop_caches(it);
    }
    let status = |phase: &str| ctx.status(phase);
    status("starting");
    let (app, cgroup, norm) = launch(ctx, it, None, "the application")?;
    let (mut app, sampler) = sampled(ctx, app, cgroup.as_ref(), norm)?;
    let mut profiling = Profiling::of(ctx);
    let result = if load_job.in_container {
        // Readiness, the first request and the load, all from inside the container's network.
        let pid = app.pid;
        let (app, sampler, cgroup, it) = (&mut app, &sampler, cgroup.as_ref(), &mut *it);
        let profiling = profiling.as_mut();
        super::container::inside(pid, move || {
            let status = |phase: &str| ctx.status(phase);
            drive(
                ctx,
                load_job,
                it,
                app,
                (sampler, profiling),
                cgroup,
                &status,
            )
        })
        .and_then(|r| r)
    } else {
        drive(
            ctx,
            load_job,
            it,
            &mut app,
            (&sampler, profiling.as_mut()),
            cgroup.as_ref(),
            &status,
        )
    };
    // The window's last reading is taken before the app is told to stop (a no-op when the
    // load already ended it), so nothing the app does on shutdown is in the window.
    sampler.mark(Mark::WindowEnd);
    if let Some(p) = profiling.as_mut() {
        p.disable();
    }
    status("stopping");
    let spawned_at = app.spawned_at;
    let stop = app.stop(app_job.stop_timeout, cgroup.as_ref());
    let samples = sampler.stop();
    crate::measurements::record_app(&samples.figures(), &mut it.measurements);
    crate::series::record_app(it, &samples, spawned_at);
    if let Some(c) = cgroup {
        let _ = c.remove();
    }
    if let Some(p) = profiling {
        p.finish(it);
    }
    let result = stopped(it, &stop, app_job.stop_timeout, &ctx.log, result);
    if result.is_ok() {
        guards::iteration_guards(it);
    }
    result
}

/// A process on this machine and its sampler.
struct Here<'a> {
    app: &'a mut AppProcess,
    sampler: &'a Sampler,
    /// The CPU profile that starts and stops with the window, when one is taken.
    profiling: Option<&'a mut Profiling>,
}

impl Watched for Here<'_> {
    fn exited(&mut self) -> Option<String> {
        self.app.exited().map(|s| s.to_string())
    }
    fn mark(&mut self, mark: Mark) {
        self.sampler.mark(mark);
        if let Some(p) = self.profiling.as_mut() {
            match mark {
                Mark::WindowStart => p.enable(),
                Mark::WindowEnd => p.disable(),
            }
        }
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
    (sampler, mut profiling): (&Sampler, Option<&mut Profiling>),
    cgroup: Option<&Cgroup>,
    status: &dyn Fn(&str),
) -> anyhow::Result<()> {
    status("waiting until ready");
    let ready = super::readings::ready_watching_memory(ctx, &load_job.spec.url, it, app)?;
    it.measurements
        .insert(ids::APP_START_TIME.into(), ready.as_secs_f64() * 1e3);
    it.network = Some(if load_job.in_container {
        super::container::own_network(load_job.addr)
    } else if ctx.row.app.container.is_some() {
        super::container::proxy_guard(app.pid, load_job.addr, &mut it.warnings)
    } else {
        guards::proxy_guard(app.pid, load_job.addr, &mut it.warnings)
    });
    let app_cpu = super::readings::AppCpu::of(app.pid, cgroup);
    // perf starts now, sampling nothing until the window opens: starting takes it a while.
    if let Some(p) = profiling.as_deref_mut() {
        status("starting the CPU profile");
        p.attach(app.pid, cgroup, false);
    }
    let mut here = Here {
        app,
        sampler,
        profiling,
    };
    under_load(ctx, load_job, it, &mut here, app_cpu, status)
}
