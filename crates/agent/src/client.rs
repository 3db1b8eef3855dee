//! The client side of the agent protocol: installs rigor on a load host when needed, starts
//! `rigor agent --stdio` there over the host's transport, measures the clock offset, runs
//! loads at a common start time and reads their reports back with their histograms. Every
//! error names the host.

use super::error::AgentError;
use super::install::{self, Install, LocalBinary};
use super::protocol::{
    line, unix_ns, AppWire, BuiltWire, FromAgent, HostInfo, SpecWire, ToAgent, ToolJobWire,
    ToolRunWire, PROTOCOL, RIGOR_VERSION,
};
use super::transport::{describe, stderr_tail, HostSpec, SSH_FAILED};
use base64::Engine as _;
use rigor_load::{LoadReport, LoadSpec};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// How long the handshake may take (ssh connecting included).
const HELLO_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one clock round trip may take.
const CLOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// Clock round trips per measurement; the fastest one is kept.
const CLOCK_ROUNDS: usize = 7;

/// How long the transport gets to exit after its stdin closed before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// Lines of the transport's stderr kept for error messages.
const STDERR_LINES: usize = 20;

/// The agent's clock against this host's, from the fastest of a few round trips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockOffset {
    /// The agent's wall clock minus this host's, ns (positive: the agent is ahead).
    pub offset_ns: i64,
    /// The round trip the offset was read from; the offset is within half of it.
    pub rtt: Duration,
}

/// The latest progress of a load on the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub phase: String,
    pub requests: u64,
    pub errors: u64,
}

/// What the stdout reader hands over.
enum Incoming {
    Msg(Box<FromAgent>),
    /// A line that is not a protocol message, and why.
    Garbled(String, String),
    /// The agent's output ended: it exited or the transport died.
    Closed,
}

/// A connected agent on one load host. Dropping it says `bye`, closes the agent's stdin,
/// and kills and reaps the transport if it does not exit by itself.
pub struct Agent {
    host: HostSpec,
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: Receiver<Incoming>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    info: HostInfo,
    install: Install,
    offset: Option<ClockOffset>,
    progress: HashMap<String, Progress>,
    capabilities: Vec<String>,
    /// Applications that exited on their own, with how.
    exits: HashMap<String, String>,
    /// Whether the user interrupted the run: the waits for sources, a build or readiness end.
    interrupted: fn() -> bool,
    /// Whether the user asked to stop at once: the wait for an application's stop ends too.
    hurried: fn() -> bool,
}

/// How often a long wait for the agent looks whether the user interrupted the run.
const ABORT_POLL: Duration = Duration::from_millis(100);

/// Sources go in pieces of this size (before base64), one message each.
const SOURCES_CHUNK: usize = 1 << 20;

/// How long unpacking the sources and a build's bookkeeping may take beyond the build itself.
const SLACK: Duration = Duration::from_secs(120);

/// What an application's start on its host recorded.
pub struct AppStarted {
    pub pid: i32,
    pub ready: Duration,
    /// What the start recorded, as an iteration of the result file.
    pub iteration: serde_json::Value,
}

impl Agent {
    /// Connects to `host` with this running rigor binary as the agent.
    pub fn connect(host: &HostSpec) -> Result<Agent, AgentError> {
        let bin = LocalBinary::current().map_err(|e| AgentError::Install {
            host: host.label(),
            why: e.to_string(),
        })?;
        Agent::connect_with(host, &bin)
    }

