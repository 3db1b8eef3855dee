//! An application on a host of its own, driven from here: its sources sent once per run, its
//! build made there, and each iteration started, sampled and stopped there by the agent while
//! the load runs from here (or from the load hosts). What the agent measured is merged into the
//! iteration; every error names the host.

use super::app_wire_job::WireJob;
use super::build::Built;
use super::iteration_context::{IterationContext, Watched};
use super::readings::AppCpu;
use super::under_load;
use crate::config::{AppJob, Host, LoadJob};
use crate::measurements::ids;
use crate::result::{Iteration, Warning, WarningKind};
use rigor_agent::protocol::AppWire;
use rigor_agent::{sources, Agent};
use rigor_probe::Mark;
use rigor_probe::NetPath;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// Agents of application hosts, connected once and kept for the run.
static AGENTS: Mutex<Vec<Agent>> = Mutex::new(Vec::new());

/// Each application host as its agent described itself, for the run's environment.
static SEEN: Mutex<Vec<(String, serde_json::Value)>> = Mutex::new(Vec::new());

/// Each container application's engine as its host's build reported it: (job, what).
static ENGINES: Mutex<Vec<(String, serde_json::Value)>> = Mutex::new(Vec::new());

/// The (host, folder key) pairs whose sources the host already unpacked in this run.
static SENT: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// The folder the host keeps `dir`'s sources in: named by the host, the folder and this user,
/// so two configs never share one.
fn key_of(host: &Host, dir: &Path) -> String {
    let mut h = Sha256::new();
    h.update(host.name.as_bytes());
    h.update([0]);
    h.update(dir.as_os_str().as_encoded_bytes());
    let hex: String = h
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("src-{hex}")
}

/// The name of one distinct build on the host (its artifact copy), from where rigor keeps its
/// snapshots here: one per build of the run.
fn build_name(key: &str, snapshots: &Path) -> String {
    let digest = Sha256::digest(snapshots.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("{key}-b{hex}")
}

/// The host's agent, connected now if none is.
fn take(host: &Host) -> anyhow::Result<Agent> {
    let kept = {
        let mut agents = AGENTS.lock().unwrap_or_else(|e| e.into_inner());
        agents
            .iter()
            .position(|a| a.name() == host.name)
            .map(|i| agents.swap_remove(i))
    };
    if let Some(a) = kept {
        return Ok(a);
    }
    let mut agent = Agent::connect(host).map_err(anyhow::Error::msg)?;
    agent.interrupt_with(crate::interrupt::interrupted, crate::interrupt::hurry);
    if agent.install() == rigor_agent::Install::Copied {
        crate::console::err(&format!(
            "application host {}: rigor copied into its cache (checksum verified)",
            host.name
        ));
    }
    // The transport serves every iteration: no iteration's sweep may end it.
    super::reaper::spare(agent.transport_pid());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if !seen.iter().any(|(n, _)| *n == host.name) {
        let mut info = serde_json::to_value(agent.host_info()).unwrap_or_default();
        if let serde_json::Value::Object(o) = &mut info {
            o.insert("role".into(), "application".into());
        }
        seen.push((host.name.clone(), info));
    }
    Ok(agent)
}

/// Keeps a working agent for the next iteration; one whose transport died is ended (and its
/// host's sources are sent again by the next connection), and so is one the user interrupted
/// while it worked: its closed input stops the build or start in progress on the host.
fn give_back(mut agent: Agent) {
    if agent.alive() && !crate::interrupt::interrupted() {
        AGENTS.lock().unwrap_or_else(|e| e.into_inner()).push(agent);
    } else {
        let name = agent.name().to_string();
        SENT.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(h, _)| *h != name);
        end(agent);
    }
}

fn end(agent: Agent) {
    let pid = agent.transport_pid();
    drop(agent);
    super::reaper::unspare(pid);
}

