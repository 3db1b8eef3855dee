//! `rigor agent --stdio`: serves the agent protocol on stdin/stdout until `bye` or until stdin
//! closes. A closed stdin means the transport is gone: every load is cancelled and the process
//! exits, so nothing is left running on the host. Loads run as threads of the agent; the
//! applications it is asked to build and start run as its children, in cgroups of their own,
//! with their files under its work dir only.

use super::app_host::AppService;
use super::error::AgentError;
use super::protocol::{
    line, unix_ns, FromAgent, HostInfo, SpecWire, ToAgent, CAPABILITIES, PROTOCOL, RIGOR_VERSION,
};
use super::tool_wire::ToolRunner;
use base64::Engine as _;
use rigor_load::{Live, Phase, ReportWire};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// How long loads get to stop after stdin closed before the process exits regardless.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// How far past its start time a load may arrive and still start (later, the hosts would not
/// share a window).
const START_LATE_LIMIT: Duration = Duration::from_secs(1);

/// The agent's output: one writer, each message a whole line. A failed write means the client
/// is gone, which stops everything like a closed stdin.
#[derive(Clone)]
struct Out {
    stdout: Arc<Mutex<std::io::Stdout>>,
    gone: Arc<AtomicBool>,
}

impl Out {
    fn send(&self, msg: &FromAgent) {
        let mut text = line(msg);
        text.push('\n');
        let mut out = self.stdout.lock().unwrap_or_else(|e| e.into_inner());
        if out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            self.gone.store(true, Ordering::Relaxed);
        }
    }

    fn error(&self, id: Option<&str>, message: impl std::fmt::Display) {
        self.send(&FromAgent::Error {
            id: id.map(str::to_string),
            message: message.to_string(),
        });
    }
}