    /// Connects to `host`, installing `bin` there first when its cache lacks it.
    pub fn connect_with(host: &HostSpec, bin: &LocalBinary) -> Result<Agent, AgentError> {
        let install = install::ensure(host, bin)?;
        let cmd = format!("exec {} agent --stdio", bin.remote_path());
        // A group of its own: a Ctrl-C at the terminal reaches rigor, which tells the agent to
        // stop (its input closes), and not the transport, which would die at once and leave
        // the agent's work half done (a local agent, `env` or `nsenter`, would die with it).
        let mut child = host
            .command(&cmd)?
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| host.spawn_error(&e))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout piped");
        let stderr_pipe = child.stderr.take().expect("stderr piped");
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { break };
                let msg = match serde_json::from_str::<FromAgent>(&l) {
                    Ok(m) => Incoming::Msg(Box::new(m)),
                    Err(e) => Incoming::Garbled(l, e.to_string()),
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
            let _ = tx.send(Incoming::Closed);
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let kept = stderr.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stderr_pipe);
            let mut buf = Vec::new();
            while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                let mut q = kept.lock().unwrap_or_else(|e| e.into_inner());
                q.push_back(String::from_utf8_lossy(&buf).trim_end().to_string());
                if q.len() > STDERR_LINES {
                    q.pop_front();
                }
                buf.clear();
            }
            let _ = r.read_to_end(&mut buf);
        });
        let mut agent = Agent {
            host: host.clone(),
            child,
            stdin,
            incoming,
            stderr,
            info: HostInfo {
                hostname: String::new(),
                cpus: 0,
                kernel: String::new(),
                network: String::new(),
            },
            install,
            offset: None,
            progress: HashMap::new(),
            capabilities: Vec::new(),
            exits: HashMap::new(),
            interrupted: || false,
            hurried: || false,
        };
        agent.hello()?;
        Ok(agent)
    }

    fn hello(&mut self) -> Result<(), AgentError> {
        self.send(&ToAgent::Hello {
            protocol: PROTOCOL,
            rigor_version: RIGOR_VERSION.into(),
        })?;
        let deadline = Instant::now() + HELLO_TIMEOUT;
        loop {
            match self.next(deadline, "the agent's hello")? {
                FromAgent::Hello {
                    protocol,
                    rigor_version,
                    capabilities,
                    host,
                } => {
                    if protocol != PROTOCOL || rigor_version != RIGOR_VERSION {
                        return Err(AgentError::Mismatch {
                            host: self.host.label(),
                            version: rigor_version,
                            protocol,
                        });
                    }
                    if !capabilities.iter().any(|c| c == "load") {
                        return Err(AgentError::Incapable {
                            host: self.host.label(),
                            what: "load",
                            offers: capabilities,
                            why: "",
                        });
                    }
                    self.info = host;
                    self.capabilities = capabilities;
                    return Ok(());
                }
                FromAgent::Error { message, .. } => {
                    return Err(self.refused("the agent refused the handshake: ", message))
                }
                _ => {}
            }
        }
    }

    /// Lets the user's interrupt end the long waits: `interrupted` those for the sources, a
    /// build and readiness, `hurried` the one for a stop (the stop is the cleanup).
    pub fn interrupt_with(&mut self, interrupted: fn() -> bool, hurried: fn() -> bool) {
        self.interrupted = interrupted;
        self.hurried = hurried;
    }

    /// The host's name as given.
    pub fn name(&self) -> &str {
        &self.host.name
    }

    /// The machine the agent runs on, as it said in its hello.
    pub fn host_info(&self) -> &HostInfo {
        &self.info
    }

    /// Whether connecting copied the binary or found it installed.
    pub fn install(&self) -> Install {
        self.install
    }

    /// Whether the transport still runs and its stdin is open: an agent worth keeping.
    pub fn alive(&mut self) -> bool {
        self.stdin.is_some() && matches!(self.child.try_wait(), Ok(None))
    }

    /// The process id of the local transport process (ssh, kubectl, …).
    pub fn transport_pid(&self) -> u32 {
        self.child.id()
    }

    /// The latest progress the agent sent for load `id`.
    pub fn progress(&self, id: &str) -> Option<&Progress> {
        self.progress.get(id)
    }

    /// Measures the agent's clock against this host's: a few round trips, keeping the one with
    /// the smallest round-trip time (its midpoint is the best estimate).
    pub fn clock_offset(&mut self) -> Result<ClockOffset, AgentError> {
        let mut best: Option<ClockOffset> = None;
        for _ in 0..CLOCK_ROUNDS {
            let sent = SystemTime::now();
            let t0 = Instant::now();
            self.send(&ToAgent::Clock {})?;
            let deadline = t0 + CLOCK_TIMEOUT;
            let remote = loop {
                match self.next(deadline, "the agent's clock")? {
                    FromAgent::Clock { unix_ns } => break unix_ns,
                    FromAgent::Error { id: None, message } => {
                        return Err(self.refused("clock: ", message))
                    }
                    other => self.note(other),
                }
            };
            let rtt = t0.elapsed();
            let mid = unix_ns(sent) as i128 + rtt.as_nanos() as i128 / 2;
            let offset_ns = (remote as i128 - mid) as i64;
            match best {
                Some(b) if b.rtt <= rtt => {}
                _ => best = Some(ClockOffset { offset_ns, rtt }),
            }
        }
        self.offset = best;
        Ok(best.expect("at least one round"))
    }

    /// Starts load `id` at `start_at_local` on this host's clock (the agent's start time is
    /// shifted by the clock offset, measured first if it never was).
    pub fn start_load(
        &mut self,
        id: &str,
        spec: &LoadSpec,
        start_at_local: SystemTime,
    ) -> Result<(), AgentError> {
        let offset = match self.offset {
            Some(o) => o,
            None => self.clock_offset()?,
        };
        let start = (unix_ns(start_at_local) as i128 + offset.offset_ns as i128).max(0) as u64;
        self.progress.remove(id);
        self.send(&ToAgent::Load {
            id: id.into(),
            spec: SpecWire::from(spec),
            start_at_unix_ns: start,
        })
    }

    /// Waits up to `timeout` for load `id`'s report, with its latency histograms: one host
    /// at a time (a run follows several with [`Agent::poll_load`]).
    #[allow(dead_code)] // rigor itself follows several hosts with poll_load
    pub fn wait_load(&mut self, id: &str, timeout: Duration) -> Result<LoadReport, AgentError> {
        self.poll_load(id, timeout)?
            .ok_or_else(|| AgentError::TimedOut {
                host: self.host.label(),
                waiting_for: format!("load {id}"),
            })
    }

    /// Waits up to `wait` for load `id`'s report: `None` when it has not come yet (progress
    /// that came meanwhile is kept), so a caller can follow several hosts at once.
    pub fn poll_load(
        &mut self,
        id: &str,
        wait: Duration,
    ) -> Result<Option<LoadReport>, AgentError> {
        let deadline = Instant::now() + wait;
        let what = format!("load {id}");
        loop {
            let Some(msg) = self.next_within(deadline, &what)? else {
                return Ok(None);
            };
            match msg {
                FromAgent::LoadDone { id: done, report } if done == id => {
                    return report
                        .decode()
                        .map(Some)
                        .map_err(|error| AgentError::BadReport {
                            host: self.host.label(),
                            id: id.to_string(),
                            error: error.to_string(),
                        })
                }
                FromAgent::Error {
                    id: Some(failed),
                    message,
                } if failed == id => return Err(self.refused(&format!("load {id}: "), message)),
                FromAgent::Error { id: None, message } => {
                    return Err(self.refused("the agent: ", message))
                }
                other => self.note(other),
            }
        }
    }

    /// Starts tool run `id` (a load tool, run by the host's agent) at `start_at_local` on this
    /// host's clock, shifted by the clock offset like a load's start. An agent without the
    /// `tool` capability (an older rigor) is refused, naming the host.
    pub fn start_tool(
        &mut self,
        id: &str,
        job: &ToolJobWire,
        start_at_local: SystemTime,
    ) -> Result<(), AgentError> {
        if !self.capabilities.iter().any(|c| c == "tool") {
            return Err(AgentError::Incapable {
                host: self.host.label(),
                what: "load tools",
                offers: self.capabilities.clone(),
                why: ": its rigor is older than this one",
            });
        }
        let offset = match self.offset {
            Some(o) => o,
            None => self.clock_offset()?,
        };
        let start = (unix_ns(start_at_local) as i128 + offset.offset_ns as i128).max(0) as u64;
        self.send(&ToAgent::RunTool {
            id: id.into(),
            job: job.clone(),
            start_at_unix_ns: start,
        })
    }

    /// Waits up to `wait` for tool run `id`'s outcome: `None` when it has not come yet, so a
    /// caller can follow several hosts at once. The tool's failure to start there (not
    /// installed) is an error naming the host.
    pub fn poll_tool(
        &mut self,
        id: &str,
        wait: Duration,
    ) -> Result<Option<ToolRunWire>, AgentError> {
        let deadline = Instant::now() + wait;
        let what = format!("tool run {id}");
        loop {
            let Some(msg) = self.next_within(deadline, &what)? else {
                return Ok(None);
            };
            match msg {
                FromAgent::ToolDone { id: done, run } if done == id => return Ok(Some(*run)),
                FromAgent::Error {
                    id: Some(failed),
                    message,
                } if failed == id => return Err(self.refused("", message)),
                FromAgent::Error { id: None, message } => {
                    return Err(self.refused("the agent: ", message))
                }
                other => self.note(other),
            }
        }
    }

    /// Sends one request to `url` from the host: (status, latency, bytes sent, whether `find`
    /// was in the body); `insecure` accepts any certificate (https:// only); `http2` speaks
    /// HTTP/2.
    #[allow(clippy::too_many_arguments)]
    pub fn probe(
        &mut self,
        url: &str,
        method: &str,
        headers: &[(String, String)],
        body: Option<&[u8]>,
        timeout: Duration,
        find: Option<&[u8]>,
        insecure: bool,
        http2: bool,
    ) -> Result<(u16, Duration, u64, Option<bool>), AgentError> {
        let enc = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let id = "probe".to_string();
        self.send(&ToAgent::Probe {
            id: id.clone(),
            url: url.into(),
            method: method.into(),
            headers: headers.to_vec(),
            body_base64: body.map(enc),
            timeout_ns: u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX),
            find_base64: find.map(enc),
            insecure,
            http2,
        })?;
        let deadline = Instant::now() + timeout + CLOCK_TIMEOUT;
        loop {
            match self.next(deadline, "the first request")? {
                FromAgent::Probed {
                    id: i,
                    status,
                    latency_ns,
                    bytes_sent,
                    found,
                } if i == id => {
                    return Ok((status, Duration::from_nanos(latency_ns), bytes_sent, found))
                }
                FromAgent::Error { id: i, message } if i.as_deref().is_none_or(|i| i == id) => {
                    return Err(self.refused("", message))
                }
                other => self.note(other),
            }
        }
    }

    /// How the host reaches `url`: the address it resolves to and whether that is itself.
    pub fn network_path(&mut self, url: &str) -> Result<super::protocol::HostPath, AgentError> {
        self.send(&ToAgent::Path { url: url.into() })?;
        let deadline = Instant::now() + CLOCK_TIMEOUT;
        loop {
            match self.next(deadline, "the network path")? {
                FromAgent::Path { url: u, path } if u == url => return Ok(path),
                FromAgent::Error { id: None, message } => {
                    return Err(self.refused("path: ", message))
                }
                other => self.note(other),
            }
        }
    }

    /// Asks the agent to stop load `id`; its (cancelled) report still comes to `wait_load`.
    pub fn cancel(&mut self, id: &str) -> Result<(), AgentError> {
        self.send(&ToAgent::Cancel { id: id.into() })
    }

    /// Fails unless the agent can run applications.
    fn needs_app(&self) -> Result<(), AgentError> {
        if self.capabilities.iter().any(|c| c == "app") {
            return Ok(());
        }
        Err(AgentError::Incapable {
            host: self.host.label(),
            what: "applications",
            offers: self.capabilities.clone(),
            why: "",
        })
    }

    /// Sends the tar stream `tar` as the sources of folder `key` and waits until the host has
    /// unpacked them: (files, bytes) as the host counted them.
    pub fn send_sources(&mut self, key: &str, tar: &[u8]) -> Result<(u64, u64), AgentError> {
        self.needs_app()?;
        let chunks: Vec<&[u8]> = if tar.is_empty() {
            vec![&[][..]]
        } else {
            tar.chunks(SOURCES_CHUNK).collect()
        };
        let n = chunks.len();
        for (i, c) in chunks.into_iter().enumerate() {
            if (self.interrupted)() {
                return Err(self.interruption("sending the sources"));
            }
            self.send(&ToAgent::Sources {
                key: key.into(),
                data_base64: base64::engine::general_purpose::STANDARD.encode(c),
                last: i + 1 == n,
            })?;
        }
        let deadline = Instant::now() + SLACK;
        loop {
            match self.next_unless(deadline, "the sources to unpack", self.interrupted)? {
                FromAgent::SourcesReady {
                    key: k,
                    files,
                    bytes,
                } if k == key => return Ok((files, bytes)),
                FromAgent::Error { id, message } if id.as_deref().is_none_or(|i| i == key) => {
                    return Err(self.refused("sources: ", message))
                }
                other => self.note(other),
            }
        }
    }

    /// Builds `app` in folder `key` on the host as build `build`.
    pub fn build(
        &mut self,
        key: &str,
        build: &str,
        app: &AppWire,
    ) -> Result<BuiltWire, AgentError> {
        self.needs_app()?;
        let timeout = Duration::from_nanos(app.build_timeout_ns) + SLACK;
        self.send(&ToAgent::Build {
            key: key.into(),
            build: build.into(),
            app: app.clone(),
        })?;
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_unless(deadline, "the build", self.interrupted)? {
                FromAgent::Built { build: b, built } if b == build => return Ok(built),
                FromAgent::Error { id, message } if id.as_deref().is_none_or(|i| i == build) => {
                    return Err(self.refused("", message))
                }
                other => self.note(other),
            }
        }
    }

    /// Starts build `build` of `app` (sources in `key`) as application `id` and waits until it
    /// is ready.
    #[allow(clippy::too_many_arguments)]
    pub fn start_app(
        &mut self,
        id: &str,
        key: &str,
        build: &str,
        app: &AppWire,
        sequence: usize,
        sample_interval: Duration,
        drop_caches: bool,
        load_url: &str,
    ) -> Result<AppStarted, AgentError> {
        self.needs_app()?;
        self.exits.remove(id);
        self.send(&ToAgent::StartApp {
            id: id.into(),
            key: key.into(),
            build: build.into(),
            app: app.clone(),
            sequence,
            sample_interval_ns: u64::try_from(sample_interval.as_nanos()).unwrap_or(u64::MAX),
            drop_caches,
            load_url: load_url.into(),
        })?;
        let deadline = Instant::now() + Duration::from_nanos(app.ready_timeout_ns) + SLACK;
        loop {
            match self.next_unless(deadline, "the application to be ready", self.interrupted)? {
                FromAgent::AppStarted {
                    id: i,
                    pid,
                    ready_ms,
                    iteration,
                } if i == id => {
                    return Ok(AppStarted {
                        pid,
                        ready: Duration::from_secs_f64(ready_ms.max(0.0) / 1e3),
                        iteration,
                    })
                }
                FromAgent::Error { id: i, message } if i.as_deref().is_none_or(|i| i == id) => {
                    return Err(self.refused("", message))
                }
                other => self.note(other),
            }
        }
    }

    /// Marks a window edge of application `id` (`window_start`, `window_end`).
    pub fn app_mark(&mut self, id: &str, mark: &str) -> Result<(), AgentError> {
        self.send(&ToAgent::AppMark {
            id: id.into(),
            mark: mark.into(),
        })
    }

    /// How application `id` exited, if the agent said it did; reads what has arrived without
    /// waiting.
    pub fn app_exited(&mut self, id: &str) -> Result<Option<String>, AgentError> {
        while let Some(msg) = self.next_within(Instant::now(), "news of the application")? {
            if let FromAgent::Error { id: None, message } = msg {
                return Err(self.refused("the agent: ", message));
            }
            self.note(msg);
        }
        Ok(self.exits.get(id).cloned())
    }

    /// Stops application `id` and waits for what was measured on its host, and its log.
    pub fn stop_app(
        &mut self,
        id: &str,
        stop_timeout: Duration,
    ) -> Result<(serde_json::Value, String), AgentError> {
        self.send(&ToAgent::StopApp { id: id.into() })?;
        let deadline = Instant::now() + stop_timeout + SLACK;
        loop {
            match self.next_unless(deadline, "the application to stop", self.hurried)? {
                FromAgent::AppStopped {
                    id: i,
                    iteration,
                    log,
                } if i == id => return Ok((iteration, log)),
                FromAgent::Error { id: i, message } if i.as_deref().is_none_or(|i| i == id) => {
                    return Err(self.refused("", message))
                }
                other => self.note(other),
            }
        }
    }

    /// Keeps what a message says while waiting for another.
    fn note(&mut self, msg: FromAgent) {
        if let FromAgent::AppExited { id, status } = &msg {
            self.exits.insert(id.clone(), status.clone());
            return;
        }
        if let FromAgent::Progress {
            id,
            phase,
            requests,
            errors,
        } = msg
        {
            self.progress.insert(
                id,
                Progress {
                    phase,
                    requests,
                    errors,
                },
            );
        }
    }

    fn send(&mut self, msg: &ToAgent) -> Result<(), AgentError> {
        let mut text = line(msg);
        text.push('\n');
        let written = match self.stdin.as_mut() {
            Some(s) => s.write_all(text.as_bytes()).and_then(|()| s.flush()),
            None => Err(std::io::Error::other("stdin closed")),
        };
        written.map_err(|e| self.died(&format!("sending to the agent ({e})")))
    }

    /// The next message, or why none came by `deadline`.
    fn next(&mut self, deadline: Instant, waiting_for: &str) -> Result<FromAgent, AgentError> {
        self.next_within(deadline, waiting_for)?
            .ok_or_else(|| self.timed_out(waiting_for))
    }

    /// The next message, or why none came by `deadline`; gives up at once when `abort` says
    /// so (the user interrupted the run): the agent is then in the middle of the work and is
    /// to be disconnected, which stops that work on the host.
    fn next_unless(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
        abort: fn() -> bool,
    ) -> Result<FromAgent, AgentError> {
        loop {
            if abort() {
                return Err(self.interruption(&format!("waiting for {waiting_for}")));
            }
            let slice = deadline.min(Instant::now() + ABORT_POLL);
            if let Some(m) = self.next_within(slice, waiting_for)? {
                return Ok(m);
            }
            if Instant::now() >= deadline {
                return Err(self.timed_out(waiting_for));
            }
        }
    }

    /// The error for a wait the user interrupted.
    fn interruption(&self, doing: &str) -> AgentError {
        AgentError::Interrupted {
            host: self.host.label(),
            doing: doing.to_string(),
        }
    }

    /// The error for a wait that ended with no answer.
    fn timed_out(&self, waiting_for: &str) -> AgentError {
        AgentError::TimedOut {
            host: self.host.label(),
            waiting_for: waiting_for.to_string(),
        }
    }

    /// The error for the agent's answer `message` (`about` says about what).
    fn refused(&self, about: &str, message: String) -> AgentError {
        AgentError::Refused {
            host: self.host.label(),
            about: about.to_string(),
            message,
        }
    }

    /// The next message; `None` when none came by `deadline`.
    fn next_within(
        &mut self,
        deadline: Instant,
        waiting_for: &str,
    ) -> Result<Option<FromAgent>, AgentError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(Incoming::Msg(m)) => return Ok(Some(*m)),
                // A JSON object is a message this client cannot read: say so now rather than
                // time out. Other lines (a login banner a remote shell printed) are kept as logs.
                Ok(Incoming::Garbled(l, e)) if is_json_object(&l) => {
                    let start: String = l.chars().take(120).collect();
                    return Err(AgentError::Unreadable {
                        host: self.host.label(),
                        waiting_for: waiting_for.to_string(),
                        error: e,
                        start,
                    });
                }
                Ok(Incoming::Garbled(l, _)) => self.stderr_push(format!("(stdout) {l}")),
                Ok(Incoming::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.died(&format!("while waiting for {waiting_for}")))
                }
                Err(RecvTimeoutError::Timeout) => return Ok(None),
            }
        }
    }

    fn stderr_push(&self, l: String) {
        let mut q = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        q.push_back(l);
        if q.len() > STDERR_LINES {
            q.pop_front();
        }
    }

    /// The error for a transport whose output ended: its exit status and the tail of its
    /// stderr, ssh's own failure (exit 255) said as such.
    fn died(&mut self, when: &str) -> AgentError {
        let deadline = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break None,
            }
        };
        // The stderr reader may still hold the last lines for a moment.
        std::thread::sleep(Duration::from_millis(50));
        let stderr = {
            let q = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
            stderr_tail(&q.iter().cloned().collect::<Vec<_>>().join("\n"))
        };
        let said = if stderr.is_empty() {
            String::new()
        } else {
            format!(": {stderr}")
        };
        let why = match status {
            Some(s) if self.host.is_ssh() && s.code() == Some(SSH_FAILED) => {
                format!("ssh could not reach the host or was refused (exit 255) {when}{said}")
            }
            Some(s) => format!("the transport died {when} ({}){said}", describe(s)),
            None => format!("the agent's output ended {when}{said}"),
        };
        AgentError::Transport {
            host: self.host.label(),
            why,
        }
    }
}

/// Whether a line is a JSON object (a message, if not one this client reads); a banner that
/// merely starts with `{` is not.
fn is_json_object(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line).is_ok_and(|v| v.is_object())
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(format!("{}\n", line(&ToAgent::Bye {})).as_bytes());
        }
        let deadline = Instant::now() + EXIT_GRACE;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
