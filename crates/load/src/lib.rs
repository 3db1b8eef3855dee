//! rigor's HTTP load engine (HTTP/1.1, and HTTP/2 with many streams per connection; over TCP,
//! or TLS for https://): as fast as wrk, as honest as wrk2.
//!
//! C keep-alive connections over T threads, each thread its own mio event loop driving its
//! connections as explicit state machines. Closed model by default; with a rate, an open model
//! whose latency counts from each request's intended send time. It knows nothing of apps or CLIs.

pub mod capacity;
mod check;
mod connection;
mod cpu;
mod error;
mod h2;
mod io;
mod merge;
mod mix;
mod mix_report;
pub mod parser;
mod preflight;
mod probe;
mod report;
mod request;
mod run;
mod schedule;
mod second;
mod source;
mod stages;
mod stats;
mod tls;
mod transport;
mod url;
mod worker;

pub use check::{
    check, MAX_CONNECTIONS, MAX_DURATION, MAX_IN_FLIGHT, MAX_PIPELINE, MAX_RATE, MAX_STREAMS,
    MAX_THREADS, MAX_TIMEOUT, MIN_RATE,
};
pub use cpu::{allowed_cpu_list, cpu_set};
pub use error::LoadError;
pub use h2::H2Report;
/// The histogram type reports carry, so callers name the same version the engine records with.
pub use hdrhistogram;
pub use io::{io_uring_support, kernel_release_supports, IoMode, UnknownIoMode, UringUnsupported};
pub use merge::{merge, ReportWire, WireError};
pub use mix::{valid_request_name, MixRequest, RequestMix, MAX_MIX_BODIES, MAX_MIX_REQUESTS};
pub use mix_report::{RequestReport, REQUEST_ID_PREFIX};
pub use probe::{
    fetch_body, probe_request, probe_request_as, probe_request_finding, probe_request_http2,
    ProbeFn, ProbeResponse, PROBE_BODY_KEPT,
};
pub use report::{
    ErrorCounts, LatencyStats, LoadReport, LoadWarning, OutsideWindow, ParseFailure, RateReport,
    TimelineSecond,
};
pub use run::run;
pub use source::{local_ports, parse_sources, SourceError};
pub use stages::{Stage, MAX_STAGES};

/// The stages of `spec` and the stage it measures, checked alone (rates, durations, the
/// measured stage one of them, at least one request due), for callers that check keys apart.
pub fn check_stages(spec: &LoadSpec) -> Result<(), LoadError> {
    stages::validate(&spec.stages, spec.measure_stage, spec.rate)
}

/// `url`'s host and port, checked but not resolved: a URL only other machines can reach (a
/// load host's network) is still a well-formed one.
pub fn url_host_port(url: &str) -> Result<(String, u16), LoadError> {
    url::host_port(url)
}
pub use tls::TlsReport;

/// The address the engine would connect to for `url` (scheme, host and port checked, host
/// resolved, nothing connected), so callers fail early and check the same socket the load hits.
pub fn resolve_url(url: &str) -> Result<std::net::SocketAddr, LoadError> {
    let target = url::parse(url)?;
    target
        .addrs
        .first()
        .copied()
        .ok_or_else(|| LoadError::InvalidUrl {
            url: url.to_string(),
            reason: "the host resolves to no address".into(),
        })
}

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

