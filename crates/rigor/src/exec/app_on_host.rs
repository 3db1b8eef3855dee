//! The application's side of an iteration on its own host, as the agent there runs it: sources
//! unpacked into the agent's work dir, the verified build, and each start fresh in a cgroup of
//! its own, sampled until stopped, with the debug, stale, proxy and machine guards run here —
//! where the application is. The client drives the load and merges what comes back.

use super::app::AppProcess;
use super::app_wire_job::WireJob;
use super::build::{self, Built};
use super::readings::{AppCpu, MachineWatch};
use crate::agent::app_host::AppService;
use crate::agent::protocol::{AppWire, BuiltWire};
use crate::result::Iteration;
use rigor_probe::{Cgroup, Mark, Sampler};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The last part of a log sent back to the client.
const LOG_LIMIT: u64 = 1 << 20;

/// How long an application gets to stop when the client is gone.
const GONE_GRACE: Duration = Duration::from_secs(2);

/// One application process and what measures it.
struct Running {
    app: AppProcess,
    sampler: Sampler,
    cgroup: Option<Cgroup>,
    job: crate::config::AppJob,
    it: Iteration,
    watch: Option<MachineWatch>,
    exit_said: bool,
}

/// Everything the agent holds for applications: unpacked sources, builds and running apps,
/// all under `root`.
pub struct AppHost {
    root: PathBuf,
    builds: HashMap<String, Built>,
    running: HashMap<String, Running>,
}

impl AppHost {
    /// Applications under `root` (created on first use).
    pub fn new(root: PathBuf) -> AppHost {
        AppHost {
            root,
            builds: HashMap::new(),
            running: HashMap::new(),
        }
    }

    /// `${XDG_CACHE_HOME:-$HOME/.cache}/rigor/work`: the only place the agent writes.
    pub fn default_root() -> PathBuf {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        cache.join("rigor").join("work")
    }

    fn dir(&self, key: &str) -> Result<PathBuf, String> {
        dir_of(&self.root, key)
    }
}

fn dir_of(root: &Path, key: &str) -> Result<PathBuf, String> {
    if !crate::agent::sources::valid_key(key) {
        return Err(format!(
            "{key:?} cannot name a folder (letters, digits and `-` only)"
        ));
    }
    Ok(root.join(key))
}

impl AppService for AppHost {
    /// Takes a chunk of folder `key`'s sources; the last one unpacks them (files, bytes).
    fn sources(
        &mut self,
        key: &str,
        data: &[u8],
        last: bool,
    ) -> Result<Option<(u64, u64)>, String> {
        let dir = self.dir(key)?;
        std::fs::create_dir_all(&self.root)
            .map_err(|e| format!("creating {}: {e}", self.root.display()))?;
        let archive = self.root.join(format!("{key}.tar"));
        crate::agent::sources::append(&archive, data)?;
        if !last {
            return Ok(None);
        }
        let unpacked = crate::agent::sources::unpack(&archive, &dir);
        let _ = std::fs::remove_file(&archive);
        unpacked.map(Some)
    }

    /// Builds `app` in folder `key` as build `name`.
    fn build(&mut self, key: &str, name: &str, app: AppWire) -> Result<BuiltWire, String> {
        let dir = self.dir(key)?;
        let logs = self.dir(name)?.with_extension("logs");
        if !dir.is_dir() {
            return Err(format!("no sources for {key}: send them first"));
        }
        let job = app.into_job(&dir)?;
        std::fs::create_dir_all(&logs).map_err(|e| format!("creating {}: {e}", logs.display()))?;
        let log = logs.join("build.log");
        let _ = std::fs::remove_file(&log);
        let snapshots = self.dir(name)?.with_extension("artifacts");
        let built = build::build(&job, &log, &snapshots)?;
        let wire = BuiltWire {
            build_time_ms: built.build_time_ms,
            size_kib: built.size_kib,
            note: built.note.clone(),
            hash: built.hash.clone(),
            rewritten: built.rewritten,
            log: last_of(&log),
        };
        self.builds.insert(name.to_string(), built);
        Ok(wire)
    }

