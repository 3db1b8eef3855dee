//! The binary's flags (each with a HELLO_* environment fallback; the flag wins) and its life
//! cycle: optional start-up knobs, listen, wait for a signal, print stats.

use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::Parser;

use crate::config::{default_threads, Config};
use crate::knobs::process::{idle_child, spawn_idle_child, ShutdownSignals};
use crate::knobs::read_file::read_cold;

/// Fast HTTP/1.1 testbed server for rigor, with knobs for latency, faults and resource use.
/// Switches also read `HELLO_*=1/0` (or true/false, yes/no, on/off) from the environment.
#[derive(Debug, Parser)]
#[command(name = "hello-server", version)]
pub struct Args {
    /// Address to listen on (IPv4 or IPv6).
    #[arg(long, env = "HELLO_HOST", default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// Port to listen on (0 = any free port).
    #[arg(long, env = "HELLO_PORT", default_value_t = 5000)]
    pub port: u16,
    /// Event-loop threads [default: available cores].
    #[arg(long, env = "HELLO_THREADS", value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
    /// Fixed delay added to every response, in microseconds (timers; connections stay independent).
    #[arg(long, env = "HELLO_DELAY_US", default_value_t = 0)]
    pub delay_us: u64,
    /// Busy work per request, in microseconds of wall time spent spinning on the worker thread
    /// (with --threads 1: a server that holds at most 1e6/N requests per second).
    #[arg(long, env = "HELLO_WORK_US", default_value_t = 0)]
    pub work_us: u64,
    /// Blocking time per request, in microseconds the worker thread sleeps (with --threads 1:
    /// requests served one at a time, about 1e6/N per second, even on a busy machine).
    #[arg(long, env = "HELLO_BLOCK_US", default_value_t = 0)]
    pub block_us: u64,
    /// Freeze the whole server this many ms at the end of every --stall-every-ms period.
    #[arg(long, env = "HELLO_STALL_MS", requires = "stall_every_ms")]
    pub stall_ms: Option<u64>,
    /// Period of the stalls, in ms from start.
    #[arg(long, env = "HELLO_STALL_EVERY_MS", requires = "stall_ms")]
    pub stall_every_ms: Option<u64>,
    /// Size in bytes of the /plaintext body.
    #[arg(long, env = "HELLO_BODY_SIZE")]
    pub body_size: Option<usize>,
    /// Fraction in [0, 1] of /plaintext and /json answered 500 (deterministic, server-wide).
    #[arg(long, env = "HELLO_ERROR_RATE", default_value_t = 0.0)]
    pub error_rate: f64,
    /// Close each connection after its N-th response (sent with `Connection: close`).
    #[arg(long, env = "HELLO_CLOSE_AFTER", value_parser = clap::value_parser!(u64).range(1..))]
    pub close_after: Option<u64>,
    /// Answer /plaintext and /json with non-HTTP bytes.
    #[arg(long, env = "HELLO_GARBAGE", value_parser = BoolishValueParser::new())]
    pub garbage: bool,
    /// Send /plaintext and /json with chunked transfer encoding.
    #[arg(long, env = "HELLO_CHUNKED", value_parser = BoolishValueParser::new())]
    pub chunked: bool,
    /// /health answers 503 until this many ms after start.
    #[arg(long, env = "HELLO_READY_AFTER_MS", default_value_t = 0)]
    pub ready_after_ms: u64,
    /// /health always answers 503.
    #[arg(long, env = "HELLO_NEVER_READY", value_parser = BoolishValueParser::new())]
    pub never_ready: bool,
    /// Allocate and touch this many MiB (at start, or after the first request to --hold-after).
    #[arg(long, env = "HELLO_HOLD_MIB", default_value_t = 0)]
    pub hold_mib: u64,
    /// Path whose first request triggers the --hold-mib allocation.
    #[arg(long, env = "HELLO_HOLD_AFTER")]
    pub hold_after: Option<String>,
    /// Wait this many ms before listening (after the --hold-mib taken at start).
    #[arg(long, env = "HELLO_LISTEN_DELAY_MS", default_value_t = 0)]
    pub listen_delay_ms: u64,
    /// Before listening, create this file if needed, evict it from the page cache and read it.
    #[arg(long, env = "HELLO_READ_FILE", requires = "read_file_mib")]
    pub read_file: Option<PathBuf>,
    /// Size in MiB of the --read-file file.
    #[arg(long, env = "HELLO_READ_FILE_MIB")]
    pub read_file_mib: Option<u64>,
    /// Ignore SIGTERM (SIGINT still stops the server; SIGKILL always does).
    #[arg(long, env = "HELLO_IGNORE_SIGTERM", value_parser = BoolishValueParser::new())]
    pub ignore_sigterm: bool,
    /// Exit with code 3 after answering this many requests (/health and /stats not counted).
    #[arg(long, env = "HELLO_EXIT_AFTER_REQUESTS", value_parser = clap::value_parser!(u64).range(1..))]
    pub exit_after_requests: Option<u64>,
    /// Print `fatal: told to exit at start` and exit with code 2 before listening.
    #[arg(long, env = "HELLO_EXIT_AT_START", value_parser = BoolishValueParser::new())]
    pub exit_at_start: bool,
    /// Keep an idle child process alive alongside the server (killed on graceful exit).
    #[arg(long, env = "HELLO_SPAWN_CHILD", value_parser = BoolishValueParser::new())]
    pub spawn_child: bool,
    /// After the shutdown signal, once the worker threads are gone: allocate and touch this
    /// many MiB before exiting.
    #[arg(long, env = "HELLO_SHUTDOWN_HOLD_MIB", default_value_t = 0)]
    pub shutdown_hold_mib: u64,
    /// After the shutdown signal, once the worker threads are gone: wait this many ms before
    /// exiting.
    #[arg(long, env = "HELLO_SHUTDOWN_LINGER_MS", default_value_t = 0)]
    pub shutdown_linger_ms: u64,
    /// Internal: run as the idle child of the given parent pid.
    #[arg(long, hide = true, value_name = "PARENT_PID")]
    pub idle_child: Option<u32>,
}

