//! One iteration's container: started fresh under a unique name and rigor's label by the
//! engine's attached `run` (its output is the application's log), measured from its first
//! process and its own cgroup, and removed when the iteration stops it.

use super::client::call;
use super::engine::{Engine, RunSpec};
use super::image::BuiltImage;
use crate::config::{AppJob, ContainerJob};
use crate::exec::app::AppProcess;
use crate::exec::iteration_context::IterationContext;
use crate::result::{Iteration, Warning, WarningKind};
use rigor_probe::Cgroup;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long one engine call about a running container may take.
const CALL: Duration = Duration::from_secs(30);

/// The container of this iteration, started: its client process measured as its first
/// process, its cgroup, and the CPU count "100%" means for it.
pub fn launch(
    ctx: &IterationContext,
    it: &mut Iteration,
    stdout: Option<&Path>,
    who: &str,
) -> anyhow::Result<(AppProcess, Option<Cgroup>, usize)> {
    let job = &ctx.row.app;
    let Some(image) = &ctx.built.image else {
        anyhow::bail!("`{}`: its image was not built", job.name);
    };
    launch_image(job, image, ctx.sequence, &ctx.log, stdout, it, who)
}

/// [`launch`] from its parts: where the application's own host starts it, with no iteration
/// of a run around it.
pub fn launch_image(
    job: &AppJob,
    image: &BuiltImage,
    sequence: usize,
    log: &Path,
    stdout: Option<&Path>,
    it: &mut Iteration,
    who: &str,
) -> anyhow::Result<(AppProcess, Option<Cgroup>, usize)> {
    let Some(c) = &job.container else {
        anyhow::bail!("`{}` is not a container application", job.name);
    };
    let engine = image.engine.clone();
    let _ = super::sweep::once(&engine)?;
    let name = format!(
        "rigor-{}-{}-{:08x}",
        std::process::id(),
        sequence,
        rand::random::<u32>()
    );
    let app = start(job, c, &engine, &image.id, &name, log, stdout)?;
    it.pid = Some(app.pid);
    let cgroup = Cgroup::of_process(app.pid);
    if cgroup.is_none() {
        it.warnings.push(Warning::of(
            WarningKind::NoCgroup,
            format!(
                "{who} runs in container {name}, whose cgroup has no memory accounting rigor \
                 can read: no app.cgroup.* figures"
            ),
        ));
    }
    let norm = crate::exec::app_steps::started(job, app.pid, it, who);
    Ok((app, cgroup, norm))
}

/// Runs the container and waits for its first process; on any failure the container is
/// removed and the client stopped.
fn start(
    job: &AppJob,
    c: &ContainerJob,
    engine: &Engine,
    image: &str,
    name: &str,
    log: &Path,
    stdout: Option<&Path>,
) -> anyhow::Result<AppProcess> {
    let command = if job.command.trim().is_empty() {
        Vec::new()
    } else {
        shlex::split(&job.command).ok_or_else(|| {
            anyhow::anyhow!(
                "`{}`: `command` {:?} has an unclosed quote",
                job.name,
                job.command
            )
        })?
    };
    let owner = super::sweep::owner();
    let args = engine.run(&RunSpec {
        name,
        owner: &owner,
        image,
        job: c,
        env: &job.env,
        cpus: job.cpus.as_deref(),
        command: &command,
    });
    let words = std::iter::once(engine.program()).chain(args.iter().map(String::as_str));
    let line = format!(
        "exec {}",
        shlex::try_join(words).map_err(|e| anyhow::anyhow!("`{}`: {e}", job.name))?
    );
    crate::exec::sentinel::watch_container(engine.program(), name);
    let mut app = AppProcess::spawn_line(job, &line, log, stdout, None)?;
    let stop = stopper(engine.clone(), name.to_string());
    match first_process(&mut app, engine, name, job.ready_timeout) {
        Ok(pid) => {
            app.measure_instead(pid, stop);
            Ok(app)
        }
        Err(e) => {
            app.measure_instead(app.pid, stop);
            let _ = app.stop(Duration::ZERO, None);
            Err(e)
        }
    }
}

/// What stops and removes the container: `stop -t` with the grace, then `rm -f`. True when it
/// outlasted the grace (it was killed).
fn stopper(engine: Engine, name: String) -> crate::exec::app::ContainerStop {
    Box::new(move |grace| {
        let asked = Instant::now();
        let secs = grace.as_secs_f64().ceil() as u64;
        let stopped = call(&engine, &engine.stop(&name, secs), CALL + grace);
        let forced = stopped.is_ok() && asked.elapsed() >= grace && !grace.is_zero();
        let _ = call(&engine, &engine.remove(&name), CALL);
        crate::exec::sentinel::forget_container(&name);
        forced
    })
}

/// The container's first process, as soon as the engine says it runs.
fn first_process(
    app: &mut AppProcess,
    engine: &Engine,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<i32> {
    let deadline = app.spawned_at + timeout;
    loop {
        let last;
        if let Some(status) = app.exited() {
            anyhow::bail!(
                "the container exited ({status}) before it was running\n{}",
                app.log_tail()
            );
        }
        if crate::interrupt::interrupted() {
            anyhow::bail!("interrupted while the container was starting");
        }
        match call(engine, &engine.init_pid(name), CALL) {
            Ok(pid) => match pid.parse::<i32>() {
                Ok(p) if p > 0 => return Ok(p),
                _ => last = format!("its first process is {pid:?}"),
            },
            // Not created yet.
            Err(e) => last = e.to_string(),
        }
        if Instant::now() >= deadline {
            anyhow::bail!(
                "container {name} was not running after {:.1}s ({last})\n{}",
                timeout.as_secs_f64(),
                app.log_tail()
            );
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}