/// Adds the application hosts of the run, as their agents described themselves, to the run's
/// environment under `hosts`.
pub fn record_hosts(environment: &mut serde_json::Value) {
    let seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    let serde_json::Value::Object(env) = environment else {
        return;
    };
    if seen.is_empty() {
        return;
    }
    let hosts = env
        .entry("hosts")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    if let serde_json::Value::Object(h) = hosts {
        for (name, info) in seen.iter() {
            h.insert(name.clone(), info.clone());
        }
    }
    let engines = ENGINES.lock().unwrap_or_else(|e| e.into_inner());
    for (job, what) in engines.iter() {
        let container = env
            .get_mut("jobs")
            .and_then(|j| j.get_mut(job))
            .and_then(|j| j.get_mut("container"))
            .and_then(serde_json::Value::as_object_mut);
        // The engine is the host's; the image stays the job's own as written (the host's
        // report is of the last variant it built, whose image may be another tag).
        if let (Some(c), serde_json::Value::Object(what)) = (container, what) {
            c.extend(
                what.iter()
                    .filter(|(k, _)| k.starts_with("engine"))
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
        }
    }
}

/// Ends every application host's agent: at the end of a run.
pub fn disconnect_all() {
    ENGINES.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let agents = std::mem::take(&mut *AGENTS.lock().unwrap_or_else(|e| e.into_inner()));
    agents.into_iter().for_each(end);
    SENT.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// Builds `app` on its host: its sources sent there first (once per run), the build's output
/// copied into `log`.
pub fn build(app: &AppJob, host: &Host, log: &Path, snapshots: &Path) -> anyhow::Result<Built> {
    let wire = AppWire::of(app)?;
    let key = key_of(host, &app.dir);
    let name = build_name(&key, snapshots);
    let mut agent = take(host)?;
    let result = build_with(&mut agent, app, host, &key, &name, &wire, log);
    give_back(agent);
    result
}

fn build_with(
    agent: &mut Agent,
    app: &AppJob,
    host: &Host,
    key: &str,
    name: &str,
    wire: &AppWire,
    log: &Path,
) -> anyhow::Result<Built> {
    let pair = (host.name.clone(), key.to_string());
    let sent = SENT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&pair);
    // An image the host's engine already holds needs no sources.
    let named_image = wire.container.as_ref().is_some_and(|c| c.image.is_some());
    if !sent && !named_image {
        let (tar, files) = sources::pack(&app.dir).map_err(anyhow::Error::msg)?;
        crate::console::err(&format!(
            "rigor: sending {files} files ({:.1} MiB) of {} to host {}",
            tar.len() as f64 / (1024.0 * 1024.0),
            app.dir.display(),
            host.name
        ));
        agent.send_sources(key, &tar).map_err(anyhow::Error::msg)?;
        SENT.lock().unwrap_or_else(|e| e.into_inner()).push(pair);
    }
    if let Some(cmd) = &app.build {
        crate::console::err(&format!(
            "rigor: building `{}` on host {}: {cmd}",
            app.name, host.name
        ));
    }
    if let Some(file) = wire.container.as_ref().and_then(|c| c.dockerfile.as_ref()) {
        crate::console::err(&format!(
            "rigor: building the image of `{}` on host {} from {file}",
            app.name, host.name
        ));
    }
    let built = agent.build(key, name, wire).map_err(|e| e.to_string());
    if let Some(parent) = log.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let dockerfile = wire
        .container
        .as_ref()
        .is_some_and(|c| c.dockerfile.is_some());
    // A failed build's log stays on the host: what came back (its end) is kept here.
    let built = built
        .inspect_err(|e| {
            if app.build.is_some() || dockerfile {
                let _ = std::fs::write(log, format!("{e}\n"));
            }
        })
        .map_err(anyhow::Error::msg)?;
    if let Some(c) = &built.container {
        let mut engines = ENGINES.lock().unwrap_or_else(|e| e.into_inner());
        engines.retain(|(j, _)| *j != app.name);
        engines.push((app.name.clone(), c.clone()));
    }
    let wrote = (app.build.is_some() || dockerfile) && std::fs::write(log, &built.log).is_ok();
    Ok(Built {
        build_time_ms: built.build_time_ms,
        size_kib: built.size_kib,
        log: wrote.then(|| log.to_path_buf()),
        note: built.note.map(|n| format!("on host {}: {n}", host.name)),
        hash: built.hash,
        rewritten: built.rewritten,
        snapshot: None,
        remote_build: Some(name.to_string()),
        image: None,
    })
}

/// The application as the load phase sees it: on its host, through the agent.
struct Remote<'a> {
    agent: &'a mut Agent,
    id: String,
    spawned_at: Instant,
    /// The first failure to reach the agent while the load ran.
    lost: Option<String>,
}

impl Watched for Remote<'_> {
    fn exited(&mut self) -> Option<String> {
        if self.lost.is_some() {
            return None;
        }
        match self.agent.app_exited(&self.id) {
            Ok(status) => status,
            Err(e) => {
                self.lost = Some(e.to_string());
                None
            }
        }
    }
    fn mark(&mut self, mark: Mark) {
        let edge = match mark {
            Mark::WindowStart => "window_start",
            Mark::WindowEnd => "window_end",
        };
        if let Err(e) = self.agent.app_mark(&self.id, edge) {
            self.lost.get_or_insert(e.to_string());
        }
    }
    fn log_tail(&self) -> String {
        format!(
            "(the application's log is on host {}; it is copied into this iteration's log \
             when the application stops)",
            self.agent.name()
        )
    }
    fn spawned_at(&self) -> Instant {
        self.spawned_at
    }
}

