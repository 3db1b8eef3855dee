//! The agent protocol: one JSON object per line, `"type"` naming the message, version
//! [`PROTOCOL`]. The client writes [`ToAgent`] to the agent's stdin and reads [`FromAgent`] from
//! its stdout; stderr carries only logs.

pub use super::app_wire::AppWire;
use super::error::AgentError;
pub use super::tool_wire::{ToolJobWire, ToolRunWire};
use base64::Engine as _;
use rigor_load::{LoadSpec, ReportWire};
use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The protocol version both sides must speak; any change to a message's meaning raises it.
pub const PROTOCOL: u32 = 4;

/// This build's version, which the agent's must equal.
pub const RIGOR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What the agent can do; a client asks for nothing outside it.
pub const CAPABILITIES: &[&str] = &["load", "app", "tool"];

/// A message from the client to the agent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToAgent {
    /// The first message: the versions the client speaks.
    Hello {
        protocol: u32,
        rigor_version: String,
    },
    /// Asks for the agent's wall clock, to measure the offset by round trips.
    Clock {},
    /// Runs a load, starting at `start_at_unix_ns` on the agent's clock.
    Load {
        id: String,
        spec: SpecWire,
        start_at_unix_ns: u64,
    },
    /// Runs a load tool (wrk, h2load, …) as run `id`, starting at `start_at_unix_ns` on the
    /// agent's clock: the host's share of the load, driven by the tool installed there.
    RunTool {
        id: String,
        job: ToolJobWire,
        start_at_unix_ns: u64,
    },
    /// Stops load or tool run `id` early; its report (marked cancelled) still comes.
    Cancel { id: String },
    /// Asks how this host reaches `url`: the address it resolves to, and whether that is the
    /// host itself (loopback, an interface of its own) or another host.
    Path { url: String },
    /// Sends one request from this host on a new connection (the row's first request, when
    /// only the load hosts reach the URL); `find_base64`: text searched for in the body.
    Probe {
        id: String,
        url: String,
        method: String,
        headers: Vec<(String, String)>,
        body_base64: Option<String>,
        timeout_ns: u64,
        find_base64: Option<String>,
        /// https:// only: accept any certificate.
        #[serde(default)]
        insecure: bool,
        /// Over HTTP/2, as the load speaks.
        #[serde(default)]
        http2: bool,
    },
    /// A piece of the application's sources, a tar stream, for the folder `key` (letters,
    /// digits and `-`); the `last` one unpacks the whole stream into a fresh folder.
    Sources {
        key: String,
        data_base64: String,
        last: bool,
    },
    /// Builds the application in folder `key`; `build` names this build (its artifact copy).
    Build {
        key: String,
        build: String,
        app: AppWire,
    },
    /// Starts a fresh process of build `build` as application `id`, sampled from its start
    /// and watched until ready; `load_url` is what the load will hit (its owner is checked).
    StartApp {
        id: String,
        key: String,
        build: String,
        app: AppWire,
        sequence: usize,
        sample_interval_ns: u64,
        drop_caches: bool,
        load_url: String,
    },
    /// The measured window of application `id` starts (`window_start`) or ends (`window_end`).
    AppMark { id: String, mark: String },
    /// Stops application `id`; its figures come back in `app_stopped`.
    StopApp { id: String },
    /// The client is done: the agent stops any load and application and exits.
    Bye {},
}