    fn start(
        &mut self,
        id: &str,
        key: &str,
        name: &str,
        app: AppWire,
        sequence: usize,
        interval: Duration,
        drop_caches: bool,
        load_url: &str,
    ) -> Result<(i32, Duration, serde_json::Value), String> {
        if self.running.contains_key(id) {
            return Err(format!("application {id} is already running"));
        }
        let dir = self.dir(key)?;
        let built = self
            .builds
            .get(name)
            .ok_or_else(|| format!("no build {name} on this host: build it first"))?;
        let job = app.into_job(&dir)?;
        built.ensure_artifact()?;
        let mut it = Iteration::new(0, sequence);
        if drop_caches {
            super::readings::drop_caches(&mut it);
        }
        let log = self
            .dir(name)?
            .with_extension("logs")
            .join(format!("app-{id}.log"));
        let cgroup = super::iteration::make_cgroup(sequence, &mut it);
        let mut process = match AppProcess::spawn(&job, &log, None, cgroup.as_ref()) {
            Ok(p) => p,
            Err(e) => {
                if let Some(c) = cgroup {
                    let _ = c.remove();
                }
                return Err(e);
            }
        };
        it.pid = Some(process.pid);
        if let Some(why) = process.cgroup_error.take() {
            it.warnings.push(crate::result::Warning::of(
                crate::result::WarningKind::NoCgroup,
                format!("the application could not join its cgroup: {why}"),
            ));
        }
        if job.priority_high {
            let (outcome, warning) = super::priority::raise(process.pid, "the application");
            it.priority = Some(outcome);
            it.warnings.extend(warning);
        }
        let norm = job
            .cpus
            .as_ref()
            .map(Vec::len)
            .unwrap_or_else(rigor_probe::online_cpus);
        let sampler = Sampler::start_with(process.pid, cgroup.clone(), interval, norm);
        let ready = process.wait_ready(&job.ready, job.ready_timeout, &mut it.outside_window);
        let pid = process.pid;
        let mut running = Running {
            app: process,
            sampler,
            cgroup,
            job,
            it,
            watch: None,
            exit_said: false,
        };
        let took = match ready {
            Ok(t) => t,
            Err(e) => {
                let _ = finish(running, GONE_GRACE.min(Duration::from_secs(5)));
                return Err(e);
            }
        };
        // The port the load hits, as this host resolves it: owned by the application, or by
        // something in front of it?
        if let Ok(addr) = rigor_load::resolve_url(load_url) {
            running.it.network = Some(crate::guards::proxy_guard(
                pid,
                addr,
                &mut running.it.warnings,
            ));
        }
        let started = to_value(&running.it);
        // Said once, at the start: what comes back at the stop is only what happened since.
        running.it.warnings.clear();
        running.it.outside_window = Default::default();
        self.running.insert(id.to_string(), running);
        Ok((pid, took, started))
    }

    /// Marks the measured window of application `id`, and watches this machine over it.
    fn mark(&mut self, id: &str, mark: &str) -> Result<(), String> {
        let r = self
            .running
            .get_mut(id)
            .ok_or_else(|| format!("no application {id} is running"))?;
        let cpu = AppCpu::of(r.app.pid, r.cgroup.as_ref());
        match mark {
            "window_start" => {
                r.sampler.mark(Mark::WindowStart);
                r.watch = Some(MachineWatch::start(cpu));
            }
            "window_end" => {
                r.sampler.mark(Mark::WindowEnd);
                if let Some(w) = r.watch.take() {
                    r.it.machine = Some(w.finish(cpu, &mut r.it.warnings));
                }
            }
            other => return Err(format!("no mark {other:?} (window_start or window_end)")),
        }
        Ok(())
    }

    /// Samples the machine for the watches running; called between messages.
    fn tick(&mut self) {
        for r in self.running.values_mut() {
            if let Some(w) = r.watch.as_mut() {
                w.tick();
            }
        }
    }

    /// Applications that exited on their own since last asked, with their status.
    fn exits(&mut self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (id, r) in &mut self.running {
            if r.exit_said {
                continue;
            }
            if let Some(status) = r.app.exited() {
                r.exit_said = true;
                out.push((id.clone(), format!("{status}\n{}", r.app.log_tail())));
            }
        }
        out
    }

    /// Stops application `id`: what the iteration measured here, and its log.
    fn stop(&mut self, id: &str) -> Result<(serde_json::Value, String), String> {
        let r = self
            .running
            .remove(id)
            .ok_or_else(|| format!("no application {id} is running"))?;
        let grace = r.job.stop_timeout;
        let (it, log) = finish(r, grace);
        Ok((to_value(&it), log))
    }

    /// Stops every application (the client is gone): nothing is left running on this host.
    fn stop_all(&mut self) {
        for (_, r) in self.running.drain() {
            let _ = finish(r, GONE_GRACE);
        }
    }
}

/// Stops the application, turns its samples into figures and series, and says how it ended.
fn finish(r: Running, grace: Duration) -> (Iteration, String) {
    let Running {
        app,
        sampler,
        cgroup,
        job,
        mut it,
        watch,
        ..
    } = r;
    sampler.mark(Mark::WindowEnd);
    if let Some(w) = watch {
        let cpu = AppCpu::of(app.pid, cgroup.as_ref());
        it.machine = Some(w.finish(cpu, &mut it.warnings));
    }
    let spawned_at: Instant = app.spawned_at;
    let log = app.log.clone();
    let stop = app.stop(grace, cgroup.as_ref());
    let samples = sampler.stop();
    crate::measurements::record_app(&samples.figures(), &mut it.measurements);
    crate::series::record_app(&mut it, &samples, spawned_at);
    if let Some(c) = cgroup {
        let _ = c.remove();
    }
    if let Err(e) = super::iteration::stopped(&mut it, &stop, job.stop_timeout, &log, Ok(())) {
        it.error = Some(e);
    }
    (it, last_of(&log))
}

fn to_value(it: &Iteration) -> serde_json::Value {
    serde_json::to_value(it).unwrap_or_default()
}

/// The last [`LOG_LIMIT`] bytes of a log, as text.
fn last_of(log: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(log) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(LOG_LIMIT)));
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}