/// What to load and how hard; the defaults match `rigor load` without flags.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSpec {
    pub url: String,
    pub connections: usize,
    pub threads: usize,
    pub duration: Duration,
    pub warmup: Duration,
    /// Requests in flight per connection (HTTP/1.1 pipelining); 1 = none. The closed model sends
    /// N in one write and the next N once all are answered, like wrk's pipeline script.
    pub pipeline: usize,
    /// Requests per second in total: switches to the open model (no coordinated omission).
    pub rate: Option<f64>,
    /// A request unanswered this long is a timeout error and its connection is replaced.
    pub timeout: Duration,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    /// CPUs to pin worker threads to (thread i on `cpus[i % len]`).
    pub cpus: Option<Vec<usize>>,
    /// Addresses connections come from, in turn (empty: the kernel's choice). Each has the
    /// ephemeral port range towards the server; several lift that limit on connections.
    pub source_addrs: Vec<std::net::IpAddr>,
    /// https:// only: accept any certificate (self-signed, expired, another name's), for test
    /// servers; the handshake's signatures are still checked.
    pub insecure: bool,
    /// The I/O path the workers take (`Auto`: io_uring for http:// where the kernel has it);
    /// the report says which ran.
    pub io: IoMode,
    /// Speak HTTP/2: h2 by ALPN over https://, cleartext h2c by prior knowledge over http://.
    pub http2: bool,
    /// HTTP/2: concurrent streams per connection (each one request in flight), within what the
    /// server allows; 1 without `http2`.
    pub streams: usize,
    /// Several requests on the URL's origin, chosen by weight, instead of the one request
    /// `method`, `headers` and `body` describe.
    pub mix: Option<RequestMix>,
    /// Open model with a rate that changes: the stages after the warmup (which runs at the
    /// first stage's rate) replace `rate` and `duration`.
    pub stages: Vec<Stage>,
    /// With stages: measure this one (0-based) alone instead of all of them.
    pub measure_stage: Option<usize>,
}

impl LoadSpec {
    /// Whether the run is an open model (a rate, or stages).
    pub fn open_model(&self) -> bool {
        self.rate.is_some() || !self.stages.is_empty()
    }

    /// The measured window's length: `duration`, or the stages measured.
    pub fn window(&self) -> Duration {
        if self.stages.is_empty() {
            return self.duration;
        }
        let (lo, hi) = stages::window(&self.stages, self.measure_stage, Duration::ZERO);
        Duration::from_nanos(hi - lo)
    }

    /// How long the run lasts before its drain: warmup and window, with the stages before a
    /// measured one.
    pub fn span(&self) -> Duration {
        if self.stages.is_empty() {
            return self.warmup + self.duration;
        }
        let (_, hi) = stages::window(&self.stages, self.measure_stage, self.warmup);
        Duration::from_nanos(hi)
    }
}

impl Default for LoadSpec {
    fn default() -> Self {
        LoadSpec {
            url: String::new(),
            connections: 64,
            threads: 1,
            duration: Duration::from_secs(10),
            warmup: Duration::ZERO,
            pipeline: 1,
            rate: None,
            timeout: Duration::from_secs(2),
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
            cpus: None,
            source_addrs: Vec::new(),
            insecure: false,
            io: IoMode::Auto,
            http2: false,
            streams: 1,
            mix: None,
            stages: Vec::new(),
            measure_stage: None,
        }
    }
}

/// Where a run is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Starting,
    Warmup,
    Measuring,
    Done,
}

/// What the engine's worker threads are called, followed by their index: whoever watches the
/// process can tell the load's threads from the rest.
pub const WORKER_THREAD_PREFIX: &str = "rigor-load-";

/// Counters updated while the engine runs, so a progress display can read them from another thread.
#[derive(Debug, Default)]
pub struct Live {
    /// Responses completed in the measured window so far.
    pub completed: AtomicU64,
    /// Errors (of any kind) in the measured window so far.
    pub errors: AtomicU64,
    phase: AtomicU8,
}

impl Live {
    /// The current phase of the run.
    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Relaxed) {
            0 => Phase::Starting,
            1 => Phase::Warmup,
            2 => Phase::Measuring,
            _ => Phase::Done,
        }
    }

    /// Also for callers that follow an engine running elsewhere (another host's).
    pub fn set_phase(&self, p: Phase) {
        let v = match p {
            Phase::Starting => 0,
            Phase::Warmup => 1,
            Phase::Measuring => 2,
            Phase::Done => 3,
        };
        self.phase.store(v, Ordering::Relaxed);
    }
}