/// A load running on a thread of its own.
struct Running {
    cancel: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

/// What the stdin reader hands the main loop.
enum Input {
    Line(String),
    /// End of input or a read error: the transport is gone.
    Closed,
}

/// Serves the protocol until `bye` (Ok) or a closed stdin (Ok); an unsupported protocol
/// version is an Err after the error message was sent.
/// `apps` runs the applications it is asked to; `on_closed` is called (on another thread) the
/// moment stdin closes, so a wait in progress (readiness, a build) can end at once.
/// `tools` runs the load tools it is asked to.
pub fn serve_stdio(
    apps: &mut dyn AppService,
    tools: ToolRunner,
    on_closed: fn(),
) -> Result<(), AgentError> {
    // The engine's writes to a closed socket must fail, not kill the process; Rust already
    // ignores SIGPIPE, so a vanished client shows up as a failed write to stdout too.
    let out = Out {
        stdout: Arc::new(Mutex::new(std::io::stdout())),
        gone: Arc::new(AtomicBool::new(false)),
    };
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("rigor-agent-stdin".into())
        .spawn(move || {
            for l in std::io::stdin().lock().lines() {
                match l {
                    Ok(l) => {
                        if tx.send(Input::Line(l)).is_err() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            // A readiness wait or a build in progress ends now; the main loop then stops
            // everything.
            on_closed();
            let _ = tx.send(Input::Closed);
        })
        .map_err(|source| AgentError::Thread {
            what: "input".into(),
            source,
        })?;

    let mut loads: HashMap<String, Running> = HashMap::new();
    let send = |m: &FromAgent| out.send(m);
    let outcome = loop {
        let input = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(i) => i,
            Err(mpsc::RecvTimeoutError::Timeout) if !out.gone.load(Ordering::Relaxed) => {
                loads.retain(|_, r| !r.thread.is_finished());
                super::app_host::report_exits(apps, &send);
                continue;
            }
            Err(_) => Input::Closed,
        };
        let text = match input {
            Input::Line(t) if t.trim().is_empty() => continue,
            Input::Line(t) => t,
            Input::Closed => {
                eprintln!("rigor agent: input closed: stopping every load and exiting");
                break Ok(());
            }
        };
        let msg = match serde_json::from_str::<ToAgent>(&text) {
            Ok(m) => m,
            Err(e) => {
                out.error(None, unknown_message(&text, &e));
                continue;
            }
        };
        let Some(msg) = super::app_host::handle(apps, msg, &send) else {
            super::app_host::report_exits(apps, &send);
            continue;
        };
        match msg {
            ToAgent::Hello { protocol, .. } if protocol != PROTOCOL => {
                let e = AgentError::ClientMismatch(protocol);
                out.error(None, e.to_string());
                break Err(e);
            }
            ToAgent::Hello { .. } => out.send(&FromAgent::Hello {
                protocol: PROTOCOL,
                rigor_version: RIGOR_VERSION.into(),
                capabilities: CAPABILITIES.iter().map(|c| c.to_string()).collect(),
                host: host_info(),
            }),
            ToAgent::Clock {} => out.send(&FromAgent::Clock {
                unix_ns: unix_ns(SystemTime::now()),
            }),
            ToAgent::Load {
                id,
                spec,
                start_at_unix_ns,
            } => {
                loads.retain(|_, r| !r.thread.is_finished());
                if loads.contains_key(&id) {
                    out.error(Some(&id), format!("load {id} is already running"));
                    continue;
                }
                match start_load(&out, &id, &spec, start_at_unix_ns) {
                    Ok(r) => {
                        loads.insert(id, r);
                    }
                    Err(e) => out.error(Some(&id), e),
                }
            }
            ToAgent::Probe {
                id,
                url,
                method,
                headers,
                body_base64,
                timeout_ns,
                find_base64,
                insecure,
                http2,
            } => {
                let probe = rigor_load::probe_request_as(http2);
                let decode = |b: Option<String>| {
                    b.map(|b| base64::engine::general_purpose::STANDARD.decode(b))
                        .transpose()
                };
                match (decode(body_base64), decode(find_base64)) {
                    (Ok(body), Ok(find)) => match probe(
                        &url,
                        &method,
                        &headers,
                        body.as_deref(),
                        Duration::from_nanos(timeout_ns),
                        find.as_deref(),
                        insecure,
                    ) {
                        Ok(r) => out.send(&FromAgent::Probed {
                            id,
                            status: r.status,
                            latency_ns: u64::try_from(r.latency.as_nanos()).unwrap_or(u64::MAX),
                            bytes_sent: r.bytes_sent,
                            found: r.found,
                        }),
                        Err(e) => out.error(Some(&id), e.to_string()),
                    },
                    _ => out.error(Some(&id), "the probe's body is not valid base64"),
                }
            }
            ToAgent::Path { url } => out.send(&FromAgent::Path {
                path: super::protocol::HostPath::of(&url),
                url,
            }),
            ToAgent::RunTool {
                id,
                job,
                start_at_unix_ns,
            } => {
                loads.retain(|_, r| !r.thread.is_finished());
                if loads.contains_key(&id) {
                    out.error(Some(&id), format!("load {id} is already running"));
                    continue;
                }
                match start_tool(&out, &id, job, start_at_unix_ns, tools) {
                    Ok(r) => {
                        loads.insert(id, r);
                    }
                    Err(e) => out.error(Some(&id), e),
                }
            }
            ToAgent::Cancel { id } => match loads.get(&id) {
                Some(r) => r.cancel.store(true, Ordering::Relaxed),
                None => out.error(Some(&id), format!("no load {id} is running")),
            },
            ToAgent::Bye {} => break Ok(()),
            // Handled above.
            ToAgent::Sources { .. }
            | ToAgent::Build { .. }
            | ToAgent::StartApp { .. }
            | ToAgent::AppMark { .. }
            | ToAgent::StopApp { .. } => {}
        }
    };
    stop_all(loads);
    apps.stop_all();
    outcome
}

/// Cancels every load and waits (a bounded time) for each to stop.
fn stop_all(loads: HashMap<String, Running>) {
    for r in loads.values() {
        r.cancel.store(true, Ordering::Relaxed);
    }
    let deadline = Instant::now() + STOP_GRACE;
    for (id, r) in loads {
        while !r.thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if r.thread.is_finished() {
            let _ = r.thread.join();
        } else {
            // Leaving the process ends its threads: nothing outlives the agent.
            eprintln!("rigor agent: load {id} did not stop within {STOP_GRACE:?}; exiting anyway");
        }
    }
}

/// The error for a line that is not a message of this protocol, naming its type if it has one.
fn unknown_message(text: &str, e: &serde_json::Error) -> String {
    let kind = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string));
    match kind {
        Some(k) => format!("unknown or malformed message of type {k:?}: {e}"),
        None => format!("not a protocol message (a JSON object with a \"type\"): {e}"),
    }
}

/// Checks the spec, then runs it on a thread: waits for the start time, loads, and sends
/// progress about once a second and then `load_done` (or `error`).
fn start_load(
    out: &Out,
    id: &str,
    spec: &SpecWire,
    start_at_unix_ns: u64,
) -> Result<Running, AgentError> {
    let spec = spec.to_spec()?;
    rigor_load::check(&spec)?;
    spawn_at(
        out,
        id,
        "load",
        start_at_unix_ns,
        move |out, id, flag, _| {
            let live = Live::default();
            let done = AtomicBool::new(false);
            let result = std::thread::scope(|scope| {
                // Progress is a courtesy: a load whose progress thread cannot start runs without.
                let _ = std::thread::Builder::new()
                    .name("rigor-agent-progress".into())
                    .spawn_scoped(scope, || progress(out, &id, &live, &done, flag));
                let r = rigor_load::run(&spec, &live, flag);
                done.store(true, Ordering::Relaxed);
                r
            });
            match result
                .map_err(|e| e.to_string())
                .and_then(|r| ReportWire::encode(&r).map_err(|e| e.to_string()))
            {
                Ok(report) => out.send(&FromAgent::LoadDone {
                    id,
                    report: Box::new(report),
                }),
                Err(e) => out.error(Some(&id), e),
            }
        },
    )
}

/// Runs a load tool on a thread: waits for the start time, runs the tool (stopped early by a
/// cancel or a vanished client), and sends `tool_done` (or `error`, for a tool that is not
/// installed here or cannot start).
fn start_tool(
    out: &Out,
    id: &str,
    job: super::tool_wire::ToolJobWire,
    start_at_unix_ns: u64,
    tools: ToolRunner,
) -> Result<Running, AgentError> {
    job.spec.to_spec()?;
    spawn_at(
        out,
        id,
        "tool",
        start_at_unix_ns,
        move |out, id, _, cancelled| match tools(&job, &id, cancelled) {
            Ok(run) => out.send(&FromAgent::ToolDone {
                id,
                run: Box::new(run),
            }),
            Err(e) => out.error(Some(&id), e.to_string()),
        },
    )
}

/// Runs `work` on a thread of its own once `start_at_unix_ns` comes (an `error` instead when
/// cancelled first, or when the start passed too long ago). `work` gets the id, the cancel
/// flag, and whether the run is cancelled: asked to, or its client vanished.
fn spawn_at(
    out: &Out,
    id: &str,
    what: &str,
    start_at_unix_ns: u64,
    work: impl FnOnce(&Out, String, &AtomicBool, &dyn Fn() -> bool) + Send + 'static,
) -> Result<Running, AgentError> {
    let cancel = Arc::new(AtomicBool::new(false));
    let (out, id, flag) = (out.clone(), id.to_string(), cancel.clone());
    let thread = std::thread::Builder::new()
        .name(format!("rigor-agent-{what}-{id}"))
        .spawn(move || {
            let gone = out.gone.clone();
            let cancelled = || flag.load(Ordering::Relaxed) || gone.load(Ordering::Relaxed);
            if let Err(e) = wait_until(start_at_unix_ns, &cancelled, &out, &id) {
                out.error(Some(&id), e.to_string());
                return;
            }
            work(&out, id, &flag, &cancelled);
        })
        .map_err(|source| AgentError::Thread {
            what: what.to_string(),
            source,
        })?;
    Ok(Running { cancel, thread })
}

/// Sleeps until `start_at_unix_ns` on this host's clock; fails when cancelled first or when the
/// start time passed too long ago.
fn wait_until(
    start_at_unix_ns: u64,
    cancelled: &dyn Fn() -> bool,
    out: &Out,
    id: &str,
) -> Result<(), AgentError> {
    let now = unix_ns(SystemTime::now());
    if now > start_at_unix_ns + START_LATE_LIMIT.as_nanos() as u64 {
        return Err(AgentError::StartPassed {
            late_secs: (now - start_at_unix_ns) as f64 / 1e9,
        });
    }
    let mut last_progress = Instant::now();
    loop {
        if cancelled() {
            return Err(AgentError::CancelledBeforeStart);
        }
        let now = unix_ns(SystemTime::now());
        if now >= start_at_unix_ns {
            return Ok(());
        }
        if last_progress.elapsed() >= Duration::from_secs(1) {
            last_progress = Instant::now();
            out.send(&FromAgent::Progress {
                id: id.to_string(),
                phase: "waiting".into(),
                requests: 0,
                errors: 0,
            });
        }
        let left = Duration::from_nanos(start_at_unix_ns - now);
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

/// Sends the live counters about once a second until `done`; cancels the load when the
/// client has gone.
fn progress(out: &Out, id: &str, live: &Live, done: &AtomicBool, cancel: &AtomicBool) {
    let mut next = Instant::now() + Duration::from_secs(1);
    while !done.load(Ordering::Relaxed) {
        if out.gone.load(Ordering::Relaxed) {
            cancel.store(true, Ordering::Relaxed);
        }
        if Instant::now() >= next {
            next += Duration::from_secs(1);
            let phase = match live.phase() {
                Phase::Starting => "starting",
                Phase::Warmup => "warmup",
                Phase::Measuring => "measuring",
                Phase::Done => "done",
            };
            out.send(&FromAgent::Progress {
                id: id.to_string(),
                phase: phase.into(),
                requests: live.completed.load(Ordering::Relaxed),
                errors: live.errors.load(Ordering::Relaxed),
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The host's name, CPU count and kernel release, as the agent reports them in `hello`.
fn host_info() -> HostInfo {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: read("/proc/sys/kernel/osrelease"),
        network: super::protocol::network_identity(),
    }
}
