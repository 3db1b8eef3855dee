//! The build step: run it once per distinct build, time it, check its exit code, and prove the
//! artifact is real (exists, and is not older than the sources it claims to be built from).

use super::logtail::tail;
use crate::config::AppJob;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

/// What a build produced.
#[derive(Debug, Clone)]
pub struct Built {
    pub build_time_ms: Option<f64>,
    pub size_kib: Option<f64>,
    pub log: Option<PathBuf>,
    /// Set when the artifact was not rewritten (an up-to-date no-op build): said, not fatal.
    pub note: Option<String>,
}

/// Runs the job's build (if any) with its output in `log`, then checks the artifact.
pub fn build(job: &AppJob, log: &Path) -> Result<Built, String> {
    let mut built = Built {
        build_time_ms: None,
        size_kib: None,
        log: None,
        note: None,
    };
    let started_wall = SystemTime::now();
    if let Some(cmd) = &job.build {
        if !job.dir.is_dir() {
            return Err(format!(
                "build of `{}`: folder {} does not exist",
                job.name,
                job.dir.display()
            ));
        }
        let out = File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        super::console::err(&format!("rigor: building `{}`: {cmd}", job.name));
        let start = Instant::now();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(&job.dir)
            .envs(job.env.iter().map(|(k, v)| (k, v)))
            .env(super::procs::MARK, super::reaper::mark())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("build of `{}`: cannot start `sh -c {cmd}`: {e}", job.name))?;
        let pgid = child.id() as i32;
        crate::interrupt::register_group(pgid);
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Ok(s),
                Ok(None) if crate::interrupt::interrupted() => {
                    // SAFETY: signals our own child's group.
                    unsafe { libc::killpg(pgid, libc::SIGKILL) };
                    let _ = child.wait();
                    break Err("interrupted during the build".to_string());
                }
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
                Err(e) => break Err(e.to_string()),
            }
        };
        crate::interrupt::unregister_group(pgid);
        let status = status?;
        built.build_time_ms = Some(start.elapsed().as_secs_f64() * 1e3);
        built.log = Some(log.to_path_buf());
        if !status.success() {
            return Err(format!(
                "build of `{}` failed ({status}): {cmd}\n{}",
                job.name,
                tail(log, 20)
            ));
        }
    }
    if let Some(artifact) = &job.artifact {
        let meta = std::fs::metadata(artifact).map_err(|_| {
            format!(
                "artifact of `{}` not found: {} (the build said it succeeded; check `artifact`)",
                job.name,
                artifact.display()
            )
        })?;
        let modified = newest_mtime(artifact).unwrap_or(meta.modified().unwrap_or(started_wall));
        if job.build.is_some() && modified < started_wall {
            let newer = match dep_info_sources(artifact) {
                Some(sources) => sources.into_iter().find(|src| {
                    std::fs::metadata(src)
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t > modified)
                }),
                None => newer_source(&job.dir, artifact, modified),
            };
            if let Some(newer) = newer {
                return Err(format!(
                    "stale artifact: {} was not rewritten by this build, yet {} is newer; \
                     the build claimed success but did not produce it (build the project itself, \
                     or fix `artifact`)",
                    artifact.display(),
                    newer.display()
                ));
            }
            built.note = Some(format!(
                "{} was up to date (not rewritten by the build; no source is newer)",
                artifact.display()
            ));
        }
        built.size_kib = Some(size_bytes(artifact) as f64 / 1024.0);
    }
    Ok(built)
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

fn newest_mtime(path: &Path) -> Option<SystemTime> {
    let m = std::fs::metadata(path).ok()?;
    if !m.is_dir() {
        return m.modified().ok();
    }
    let mut newest = m.modified().ok();
    for e in std::fs::read_dir(path).ok()?.flatten() {
        if let Some(t) = newest_mtime(&e.path()) {
            newest = Some(newest.map_or(t, |n| n.max(t)));
        }
    }
    newest
}

/// The exact inputs of an artifact when its compiler wrote a Makefile-style dep-info file beside
/// it (`target/release/app.d` from cargo, `app.d` from gcc -MD).
fn dep_info_sources(artifact: &Path) -> Option<Vec<PathBuf>> {
    let mut name = artifact.file_name()?.to_os_string();
    name.push(".d");
    let text = std::fs::read_to_string(artifact.with_file_name(name)).ok()?;
    let joined = text.replace("\\\n", " ");
    let (_, deps) = joined.lines().next()?.split_once(": ")?;
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            ' ' => {
                if !current.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(PathBuf::from(current));
    }
    Some(out)
}

/// Folders that hold outputs or tooling, never sources.
const SKIP: &[&str] = &[
    "target",
    ".git",
    "node_modules",
    "bin",
    "obj",
    "rigor-results",
    "fuzz",
    ".cache",
];

/// A source file under `dir` modified after the artifact, if any (bounded walk).
fn newer_source(dir: &Path, artifact: &Path, than: SystemTime) -> Option<PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            seen += 1;
            if seen > 50_000 {
                return None;
            }
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if !SKIP.contains(&name.as_ref()) && !name.starts_with('.') {
                    stack.push(p);
                }
            } else if ft.is_file()
                && p != artifact
                && !name.ends_with(".log")
                && name != "rigor.toml"
            {
                if let Ok(t) = e.metadata().and_then(|m| m.modified()) {
                    if t > than {
                        return Some(p);
                    }
                }
            }
        }
    }
    None
}
