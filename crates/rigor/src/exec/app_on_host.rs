//! The application's side of an iteration on its own host, as the agent there runs it: sources
//! unpacked into the agent's work dir, the verified build, and each start fresh in a cgroup of
//! its own, sampled until stopped, with the debug, stale, proxy and machine guards run here —
//! where the application is. The client drives the load and merges what comes back.

use super::app::AppProcess;
use super::app_wire_job::WireJob;
use super::artifact::Snapshot;
use super::build::{self, Built};
use super::readings::{AppCpu, MachineWatch};
use crate::result::Iteration;
use rigor_agent::app_host::AppService;
use rigor_agent::protocol::{AppWire, BuiltWire};
use rigor_agent::ServiceError;
use rigor_probe::{Cgroup, Mark, Sampler};
use std::collections::{HashMap, HashSet};
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
    /// The folders whose sources this agent is receiving: their first piece starts a fresh
    /// archive, whatever an agent that died mid-way left there.
    receiving: HashSet<String>,
}

impl AppHost {
    /// Applications under `root` (created on first use).
    pub fn new(root: PathBuf) -> AppHost {
        AppHost {
            root,
            builds: HashMap::new(),
            running: HashMap::new(),
            receiving: HashSet::new(),
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

    fn dir(&self, key: &str) -> Result<PathBuf, HostError> {
        dir_of(&self.root, key)
    }

    /// Removes what earlier runs built from folder `key` (artifact copies, logs): fresh
    /// sources make them stale, and a host that runs every night would fill up with them.
    fn forget_builds_of(&mut self, key: &str) {
        let prefix = format!("{key}-b");
        self.builds.retain(|name, _| !name.starts_with(&prefix));
        for e in std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(&prefix) else {
                continue;
            };
            let ours = [".artifacts", ".logs", ".built.json"]
                .iter()
                .any(|ext| rest.ends_with(ext));
            if !ours {
                continue;
            }
            let path = e.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}

fn dir_of(root: &Path, key: &str) -> Result<PathBuf, HostError> {
    if !rigor_agent::sources::valid_key(key) {
        return Err(HostError::BadKey {
            key: key.to_string(),
        });
    }
    Ok(root.join(key))
}

/// Why the host refused a request about a folder or a build; the agent sends the message back.
#[derive(Debug, thiserror::Error)]
enum HostError {
    /// A folder key with characters a file name must not have.
    #[error("{key:?} cannot name a folder (letters, digits and `-` only)")]
    BadKey { key: String },
    /// The built artifact resolves outside the sources' folder.
    #[error(
        "the artifact of `{job}` ({artifact}) resolves to {}, outside the sources' folder {} on \
         this host (a symbolic link in the sources?): set `artifact` to what the build produces",
        .resolved.display(),
        .folder.display()
    )]
    Outside {
        job: String,
        artifact: String,
        resolved: PathBuf,
        folder: PathBuf,
    },
    /// A file the host keeps could not be written.
    #[error("writing {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl AppService for AppHost {
    /// Takes a chunk of folder `key`'s sources; the last one unpacks them (files, bytes).
    fn sources(
        &mut self,
        key: &str,
        data: &[u8],
        last: bool,
    ) -> Result<Option<(u64, u64)>, ServiceError> {
        let dir = self.dir(key)?;
        std::fs::create_dir_all(&self.root)
            .map_err(|e| format!("creating {}: {e}", self.root.display()))?;
        let archive = self.root.join(format!("{key}.tar"));
        if self.receiving.insert(key.to_string()) {
            // A transport that died during an upload left part of an archive behind.
            match std::fs::remove_file(&archive) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(format!("removing {}: {e}", archive.display()).into())
                }
                _ => {}
            }
        }
        if let Err(e) = rigor_agent::sources::append(&archive, data) {
            self.receiving.remove(key);
            let _ = std::fs::remove_file(&archive);
            return Err(e.into());
        }
        if !last {
            return Ok(None);
        }
        self.receiving.remove(key);
        let unpacked = rigor_agent::sources::unpack(&archive, &dir);
        let _ = std::fs::remove_file(&archive);
        let unpacked = unpacked?;
        self.forget_builds_of(key);
        Ok(Some(unpacked))
    }

    /// Builds `app` in folder `key` as build `name`.
    fn build(&mut self, key: &str, name: &str, app: AppWire) -> Result<BuiltWire, ServiceError> {
        let dir = self.dir(key)?;
        let logs = self.dir(name)?.with_extension("logs");
        let named_image = app.container.as_ref().is_some_and(|c| c.image.is_some());
        if named_image {
            // An image the engine holds is all it runs: no sources are sent for it.
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("creating {}: {e}", dir.display()))?;
        } else if !dir.is_dir() {
            return Err(format!("no sources for {key}: send them first").into());
        }
        let job = app.into_job(&dir).map_err(|e| format!("{e:#}"))?;
        std::fs::create_dir_all(&logs).map_err(|e| format!("creating {}: {e}", logs.display()))?;
        let log = logs.join("build.log");
        let _ = std::fs::remove_file(&log);
        let snapshots = self.dir(name)?.with_extension("artifacts");
        let built = build::build(&job, &log, &snapshots).map_err(|e| format!("{e:#}"))?;
        if let Some(snap) = &built.snapshot {
            inside(&dir, &snap.artifact, &job)?;
        }
        keep(&self.dir(name)?.with_extension("built.json"), &built)?;
        let wire = BuiltWire {
            build_time_ms: built.build_time_ms,
            size_kib: built.size_kib,
            note: built.note.clone(),
            hash: built.hash.clone(),
            rewritten: built.rewritten,
            log: last_of(&log),
            container: job.container.as_ref().map(super::container::environment),
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
    ) -> Result<(i32, Duration, serde_json::Value), ServiceError> {
        if self.running.contains_key(id) {
            return Err(format!("application {id} is already running").into());
        }
        // The id names the application's log file under the work dir.
        if !rigor_agent::sources::valid_key(id) {
            return Err(format!(
                "{id:?} cannot name an application (letters, digits and `-` only)"
            )
            .into());
        }
        let dir = self.dir(key)?;
        if !self.builds.contains_key(name) {
            // An agent connected afresh (the last one died): the build is on disk.
            let found = kept(&self.dir(name)?.with_extension("built.json"), &dir)
                .ok_or_else(|| format!("no build {name} on this host: build it first"))?;
            self.builds.insert(name.to_string(), found);
        }
        let built = &self.builds[name];
        let job = app.into_job(&dir).map_err(|e| format!("{e:#}"))?;
        let swept = match &built.image {
            Some(image) => super::container::sweep_left(image).map_err(|e| format!("{e:#}"))?,
            None => Vec::new(),
        };
        super::app_steps::port_is_free(&job.ready).map_err(|e| format!("{e:#}"))?;
        built.ensure_artifact().map_err(|e| format!("{e:#}"))?;
        let mut it = Iteration::new(0, sequence);
        if !swept.is_empty() {
            // Said in the result: this host's stderr is not the user's.
            it.warnings.push(crate::result::Warning::of(
                crate::result::WarningKind::Leftovers,
                format!(
                    "{} container(s) an earlier rigor left running were removed: {}",
                    swept.len(),
                    swept.join(", ")
                ),
            ));
        }
        if drop_caches {
            super::readings::drop_caches(&mut it);
        }
        let log = self
            .dir(name)?
            .with_extension("logs")
            .join(format!("app-{id}.log"));
        let who = "the application";
        let launched = match &built.image {
            // A fresh container of the build's image, started by this host's engine.
            Some(image) => {
                super::container::launch_image(&job, image, sequence, &log, None, &mut it, who)
            }
            None => super::app_steps::launch_process(&job, sequence, &log, None, &mut it, who),
        };
        let (mut process, cgroup, norm) = launched.map_err(|e| format!("{e:#}"))?;
        let sampler = match Sampler::start_with(process.pid, cgroup.clone(), interval, norm) {
            Ok(s) => s,
            Err(e) => {
                let _ = process.stop(job.stop_timeout, cgroup.as_ref());
                if let Some(c) = cgroup {
                    let _ = c.remove();
                }
                return Err(format!(
                    "cannot start the thread that samples the application: {e} (a limit on \
                     processes, threads or memory); the application was stopped"
                )
                .into());
            }
        };
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
                return Err(format!("{e:#}").into());
            }
        };
        // The port the load hits, as this host resolves it: owned by the application, or by
        // something in front of it?
        if let Ok(addr) = rigor_load::resolve_url(load_url) {
            let warnings = &mut running.it.warnings;
            running.it.network = Some(if running.job.container.is_some() {
                super::container::proxy_guard(pid, addr, warnings)
            } else {
                crate::guards::proxy_guard(pid, addr, warnings)
            });
        }
        let started = to_value(&running.it);
        // Said once, at the start: what comes back at the stop is only what happened since.
        running.it.warnings.clear();
        running.it.outside_window = Default::default();
        self.running.insert(id.to_string(), running);
        Ok((pid, took, started))
    }

    /// Marks the measured window of application `id`, and watches this machine over it.
    fn mark(&mut self, id: &str, mark: &str) -> Result<(), ServiceError> {
        let r = self
            .running
            .get_mut(id)
            .ok_or_else(|| format!("no application {id} is running"))?;
        let cpu = AppCpu::of(r.app.pid, r.cgroup.as_ref());
        match mark {
            "window_start" => {
                r.sampler.mark(Mark::WindowStart);
                r.watch = Some(MachineWatch::start(cpu, super::readings::Client::Elsewhere));
            }
            "window_end" => {
                r.sampler.mark(Mark::WindowEnd);
                if let Some(w) = r.watch.take() {
                    r.it.machine = Some(w.finish(cpu, &mut r.it.warnings));
                }
            }
            other => return Err(format!("no mark {other:?} (window_start or window_end)").into()),
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
    fn stop(&mut self, id: &str) -> Result<(serde_json::Value, String), ServiceError> {
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
        // An upload cut short will not be finished: its part goes.
        for key in self.receiving.drain() {
            let _ = std::fs::remove_file(self.root.join(format!("{key}.tar")));
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
    if let Err(e) = super::app_steps::stopped(&mut it, &stop, job.stop_timeout, &log, Ok(())) {
        it.error = Some(format!("{e:#}"));
    }
    (it, last_of(&log))
}

/// Refuses an artifact that resolves (through a symbolic link in the sources) outside the
/// sources' folder: the agent would hash, copy and put back a file it does not own.
fn inside(dir: &Path, artifact: &Path, job: &crate::config::AppJob) -> Result<(), HostError> {
    let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if artifact.starts_with(&real) {
        return Ok(());
    }
    Err(HostError::Outside {
        job: job.name.clone(),
        artifact: job
            .artifact
            .as_deref()
            .map(|a| a.display().to_string())
            .unwrap_or_default(),
        resolved: artifact.to_path_buf(),
        folder: real,
    })
}

/// Writes what a later agent needs to start build `built` (its artifact's copy and hash).
fn keep(path: &Path, built: &Built) -> Result<(), HostError> {
    let snapshot = built.snapshot.as_ref().map(|s| {
        serde_json::json!({
            "artifact": s.artifact,
            "copy": s.copy,
            "hash": s.hash,
        })
    });
    let image = built.image.as_ref().map(|i| {
        serde_json::json!({
            "engine": i.engine.program(),
            "id": i.id,
        })
    });
    let text = serde_json::json!({ "snapshot": snapshot, "image": image }).to_string();
    std::fs::write(path, text).map_err(|source| HostError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// A build an earlier agent made, as [`keep`] wrote it; `None` when there is none (or its
/// artifact is not inside the sources in `dir`).
fn kept(path: &Path, dir: &Path) -> Option<Built> {
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let snapshot = match &v["snapshot"] {
        serde_json::Value::Null => None,
        s => {
            let artifact = PathBuf::from(s["artifact"].as_str()?);
            let real = std::fs::canonicalize(dir).ok()?;
            if !artifact.starts_with(&real) {
                return None;
            }
            Some(Snapshot {
                artifact,
                copy: PathBuf::from(s["copy"].as_str()?),
                hash: s["hash"].as_str()?.to_string(),
            })
        }
    };
    let image = match &v["image"] {
        serde_json::Value::Null => None,
        i => {
            let kind = match i["engine"].as_str()? {
                "podman" => crate::config::EngineKind::Podman,
                "docker" => crate::config::EngineKind::Docker,
                _ => return None,
            };
            Some(super::container::BuiltImage::held_by(
                kind,
                i["id"].as_str()?.to_string(),
            ))
        }
    };
    Some(Built {
        snapshot,
        image,
        ..Built::default()
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_starts_afresh_whatever_a_dead_agent_left_of_one() {
        let root = std::env::temp_dir().join(format!("rigor-app-host-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let src = root.join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("main.c"), "int main(){}").unwrap();
        let (tar, _) = rigor_agent::sources::pack(&src).unwrap();
        // What an agent killed in the middle of an upload left: the start of another archive.
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("src-k.tar"), &tar[..700]).unwrap();
        let mut host = AppHost::new(work.clone());
        let (first, rest) = tar.split_at(600);
        assert_eq!(host.sources("src-k", first, false).unwrap(), None);
        let (files, bytes) = host.sources("src-k", rest, true).unwrap().unwrap();
        assert_eq!((files, bytes), (1, tar.len() as u64));
        assert_eq!(
            std::fs::read_to_string(work.join("src-k/main.c")).unwrap(),
            "int main(){}"
        );
        assert!(!work.join("src-k.tar").exists());
        // An upload the client abandons (it was interrupted, or went) leaves nothing either.
        host.sources("src-k", first, false).unwrap();
        assert!(work.join("src-k.tar").exists());
        host.stop_all();
        assert!(!work.join("src-k.tar").exists());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn an_application_id_cannot_name_a_path_outside_the_work_dir() {
        let root = std::env::temp_dir().join(format!("rigor-app-host-id-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let work = root.join("work");
        let mut host = AppHost::new(work.clone());
        let (tar, _) = {
            let src = root.join("src");
            std::fs::create_dir_all(&src).unwrap();
            std::fs::write(src.join("run.sh"), "exec sleep 30").unwrap();
            rigor_agent::sources::pack(&src).unwrap()
        };
        host.sources("src-k", &tar, true).unwrap();
        let app = AppWire {
            name: "app".into(),
            build: None,
            artifact: None,
            command: "sh run.sh".into(),
            ready: rigor_agent::app_wire::ReadyWire::Stdout("never".into()),
            ready_timeout_ns: 100_000_000,
            stop_timeout_ns: 100_000_000,
            build_timeout_ns: 1_000_000_000,
            env: Vec::new(),
            cpus: None,
            priority_high: false,
            configuration: None,
            container: None,
        };
        host.build("src-k", "src-k-b1", app.clone()).unwrap();
        let e = host
            .start(
                "../../escaped",
                "src-k",
                "src-k-b1",
                app,
                0,
                Duration::from_millis(100),
                false,
                "http://127.0.0.1:1/",
            )
            .unwrap_err();
        assert!(e.to_string().contains("cannot name an application"), "{e}");
        assert!(!root.join("escaped.log").exists());
        assert!(!work.join("escaped.log").exists());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn fresh_sources_remove_what_earlier_runs_built_from_them() {
        let root = std::env::temp_dir().join(format!("rigor-app-host-old-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let src = root.join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("main.c"), "int main(){}").unwrap();
        let (tar, _) = rigor_agent::sources::pack(&src).unwrap();
        let work = root.join("work");
        for old in ["src-k-b1.artifacts", "src-k-b1.logs", "src-j-b2.artifacts"] {
            std::fs::create_dir_all(work.join(old)).unwrap();
            std::fs::write(work.join(old).join("app"), "an old build").unwrap();
        }
        std::fs::write(work.join("src-k-b1.built.json"), "{}").unwrap();
        let mut host = AppHost::new(work.clone());
        host.sources("src-k", &tar, true).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&work)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["src-j-b2.artifacts", "src-k"],
            "another folder's builds stay"
        );
        let _ = std::fs::remove_dir_all(&root);
    }
}
