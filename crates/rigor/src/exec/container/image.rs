//! A container application's image as a build: `dockerfile` built by the engine once per
//! distinct build (timed, its output in the build log), or the named image looked up; either
//! way its id is recorded as the artifact and every start runs exactly that id.

use super::client::call;
use super::engine::Engine;
use crate::config::{AppJob, ContainerJob, ImageSource};
use crate::exec::build::Built;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long looking an image up may take.
const LOOKUP: Duration = Duration::from_secs(60);

/// How long the engine gets, once a stopped build's steps are killed, to fail the build and
/// remove its working container, before its client is killed too.
const CLEANUP: Duration = Duration::from_secs(15);

/// The image this build runs: the engine that holds it and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltImage {
    pub engine: Engine,
    /// `sha256:…`, what every container of this build is started from.
    pub id: String,
}

impl BuiltImage {
    /// The image `id` held by the engine `kind`: a build an earlier process recorded.
    pub fn held_by(kind: crate::config::EngineKind, id: String) -> BuiltImage {
        BuiltImage {
            engine: Engine { kind },
            id,
        }
    }

    /// Before a start: the engine still holds the image (another build, a prune or a pull of
    /// the same tag cannot change what an id names).
    pub fn ensure(&self) -> anyhow::Result<()> {
        call(&self.engine, &self.engine.image(&self.id), LOOKUP)
            .map(|_| ())
            .map_err(|e| anyhow::anyhow!("image {} of this build is gone: {e}", self.id))
    }
}

/// Builds (a `dockerfile`) or looks up (an `image`) the job's image; its id is the build's
/// hash and its size the application's size.
pub fn build(job: &AppJob, c: &ContainerJob, log: &Path) -> anyhow::Result<Built> {
    let (engine, _) = super::detect::engine(c.engine)?;
    let mut built = Built::default();
    let reference = match &c.image {
        ImageSource::Named(name) => name.clone(),
        ImageSource::Built {
            dockerfile,
            context,
        } => {
            // One tag per job and Dockerfile: a rebuild moves it (what runs is the id).
            let tag = format!(
                "localhost/rigor-build-{}:{:016x}",
                slug(&job.name),
                place(dockerfile, context)
            );
            let args = engine.build(
                &dockerfile.display().to_string(),
                &context.display().to_string(),
                &tag,
            );
            let out = std::fs::File::create(log)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", log.display()))?;
            let started = Instant::now();
            // A group of its own: a Ctrl-C at the terminal reaches rigor, which stops the build
            // so the engine cleans up, not the engine's client, which would leave it behind.
            let mut child = std::process::Command::new(engine.program())
                .args(&args)
                .current_dir(&job.dir)
                .stdin(std::process::Stdio::null())
                .stdout(out.try_clone()?)
                .stderr(out)
                .process_group(0)
                .spawn()
                .map_err(|e| anyhow::anyhow!("cannot run `{}`: {e}", engine.program()))?;
            let pgid = child.id() as i32;
            crate::interrupt::register_group(pgid);
            let status = wait(&mut child, job.build_timeout);
            crate::interrupt::unregister_group(pgid);
            let status = status?;
            built.build_time_ms = Some(started.elapsed().as_secs_f64() * 1e3);
            built.log = Some(log.to_path_buf());
            if !status.success() {
                return Err(anyhow::anyhow!(
                    "`{} {}` failed ({status}) for `{}`\n{}",
                    engine.program(),
                    args.join(" "),
                    job.name,
                    crate::exec::logtail::tail(log, 20)
                ));
            }
            tag
        }
    };
    let answer = call(&engine, &engine.image(&reference), LOOKUP).map_err(|e| {
        anyhow::anyhow!(
            "`{}`: no image {reference} in {}: {e}",
            job.name,
            engine.program()
        )
    })?;
    let (id, size) = answer.split_once(' ').unwrap_or((&answer, ""));
    // Docker writes the digest's algorithm, podman does not: the record always does.
    built.hash = Some(if id.starts_with("sha256:") {
        id.to_string()
    } else {
        format!("sha256:{id}")
    });
    built.size_kib = size.trim().parse::<f64>().ok().map(|b| b / 1024.0);
    built.rewritten = true;
    built.image = Some(BuiltImage {
        engine,
        id: id.to_string(),
    });
    Ok(built)
}

/// Waits for the build, killing it after `timeout`.
fn wait(
    child: &mut std::process::Child,
    timeout: Duration,
) -> anyhow::Result<std::process::ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(s);
        }
        if Instant::now() >= deadline || crate::interrupt::interrupted() {
            stop_build(child);
            anyhow::bail!(
                "the image build was stopped (interrupted, or still running after \
                 `build_timeout` = {:.0}s)",
                timeout.as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops a build in progress. Its steps (the processes under the engine's client: a `RUN`
/// step's container) are killed first, so the engine sees the step fail and removes the
/// step's processes and its working container as after any failed step; killing the client
/// alone would leave both behind. The client is killed when it has no steps here (docker's
/// daemon builds, and cancels when its client goes), outlasts [`CLEANUP`], or the user
/// hurries.
fn stop_build(child: &mut std::process::Child) {
    let steps: Vec<i32> = rigor_probe::descendants(child.id() as i32)
        .into_iter()
        .skip(1)
        .collect();
    steps.iter().for_each(|p| crate::exec::reaper::sigkill(*p));
    let until = Instant::now() + CLEANUP;
    while !steps.is_empty() && Instant::now() < until && !crate::interrupt::hurry() {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A number naming where a Dockerfile and its context are.
fn place(dockerfile: &Path, context: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (dockerfile, context).hash(&mut h);
    h.finish()
}

/// A job's name as a tag may hold it.
fn slug(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}