/// Runs one iteration of an application on `host` under `load_job`.
pub fn run(
    ctx: &IterationContext,
    it: &mut Iteration,
    load_job: &LoadJob,
    host: &Host,
) -> anyhow::Result<()> {
    let name = ctx.built.remote_build.clone().ok_or_else(|| {
        anyhow::anyhow!(
            "no build of `{}` was made on host {}",
            ctx.row.app.name,
            host.name
        )
    })?;
    let wire = AppWire::of(&ctx.row.app)?;
    let key = key_of(host, &ctx.row.app.dir);
    let mut agent = take(host)?;
    let result = run_with(ctx, it, load_job, &mut agent, &key, &name, &wire);
    give_back(agent);
    let result = result.map_err(|e| name_host(e, &host.name));
    if result.is_ok() {
        crate::guards::iteration_guards(it);
    }
    result
}

/// Errors that come from the agent name the host already (`host NAME: …`); others get it. A
/// host's name alone in the text is no sign: `app` is in "the application crashed".
fn name_host(e: anyhow::Error, host: &str) -> anyhow::Error {
    let text = format!("{e:#}");
    let label = format!("host {host}");
    let named = text.match_indices(&label).any(|(at, _)| {
        !text[at + label.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_' || c == '.')
    });
    if named {
        e
    } else {
        anyhow::anyhow!("host {host}: {text}")
    }
}

fn run_with(
    ctx: &IterationContext,
    it: &mut Iteration,
    load_job: &LoadJob,
    agent: &mut Agent,
    key: &str,
    name: &str,
    wire: &AppWire,
) -> anyhow::Result<()> {
    let id = format!("{}-{}-{}", std::process::id(), ctx.sequence, next_attempt());
    let status = |phase: &str| ctx.status(phase);
    status(&format!("starting on {}", agent.name()));
    let started = agent
        .start_app(
            &id,
            key,
            name,
            wire,
            ctx.sequence,
            ctx.sample_interval,
            ctx.drop_caches,
            &load_job.spec.url,
        )
        .map_err(|e| e.to_string())
        .inspect_err(|e| {
            // The iteration's log names this file: what came back of the start (the end of
            // the application's log there) is kept in it.
            let _ = std::fs::write(&ctx.log, format!("{e}\n"));
        })
        .map_err(anyhow::Error::msg)?;
    let spawned_at = Instant::now()
        .checked_sub(started.ready)
        .unwrap_or_else(Instant::now);
    let mut start: Iteration = from_host(started.iteration, agent.name())?;
    said_on(&mut start, agent.name());
    it.pid = Some(started.pid);
    it.warnings.extend(start.warnings);
    it.priority = start.priority;
    it.caches_dropped = start.caches_dropped;
    it.network = start.network;
    it.outside_window.requests += start.outside_window.requests;
    it.outside_window.bytes += start.outside_window.bytes;
    it.measurements.insert(
        ids::APP_START_TIME.into(),
        started.ready.as_secs_f64() * 1e3,
    );
    let info = agent.host_info();
    let shared =
        !info.network.is_empty() && info.network == rigor_agent::protocol::network_identity();
    let here = served_here(ctx, load_job, started.pid, agent.name(), shared);
    it.warnings.extend(here);
    let mut remote = Remote {
        agent,
        id: id.clone(),
        spawned_at,
        lost: None,
    };
    let result = under_load::under_load(ctx, load_job, it, &mut remote, AppCpu::Elsewhere, &status);
    let lost = remote.lost.take();
    status("stopping");
    let stopped = agent.stop_app(&id, ctx.row.app.stop_timeout);
    let (there, log) = match stopped {
        Ok(s) => s,
        Err(e) => {
            let e = e.to_string();
            // A transport that died fails the stop too: said once.
            let e = match lost {
                Some(l) if l != e && agent.alive() => format!("{l}; {e}"),
                Some(l) => l,
                None => e,
            };
            return Err(match result {
                Err(r) => anyhow::anyhow!("{r}; {e}"),
                Ok(()) => anyhow::anyhow!(e),
            });
        }
    };
    let _ = std::fs::write(&ctx.log, &log);
    let mut there = from_host(there, agent.name())?;
    said_on(&mut there, agent.name());
    merge_stopped(it, there);
    match (result, it.error.take()) {
        (Err(r), _) => Err(r),
        (Ok(()), Some(e)) => Err(anyhow::anyhow!(e)),

        (Ok(()), None) => Ok(()),
    }
}

/// What this machine reads of the application on its host: the load (when it runs from here)
/// and the metrics page. A URL that is one of this machine's own addresses reaches a process
/// here, which is the application only when its host is this very machine. Another process
/// listening there (a copy of the application, a tunnel) is named: it is what would be measured.
/// When the host shares this machine's network (`shared`: an agent through `env`), the host's
/// own check of the load's port was of this very address, and a container's port held by the
/// engine's reservation (podman's `conmon`) is the application's, as on the host.
fn served_here(
    ctx: &IterationContext,
    load_job: &LoadJob,
    app_pid: i32,
    host: &str,
    shared: bool,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let container = ctx.row.app.container.is_some() && shared;
    if load_job.hosts.is_empty() && !shared {
        let addr = load_job.addr;
        // Nothing listening here fails the first request, which says so.
        let served = elsewhere(addr, app_pid, false).filter(|h| !h.ends_with("nothing listens"));
        if let Some(here) = served {
            out.push(Warning::new(
                WarningKind::Proxy,
                format!(
                    "the load runs from this machine, and {addr} is this machine's own {here}, \
                     not the application on host {host}: the load measures what answers here"
                ),
                format!(
                    "point the load job's `url` at an address this machine reaches host {host} by"
                ),
            ));
        }
    }
    let page = ctx.row.app.metrics.as_ref().map(|m| m.url.as_str());
    if let Some((url, addr)) = page.and_then(|u| Some((u, rigor_load::resolve_url(u).ok()?))) {
        if let Some(here) = elsewhere(addr, app_pid, container) {
            out.push(Warning::new(
                WarningKind::Metrics,
                format!(
                    "the metrics page {url} is read from this machine, and {addr} is this \
                     machine's own {here}, not the application on host {host}"
                ),
                format!("give `metrics` an address this machine reaches host {host} by"),
            ));
        }
    }
    out
}

/// When `addr` is one of this machine's own addresses and no process of the application (PID
/// `app_pid`, as its host numbers it) listens there: what it is here (`loopback, where PID 12
/// (nginx) listens`). With `container`, the engine's port reservation is the application's.
fn elsewhere(addr: SocketAddr, app_pid: i32, container: bool) -> Option<String> {
    let what = match rigor_probe::net_path(addr.ip()) {
        NetPath::OtherHost => return None,
        NetPath::Loopback => "loopback",
        NetPath::LocalInterface => "address",
    };
    let owners = rigor_probe::listener_owners(addr);
    let tree = rigor_probe::descendants(app_pid);
    let own = |o: &rigor_probe::SocketOwner| {
        tree.contains(&o.pid) || (container && super::container::reserves_port(&o.comm))
    };
    if owners.iter().any(own) {
        return None;
    }
    if owners.is_empty() {
        return Some(format!("{what}, where nothing listens"));
    }
    let names: Vec<String> = owners
        .iter()
        .map(|o| format!("PID {} ({})", o.pid, o.comm))
        .collect();
    Some(format!("{what}, where {} listens", names.join(", ")))
}

/// The host's warnings say where they were raised: this machine drives the load and has
/// warnings of its own about the same figures (its CPU, its steal).
fn said_on(it: &mut Iteration, host: &str) {
    for w in &mut it.warnings {
        w.message = format!("on host {host}: {}", w.message);
    }
}

/// An iteration as the host's agent sent it.
fn from_host(v: serde_json::Value, host: &str) -> anyhow::Result<Iteration> {
    serde_json::from_value(v)
        .map_err(|e| anyhow::anyhow!("host {host}: the agent's figures cannot be read: {e}"))
}

/// A number per attempt, so a re-run of the same slot is a new application on the host.
fn next_attempt() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// What the host measured, merged into the iteration: the app.* figures, the application's
/// series (the load's, measured here, kept), its warnings, the host's machine over the window
/// (interference where the application ran) and how it ended.
fn merge_stopped(it: &mut Iteration, there: Iteration) {
    it.measurements.extend(there.measurements);
    it.warnings.extend(there.warnings);
    if there.machine.is_some() {
        it.machine = there.machine;
    }
    if let Some(mut s) = there.series {
        if let Some(here) = it.series.take() {
            s.load = here.load;
            s.metrics = here.metrics;
            s.metrics_t_ms = here.metrics_t_ms;
        }
        it.series = Some(s);
    }
    it.error = there.error;
}

#[cfg(test)]
mod tests {
    use super::name_host;

    #[test]
    fn an_error_names_its_host_once_whatever_the_hosts_name_is_in() {
        let said = |e: &str, host: &str| format!("{:#}", name_host(anyhow::anyhow!("{e}"), host));
        // A short name is in many words; only `host NAME` says where.
        assert_eq!(
            said("the application crashed during the load", "app"),
            "host app: the application crashed during the load"
        );
        assert_eq!(
            said("the application crashed during the load", "h"),
            "host h: the application crashed during the load"
        );
        assert_eq!(
            said("host app1: the transport died", "app"),
            "host app: host app1: the transport died"
        );
        assert_eq!(
            said("host app: the transport died", "app"),
            "host app: the transport died"
        );
        assert_eq!(
            said("a; host app: the transport died", "app"),
            "a; host app: the transport died"
        );
    }
}
