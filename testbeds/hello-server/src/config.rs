//! Server configuration shared by the binary's flags and in-process callers.

use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

/// Everything that shapes the server's behaviour, so tests can start exactly the server they need
/// in-process and the binary can build the same thing from flags.
#[derive(Debug, Clone)]
pub struct Config {
    /// Address to bind; IPv6 (`::1`) works too.
    pub host: IpAddr,
    /// Port to bind; 0 asks the kernel for an ephemeral port (see [`crate::Server::addr`]).
    pub port: u16,
    /// Event-loop threads; connections are handed round-robin among them.
    pub threads: usize,
    /// Fixed latency added to every response, implemented with timers so connections stay
    /// independent (C connections at delay D give about C/D requests per second).
    pub delay: Duration,
    /// Wall-clock time each counted request keeps its worker thread busy (a spin, not a
    /// timer): a server of one thread then holds at most 1/work requests per second, a fixed
    /// capacity to find, whatever else the machine runs.
    pub work: Duration,
    /// Time each counted request blocks its worker thread (a sleep, not a timer): requests on
    /// one thread are served one after another, about 1/block per second per thread, without
    /// needing the CPU, so that capacity holds on a machine busy with other work.
    pub block: Duration,
    /// `(stall, every)`: the whole server freezes for `stall` at the end of each `every` period,
    /// counted from start, so tests can see how a client reports a stop-the-world pause.
    pub stall: Option<(Duration, Duration)>,
    /// Size of the `/plaintext` body, to test throughput with larger answers.
    pub body_size: Option<usize>,
    /// Fraction in [0, 1] of `/plaintext` and `/json` requests answered 500, deterministically
    /// and server-wide, so error counts in tests are exact.
    pub error_rate: f64,
    /// Close each connection after its N-th response (which carries `Connection: close`).
    pub close_after: Option<u64>,
    /// Answer `/plaintext` and `/json` with bytes that are not HTTP, to test client parse errors.
    pub garbage: bool,
    /// Send `/plaintext` and `/json` bodies with chunked transfer encoding in several chunks.
    pub chunked: bool,
    /// `/health` answers 503 until this long after start, to test readiness polling.
    pub ready_after: Duration,
    /// `/health` always answers 503, to test readiness timeouts.
    pub never_ready: bool,
    /// MiB to allocate and touch (made resident) and keep, to test memory measurements.
    pub hold_mib: u64,
    /// Allocate `hold_mib` after the first request to this path; `None` allocates at start.
    pub hold_after: Option<String>,
    /// Wait this long before listening (after what is held at start), as a server that loads
    /// its data before it opens its port.
    pub listen_delay: Duration,
    /// Exit the whole process with code 3 after answering this many requests (a crash mid-load).
    /// Counted like [`crate::StatsSnapshot::requests`]. Only sensible in the binary.
    pub exit_after_requests: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 5000,
            threads: default_threads(),
            delay: Duration::ZERO,
            work: Duration::ZERO,
            block: Duration::ZERO,
            stall: None,
            body_size: None,
            error_rate: 0.0,
            close_after: None,
            garbage: false,
            chunked: false,
            ready_after: Duration::ZERO,
            never_ready: false,
            hold_mib: 0,
            hold_after: None,
            listen_delay: Duration::ZERO,
            exit_after_requests: None,
        }
    }
}

/// One thread per available core, the usual shape of a benchmarked server.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Config {
    /// Rejects settings the server cannot honour, with a message naming the knob.
    pub fn validate(&self) -> io::Result<()> {
        let bad = |msg: String| Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
        if self.threads == 0 {
            return bad("threads must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.error_rate) {
            return bad(format!(
                "error rate must be in [0, 1], got {}",
                self.error_rate
            ));
        }
        if let Some((stall, every)) = self.stall {
            if every.is_zero() || stall >= every {
                return bad(format!(
                    "stall ({} ms) must be shorter than its period ({} ms)",
                    stall.as_millis(),
                    every.as_millis()
                ));
            }
        }
        if self.close_after == Some(0) {
            return bad("close-after must be at least 1".into());
        }
        if self.exit_after_requests == Some(0) {
            return bad("exit-after-requests must be at least 1".into());
        }
        Ok(())
    }
}