/// A message from the agent to the client.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAgent {
    Hello {
        protocol: u32,
        rigor_version: String,
        capabilities: Vec<String>,
        host: HostInfo,
    },
    Clock {
        unix_ns: u64,
    },
    /// About once a second while a load runs.
    Progress {
        id: String,
        /// `waiting` (for the start time), `starting`, `warmup`, `measuring` or `done`.
        phase: String,
        /// Responses completed in the measured window so far.
        requests: u64,
        /// Errors in the measured window so far.
        errors: u64,
    },
    LoadDone {
        id: String,
        report: Box<ReportWire>,
    },
    /// Tool run `id` ended: its command line, raw output, exit status and CPU, for the client
    /// to read.
    ToolDone {
        id: String,
        run: Box<ToolRunWire>,
    },
    /// How this host reaches `url` (the answer to `path`).
    Path {
        url: String,
        path: HostPath,
    },
    /// The answer to `probe`.
    Probed {
        id: String,
        status: u16,
        latency_ns: u64,
        bytes_sent: u64,
        found: Option<bool>,
    },
    /// The sources of folder `key` are unpacked.
    SourcesReady {
        key: String,
        files: u64,
        bytes: u64,
    },
    /// Build `build` is done.
    Built {
        build: String,
        built: BuiltWire,
    },
    /// Application `id` is ready; `iteration` holds what its start recorded (PID, warnings,
    /// priority, network path), in the form of an iteration of the result file.
    AppStarted {
        id: String,
        pid: i32,
        ready_ms: f64,
        iteration: serde_json::Value,
    },
    /// Application `id` exited on its own (sent once, unasked).
    AppExited {
        id: String,
        status: String,
    },
    /// Application `id` is stopped: its figures, series, warnings, the host's machine
    /// readings over the window and any error, with its log (the last MiB).
    AppStopped {
        id: String,
        iteration: serde_json::Value,
        log: String,
    },
    /// A failure: of load `id`, or (without an id) of the message just received.
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        message: String,
    },
}

/// How a host reaches a URL.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostPath {
    /// The address the URL resolves to there, with its port; empty when it does not resolve.
    pub target: String,
    /// `loopback`, `local interface` (an address of the host's own) or `other host`.
    pub path: String,
    /// Who listens on that address there (`PID (name)`), when the host itself serves it.
    pub owners: Vec<String>,
    /// Why the URL does not resolve there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl HostPath {
    /// How this host reaches `url`.
    pub fn of(url: &str) -> HostPath {
        match rigor_load::resolve_url(url) {
            Ok(addr) => HostPath {
                target: addr.to_string(),
                path: match rigor_probe::net_path(addr.ip()) {
                    rigor_probe::NetPath::Loopback => "loopback",
                    rigor_probe::NetPath::LocalInterface => "local interface",
                    rigor_probe::NetPath::OtherHost => "other host",
                }
                .to_string(),
                owners: rigor_probe::listener_owners(addr)
                    .iter()
                    .map(|o| format!("{} ({})", o.pid, o.comm))
                    .collect(),
                error: None,
            },
            Err(e) => HostPath {
                target: String::new(),
                path: String::new(),
                owners: Vec::new(),
                error: Some(e.to_string()),
            },
        }
    }

    /// Whether the URL leads to the host itself.
    pub fn is_own(&self) -> bool {
        self.path == "loopback" || self.path == "local interface"
    }
}

/// A build on the application's host, as the client records it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BuiltWire {
    pub build_time_ms: Option<f64>,
    pub size_kib: Option<f64>,
    pub note: Option<String>,
    pub hash: Option<String>,
    pub rewritten: bool,
    /// The build's output (the last MiB).
    pub log: String,
    /// A container application's image on the host: its engine, the engine's version and the
    /// image as written, for the run's environment.
    #[serde(default)]
    pub container: Option<serde_json::Value>,
}

/// The machine an agent runs on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub cpus: usize,
    pub kernel: String,
    /// The boot and network namespace the agent runs in ([`network_identity`]): equal to
    /// rigor's own when the "host" is this machine's network (an `env` transport), where the
    /// loopback is the application's own. Empty from an agent that did not say.
    #[serde(default)]
    pub network: String,
}

/// This process's boot and network namespace, `BOOT_ID/net:[INODE]`: two processes with the
/// same one share every address, loopback included. Empty when either cannot be read.
pub fn network_identity() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let net = std::fs::read_link("/proc/self/ns/net")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    match (boot.trim(), net.as_str()) {
        ("", _) | (_, "") => String::new(),
        (boot, net) => format!("{boot}/{net}"),
    }
}