impl Args {
    /// The server configuration these flags describe.
    pub fn config(&self) -> Config {
        Config {
            host: self.host,
            port: self.port,
            threads: self.threads.map_or_else(default_threads, |n| n as usize),
            delay: Duration::from_micros(self.delay_us),
            work: Duration::from_micros(self.work_us),
            block: Duration::from_micros(self.block_us),
            stall: self
                .stall_ms
                .zip(self.stall_every_ms)
                .map(|(s, p)| (Duration::from_millis(s), Duration::from_millis(p))),
            body_size: self.body_size,
            error_rate: self.error_rate,
            close_after: self.close_after,
            garbage: self.garbage,
            chunked: self.chunked,
            ready_after: Duration::from_millis(self.ready_after_ms),
            never_ready: self.never_ready,
            hold_mib: self.hold_mib,
            hold_after: self.hold_after.clone(),
            listen_delay: Duration::from_millis(self.listen_delay_ms),
            exit_after_requests: self.exit_after_requests,
        }
    }
}

/// Runs the binary: returns 0 after a graceful signal, 1 when the server cannot start,
/// 2 for bad settings or `--exit-at-start` (clap itself exits 2 on unknown flags).
pub fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(parent) = args.idle_child {
        idle_child(parent);
    }
    if args.exit_at_start {
        eprintln!("fatal: told to exit at start");
        return ExitCode::from(2);
    }
    let config = args.config();
    if let Err(e) = config.validate() {
        eprintln!("hello-server: error: {e}");
        return ExitCode::from(2);
    }
    if let (Some(path), Some(mib)) = (&args.read_file, args.read_file_mib) {
        match read_cold(path, mib) {
            Ok(took) => println!(
                "hello-server read {mib} MiB from {} in {} ms",
                path.display(),
                took.as_millis()
            ),
            Err(e) => {
                eprintln!("hello-server: error: cannot read {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    // Spawn the child before blocking signals: a blocked mask would be inherited across exec.
    let mut child = None;
    if args.spawn_child {
        match spawn_idle_child() {
            Ok(c) => child = Some(c),
            Err(e) => {
                eprintln!("hello-server: error: cannot spawn child: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let code = serve(&args, config);
    if let Some(mut c) = child {
        let _ = c.kill();
        let _ = c.wait();
    }
    code
}

fn serve(args: &Args, config: Config) -> ExitCode {
    let signals = match ShutdownSignals::install(args.ignore_sigterm) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("hello-server: error: cannot set up signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (host, port) = (config.host, config.port);
    let server = match crate::start(config) {
        Ok(s) => s,
        Err(e) => {
            let addr = std::net::SocketAddr::new(host, port);
            eprintln!("hello-server: error: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "hello-server listening on {} pid {}",
        server.addr(),
        std::process::id()
    );
    let _ = out.flush();
    drop(out);
    signals.wait();
    let stats = server.stats();
    server.shutdown();
    if args.shutdown_hold_mib > 0 || args.shutdown_linger_ms > 0 {
        crate::knobs::shutdown::grow_and_linger(
            args.shutdown_hold_mib,
            Duration::from_millis(args.shutdown_linger_ms),
        );
    }
    let json = serde_json::to_string(&stats).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "hello-server stats: {json}");
    let _ = out.flush();
    ExitCode::SUCCESS
}
