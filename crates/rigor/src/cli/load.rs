//! `rigor load`: its flags, and the wiring from them to the engine: options (a checked
//! `LoadSpec`) → the load run (`load_run`) → its exit code.

use crate::exit::Exit;
use crate::failure::Failure;
use crate::options::load::LoadOptions;
use std::time::Duration;

/// Flags of `rigor load`; the names match wrk's where wrk has them.
#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// Target URL, http:// or https:// (IPv6 literals as http://[::1]:8080/path)
    pub url: String,
    /// Open connections in total
    #[arg(short = 'c', long, default_value_t = 64)]
    pub connections: usize,
    /// Worker threads, each with its own event loop
    #[arg(short = 't', long, default_value_t = 1)]
    pub threads: usize,
    /// Measured duration (e.g. 10s, 500ms, 1m)
    #[arg(short = 'd', long, default_value = "10s", value_parser = crate::duration::parse_duration)]
    pub duration: Duration,
    /// Warmup before the measured window (not counted)
    #[arg(short = 'w', long, default_value = "0s", value_parser = crate::duration::parse_duration)]
    pub warmup: Duration,
    /// Requests in flight per connection (HTTP/1.1 pipelining)
    #[arg(long, default_value_t = 1)]
    pub pipeline: usize,
    /// Speak HTTP/2: h2 (ALPN) over https://, cleartext h2c by prior knowledge over http://
    #[arg(long)]
    pub http2: bool,
    /// HTTP/2: concurrent streams per connection (each one request in flight), within what the
    /// server allows
    #[arg(long, default_value_t = 1, requires = "http2")]
    pub streams: usize,
    /// Total requests per second (0.001 to 1e12): open model, latency counted from each request's
    /// intended send time (no coordinated omission)
    #[arg(long)]
    pub rate: Option<f64>,
    /// A request unanswered this long is a timeout error (its connection is replaced); also how
    /// long the window's last requests are waited for after it closes
    #[arg(long, default_value = "2s", value_parser = crate::duration::parse_duration)]
    pub timeout: Duration,
    /// Extra request header 'Name: value' (repeatable)
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// Request method, sent as typed (methods are case-sensitive: `head` is not HEAD)
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// Request body
    #[arg(long)]
    pub body: Option<String>,
    /// A request mix on the URL's origin: a TOML file of `[[requests]]` (name, path or url,
    /// method, headers, body, body_file or body_lines, weight) or a vegeta targets file;
    /// replaces --method, --header and --body
    #[arg(long, value_name = "FILE")]
    pub requests: Option<std::path::PathBuf>,
    /// The seed of --requests' choices (each connection draws a fixed sequence from it)
    #[arg(long, default_value_t = 0, requires = "requests")]
    pub seed: u64,
    /// An open-model stage RATE:FOR, e.g. '200:10s' (repeatable; the first holds its rate, each
    /// later one ramps linearly to its own); replaces --rate and --duration
    #[arg(long = "stage", value_name = "RATE:FOR", conflicts_with_all = ["duration", "find_rate"])]
    pub stages: Vec<String>,
    /// With --stage: measure stage N (from 1) alone
    #[arg(long, value_name = "N", requires = "stages")]
    pub measure_stage: Option<usize>,
    /// Write the measurements and the full report as JSON to FILE ('-' for stdout, which then
    /// carries the JSON alone: the summary goes to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Pin worker threads to these CPUs, e.g. '1' or '0,2-3'
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Source addresses the connections take in turn, e.g. '127.0.0.1-127.0.0.4' or
    /// '10.0.0.5,10.0.0.6': each has its own local ports, so more connections fit
    #[arg(long = "source-addr", value_name = "ADDRS")]
    pub source_addr: Option<String>,
    /// Drive the load with an external tool instead of the engine: wrk, wrk2, bombardier,
    /// h2load or oha (the flags above are mapped onto its own, see `rigor help cli`)
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    /// Extra options for --tool, after `--` (e.g. `-- --h1` for h2load)
    #[arg(last = true, value_name = "TOOL_ARGS")]
    pub tool_args: Vec<String>,
    /// https:// only: accept any certificate (self-signed, expired, another host's); the run
    /// says so in an `insecure_tls` warning
    #[arg(short = 'k', long)]
    pub insecure: bool,
    /// Find the highest rate whose measured window meets this objective, e.g. 'p99<50ms' or
    /// 'p99<50ms,errors<1%' (p50, p90, p99, p999, max, errors): open-model probes from --rate
    /// (default 100) doubling, then bisected; prints load.capacity and every probe
    #[arg(long, value_name = "OBJECTIVE", conflicts_with = "duration")]
    pub find_rate: Option<String>,
    /// With --find-rate: the highest rate probed [default: 100000]
    #[arg(long, value_name = "RPS", requires = "find_rate")]
    pub find_max: Option<f64>,
    /// With --find-rate: settle when the lowest rate missed is within this of the highest met
    /// (e.g. 5% or 0.05) [default: 5%]
    #[arg(long, value_name = "P", requires = "find_rate")]
    pub find_precision: Option<String>,
    /// With --find-rate: each probe's measured window (after --warmup, at least 1s) [default:
    /// 2 × the objective's latency / precision, from 3s to 60s]
    #[arg(long, value_name = "DURATION", requires = "find_rate", value_parser = crate::duration::parse_duration)]
    pub probe: Option<Duration>,
    /// The engine's I/O path: auto (io_uring for http:// where the kernel has it, else
    /// epoll), epoll, or io_uring (an error where it is not available); the report says which ran
    #[arg(long, value_name = "PATH", default_value = "auto")]
    pub io: rigor_load::IoMode,
    /// 'container:NAME': run the load inside that running container's network namespace
    /// (found through docker or podman, whichever answers), with no published port between
    #[arg(long, value_name = "container:NAME")]
    pub network: Option<String>,
}

/// Runs `rigor load`: bad flags are usage failures (exit 2) before anything is printed or
/// connected; an interrupted load exits 130 after printing what was measured.
pub fn execute(args: &LoadArgs) -> Result<Exit, Failure> {
    let options = LoadOptions::try_from(args)?;
    crate::load_run::run(&options)
}