/// [`LoadSpec`] as it travels: durations in nanoseconds, the body in base64.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SpecWire {
    pub url: String,
    pub connections: usize,
    pub threads: usize,
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub pipeline: usize,
    pub rate: Option<f64>,
    pub timeout_ns: u64,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body_base64: Option<String>,
    /// CPUs of the agent's host to pin its worker threads to.
    pub cpus: Option<Vec<usize>>,
    /// Source addresses on the agent's host, in turn.
    #[serde(default)]
    pub source_addrs: Vec<std::net::IpAddr>,
    /// https:// only: accept any certificate. Absent from older rigors' specs: false.
    #[serde(default)]
    pub insecure: bool,
    /// The engine's I/O path on the agent's host. Absent from older rigors' specs: auto.
    #[serde(default)]
    pub io: rigor_load::IoMode,
    /// Speak HTTP/2. Absent from older rigors' specs: false.
    #[serde(default)]
    pub http2: bool,
    /// HTTP/2's concurrent streams per connection. Absent from older rigors' specs: 1.
    #[serde(default = "one")]
    pub streams: usize,
    /// A request mix instead of the one request. Absent from older rigors' specs: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<rigor_load::RequestMix>,
    /// Stages of the open model. Absent from older rigors' specs: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<rigor_load::Stage>,
    /// The stage measured alone. Absent from older rigors' specs: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_stage: Option<usize>,
}

fn one() -> usize {
    1
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl From<&LoadSpec> for SpecWire {
    fn from(s: &LoadSpec) -> Self {
        SpecWire {
            url: s.url.clone(),
            connections: s.connections,
            threads: s.threads,
            duration_ns: nanos(s.duration),
            warmup_ns: nanos(s.warmup),
            pipeline: s.pipeline,
            rate: s.rate,
            timeout_ns: nanos(s.timeout),
            method: s.method.clone(),
            headers: s.headers.clone(),
            body_base64: s
                .body
                .as_ref()
                .map(|b| base64::engine::general_purpose::STANDARD.encode(b)),
            cpus: s.cpus.clone(),
            source_addrs: s.source_addrs.clone(),
            insecure: s.insecure,
            io: s.io,
            http2: s.http2,
            streams: s.streams,
            mix: s.mix.clone(),
            stages: s.stages.clone(),
            measure_stage: s.measure_stage,
        }
    }
}

impl SpecWire {
    /// The spec the engine runs; fails only on a body that is not base64.
    pub fn to_spec(&self) -> Result<LoadSpec, AgentError> {
        let body = match &self.body_base64 {
            Some(b) => Some(base64::engine::general_purpose::STANDARD.decode(b)?),
            None => None,
        };
        Ok(LoadSpec {
            url: self.url.clone(),
            connections: self.connections,
            threads: self.threads,
            duration: Duration::from_nanos(self.duration_ns),
            warmup: Duration::from_nanos(self.warmup_ns),
            pipeline: self.pipeline,
            rate: self.rate,
            timeout: Duration::from_nanos(self.timeout_ns),
            method: self.method.clone(),
            headers: self.headers.clone(),
            body,
            cpus: self.cpus.clone(),
            source_addrs: self.source_addrs.clone(),
            insecure: self.insecure,
            io: self.io,
            http2: self.http2,
            streams: self.streams,
            mix: self.mix.clone(),
            stages: self.stages.clone(),
            measure_stage: self.measure_stage,
        })
    }
}

/// Nanoseconds since the Unix epoch on this host's wall clock.
pub fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map(nanos).unwrap_or_default()
}

