//! The build step: run it once per distinct build (killed after `build_timeout`), time it, check
//! its exit code, and prove the artifact is what this build produced: present, rewritten by it
//! (or up to date with every input), hashed, and kept as a snapshot every start is checked
//! against.

use super::artifact::{self, Snapshot};
use super::logtail::tail;
use crate::config::AppJob;
use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// What a build produced. The default is a job without a build: nothing measured, nothing kept.
#[derive(Debug, Clone, Default)]
pub struct Built {
    pub build_time_ms: Option<f64>,
    pub size_kib: Option<f64>,
    pub log: Option<PathBuf>,
    /// Set when the artifact was not rewritten (an up-to-date no-op build): said, not fatal.
    pub note: Option<String>,
    /// The artifact's content hash after the build (`sha256:…`).
    pub hash: Option<String>,
    /// Whether this build changed the artifact (its bytes or its modification time).
    pub rewritten: bool,
    /// This build's artifact, kept apart; every start runs exactly these bytes.
    pub snapshot: Option<Snapshot>,
    /// The build's name on the application's host, when it was made there (the host keeps
    /// its artifact copy).
    pub remote_build: Option<String>,
    /// A container application's image: every start runs exactly this id.
    pub image: Option<super::container::BuiltImage>,
}

impl Built {
    /// Before a start: makes the artifact path hold this build's bytes (put back from the
    /// snapshot if another build or anything else changed it) and verifies the hash.
    pub fn ensure_artifact(&self) -> anyhow::Result<()> {
        if let Some(image) = &self.image {
            image.ensure()?;
        }
        match &self.snapshot {
            Some(s) => s.ensure_in_place().map(|_| ()),
            None => Ok(()),
        }
    }
}

/// Runs the job's build (if any) with its output in `log`, checks the artifact and keeps a
/// snapshot of it in `snapshots`.
pub fn build(job: &AppJob, log: &Path, snapshots: &Path) -> anyhow::Result<Built> {
    if let Some(c) = &job.container {
        return super::container::image::build(job, c, log);
    }
    let mut built = Built::default();
    let before = job.artifact.as_deref().and_then(artifact::state);
    if let Some(cmd) = &job.build {
        let (status, took) = run_build(job, cmd, log)?;
        built.build_time_ms = Some(took.as_secs_f64() * 1e3);
        built.log = Some(log.to_path_buf());
        if !status.success() {
            return Err(anyhow::anyhow!(
                "build of `{}` failed ({status}): {cmd}\n{}",
                job.name,
                tail(log, 20)
            ));
        }
    }
    let Some(path) = &job.artifact else {
        return Ok(built);
    };
    let after = artifact::state(path).ok_or_else(|| {
        anyhow::anyhow!(
            "artifact of `{}` not found: {} (the build said it succeeded; check `artifact`)",
            job.name,
            path.display()
        )
    })?;
    built.rewritten = before.as_ref() != Some(&after);
    if job.build.is_some() && !built.rewritten {
        // The build left the artifact as it was: fine if it was up to date, a lie if an input
        // changed since it was made.
        if let Some(newer) = after
            .mtime
            .and_then(|t| super::stale::newer_input(&job.dir, path, t))
        {
            return Err(anyhow::anyhow!(
                "stale artifact: {} was not rewritten by this build, yet its input {} is newer; \
                 the build claimed success but did not produce it (build the project itself, \
                 or fix `artifact`)",
                path.display(),
                newer.display()
            ));
        }
        built.note = Some(format!(
            "{} was up to date (not rewritten by the build; no input is newer)",
            path.display()
        ));
    }
    built.size_kib = Some(size_bytes(path) as f64 / 1024.0);
    built.snapshot = Some(Snapshot::take(path, &after.hash, snapshots)?);
    built.hash = Some(after.hash);
    Ok(built)
}

/// Runs `cmd` in the job's folder with the job's env; kills its whole process tree when the user
/// interrupts or `build_timeout` passes.
fn run_build(job: &AppJob, cmd: &str, log: &Path) -> anyhow::Result<(ExitStatus, Duration)> {
    let what = format!("build of `{}`", job.name);
    let mut command = super::shell::marked_shell(job, cmd, log, &what)?;
    crate::console::err(&format!("rigor: building `{}`: {cmd}", job.name));
    let start = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|e| anyhow::anyhow!("build of `{}`: cannot start `sh -c {cmd}`: {e}", job.name))?;
    let pgid = child.id() as i32;
    crate::interrupt::register_group(pgid);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if crate::interrupt::interrupted() => {
                kill_tree(&mut child);
                break Err(anyhow::anyhow!("interrupted during the build"));
            }
            Ok(None) if start.elapsed() >= job.build_timeout => {
                kill_tree(&mut child);
                break Err(anyhow::anyhow!(
                    "build of `{}` still running after {} (`build_timeout`), so it was killed \
                     with all its processes: {cmd}\n{}\n    (raise `build_timeout` in \
                     [jobs.{}] if the build is just slow)",
                    job.name,
                    human(job.build_timeout),
                    tail(log, 20),
                    job.name
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => break Err(anyhow::Error::from(e)),
        }
    };
    crate::interrupt::unregister_group(pgid);
    status.map(|s| (s, start.elapsed()))
}

/// SIGKILLs the build and every descendant, also those that left its process group (`setsid`),
/// and reaps them. The tree is stopped first, so nothing forks or is re-parented while it is read.
pub(crate) fn kill_tree(child: &mut Child) {
    let root = child.id() as i32;
    let mut tree: Vec<i32> = Vec::new();
    for _ in 0..20 {
        let now = rigor_probe::descendants(root);
        let grew = now.iter().any(|p| !tree.contains(p));
        for pid in now {
            if !tree.contains(&pid) {
                // Stops a process of the build's own tree.
                let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
                tree.push(pid);
            }
        }
        if !grew {
            break;
        }
    }
    // Signals only the build's own group and the processes of its tree.
    let _ = killpg(Pid::from_raw(root), Signal::SIGKILL);
    for pid in &tree {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    let _ = child.wait();
    // Orphans of the build come back to rigor (a subreaper): reap them as they arrive.
    let mut left: Vec<i32> = tree.into_iter().filter(|p| *p != root).collect();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !left.is_empty() && Instant::now() < deadline {
        left.retain(|pid| {
            // Waits only on processes of the build's tree, already killed.
            let reaped = matches!(
                waitpid(Pid::from_raw(*pid), Some(WaitPidFlag::WNOHANG)),
                Ok(s) if s.pid() == Some(Pid::from_raw(*pid))
            );
            !reaped && Path::new(&format!("/proc/{pid}")).exists()
        });
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `30m`, `90s`, `1.5s`: a duration as a user would write it in the config.
fn human(d: Duration) -> String {
    let s = d.as_secs();
    if d.subsec_nanos() == 0 && s >= 3600 && s.checked_rem(3600) == Some(0) {
        format!("{}h", s / 3600)
    } else if d.subsec_nanos() == 0 && s >= 60 && s.checked_rem(60) == Some(0) {
        format!("{}m", s / 60)
    } else if d.subsec_nanos() == 0 {
        format!("{s}s")
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// Size of a file, or of every file under a folder.
pub fn size_bytes(path: &Path) -> u64 {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .map(|rd| rd.flatten().map(|e| size_bytes(&e.path())).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}