/// One message as its line (without the newline).
pub fn line<T: Serialize>(msg: &T) -> String {
    serde_json::to_string(msg).expect("protocol messages serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real agent's `load_done` (2 connections, 1 s against the testbed): its status codes
    /// are map keys, which must survive the tagged message.
    #[test]
    fn a_recorded_load_done_reads_back_with_its_status_codes_and_histogram() {
        let text = include_str!("fixtures/load_done.jsonl");
        let FromAgent::LoadDone { id, report } =
            serde_json::from_str::<FromAgent>(text.trim()).unwrap()
        else {
            panic!("not a load_done")
        };
        assert_eq!(id, "x");
        let r = (*report).decode().unwrap();
        assert_eq!(r.requests, 24752);
        assert_eq!(r.status_counts.get(&200), Some(&24752));
        assert_eq!(r.latency.count, 24752);
    }

    #[test]
    fn messages_are_tagged_json_lines() {
        assert_eq!(line(&ToAgent::Clock {}), r#"{"type":"clock"}"#);
        assert_eq!(line(&ToAgent::Bye {}), r#"{"type":"bye"}"#);
        assert_eq!(
            line(&ToAgent::Hello {
                protocol: 1,
                rigor_version: "0.1.0".into()
            }),
            r#"{"type":"hello","protocol":1,"rigor_version":"0.1.0"}"#
        );
        let err: FromAgent =
            serde_json::from_str(r#"{"type":"error","message":"no","extra":1}"#).unwrap();
        assert!(matches!(err, FromAgent::Error { id: None, .. }));
        assert_eq!(
            line(&FromAgent::Error {
                id: None,
                message: "m".into()
            }),
            r#"{"type":"error","message":"m"}"#
        );
        assert!(serde_json::from_str::<ToAgent>(r#"{"type":"dance"}"#).is_err());
    }

    #[test]
    fn a_report_reads_back_from_inside_its_message() {
        let mut report = serde_json::json!({
            "url": "http://h/", "connections": 1, "threads": 1, "pipeline": 1,
            "warmup_secs": 0.0, "measured_secs": 1.0, "cancelled": false, "requests": 2,
            "bytes_read": 10, "rps": 2.0, "throughput_mib_s": 0.0,
            "latency": {"count": 0, "mean_ms": 0.0, "stdev_ms": 0.0, "min_ms": 0.0,
                "max_ms": 0.0, "p50_ms": 0.0, "p75_ms": 0.0, "p90_ms": 0.0, "p99_ms": 0.0,
                "p999_ms": 0.0, "p9999_ms": 0.0, "percentiles": []},
            "latency_uncorrected": null, "status_counts": {"200": 2}, "bad_responses": 0,
            "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "parse": 0,
                "closed": 0},
            "parse_failures": [], "in_flight_at_end": 0, "abandoned": 0, "drain_cut": false,
            "outside_window": {"requests": 0, "bytes": 0}, "timeline": [], "rate": null,
            "client_cpu_pct": 1.0, "client_cpu_secs": 0.01, "client_cores": 1, "warnings": []
        });
        let msg = serde_json::json!({
            "type": "load_done", "id": "a",
            "report": {"report": report.take(), "latency_hdr": "", "uncorrected_hdr": null}
        });
        let FromAgent::LoadDone { report, .. } = serde_json::from_value(msg).unwrap() else {
            panic!("not load_done")
        };
        assert_eq!(report.report.status_counts[&200], 2);
    }

    #[test]
    fn a_tool_run_and_its_outcome_travel_unchanged() {
        let job = ToolJobWire {
            tool: "wrk".into(),
            args: vec!["--latency".into()],
            spec: SpecWire::from(&LoadSpec::default()),
            length_ns: 2_000_000_000,
            own_warmup_ns: None,
        };
        let msg = ToAgent::RunTool {
            id: "t".into(),
            job,
            start_at_unix_ns: 7,
        };
        let text = line(&msg);
        assert!(text.starts_with(r#"{"type":"run_tool","id":"t","job":{"tool":"wrk""#));
        assert_eq!(serde_json::from_str::<ToAgent>(&text).unwrap(), msg);
        let run = ToolRunWire {
            command: vec!["wrk".into()],
            output: "Requests/sec: 1\n".into(),
            stderr: String::new(),
            exit: "exit status: 0".into(),
            success: true,
            wall_secs: 1.5,
            cpu_secs: Some(0.25),
            cores: 2,
            version: None,
        };
        let done = line(&FromAgent::ToolDone {
            id: "t".into(),
            run: Box::new(run.clone()),
        });
        let FromAgent::ToolDone { run: back, .. } = serde_json::from_str(&done).unwrap() else {
            panic!("not tool_done: {done}")
        };
        assert_eq!(*back, run);
    }

    #[test]
    fn a_spec_travels_unchanged() {
        let spec = LoadSpec {
            url: "http://10.0.0.1:8080/x".into(),
            connections: 33,
            threads: 3,
            duration: Duration::from_millis(1500),
            warmup: Duration::from_nanos(7),
            rate: Some(1234.5),
            headers: vec![("x-a".into(), "b".into())],
            body: Some(vec![0, 1, 2, 255]),
            cpus: Some(vec![1, 3]),
            source_addrs: vec!["127.0.0.2".parse().unwrap(), "::1".parse().unwrap()],
            method: "POST".into(),
            ..LoadSpec::default()
        };
        let wire: SpecWire = serde_json::from_str(&line(&SpecWire::from(&spec))).unwrap();
        assert_eq!(wire.to_spec().unwrap(), spec);
    }
}
