//! `run`: validates the spec, checks the target answers a connect, splits the connections over
//! worker threads, starts them at one t0 and merges what they measured.

use crate::report::{LoadReport, ReportInput};
use crate::stats::ThreadStats;
use crate::worker::{self, Plan, Share};
use crate::{cpu, request, url, Live, LoadError, LoadSpec, Phase};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

/// Most connections one run may open: beyond this the descriptor table, not the server, is measured.
pub const MAX_CONNECTIONS: usize = 1_000_000;
/// Most worker threads (each its own event loop).
pub const MAX_THREADS: usize = 1024;
/// Deepest pipeline per connection.
pub const MAX_PIPELINE: usize = 1024;
/// Most requests in flight at once (connections × pipeline): each has a slot kept in memory.
pub const MAX_IN_FLIGHT: usize = 1 << 22;
/// Largest batch (the request repeated `pipeline` times) kept in memory.
const MAX_BATCH_BYTES: usize = 64 << 20;
/// Longest warmup or measured window: a year (times are u64 nanoseconds, and nothing is sized
/// by the duration, but a longer figure is a typo).
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);
/// Highest offered rate, requests per second: far beyond any server, still a schedule whose
/// request times are distinct at nanosecond resolution over many seconds.
pub const MAX_RATE: f64 = 1e12;
/// Longest timeout: an hour, the largest latency the histograms hold.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

fn validate(spec: &LoadSpec) -> Result<(), LoadError> {
    let bad = |m: String| Err(LoadError::InvalidSpec(m));
    if !(1..=MAX_CONNECTIONS).contains(&spec.connections) {
        return bad(format!(
            "connections must be between 1 and {MAX_CONNECTIONS}, got {}",
            spec.connections
        ));
    }
    if !(1..=MAX_THREADS).contains(&spec.threads) {
        return bad(format!(
            "threads must be between 1 and {MAX_THREADS}, got {}",
            spec.threads
        ));
    }
    if !(1..=MAX_PIPELINE).contains(&spec.pipeline) {
        return bad(format!(
            "pipeline must be between 1 and {MAX_PIPELINE}, got {}",
            spec.pipeline
        ));
    }
    if spec.connections.saturating_mul(spec.pipeline) > MAX_IN_FLIGHT {
        return bad(format!(
            "{} connections with a pipeline of {} is more than {MAX_IN_FLIGHT} requests in flight",
            spec.connections, spec.pipeline
        ));
    }
    if spec.duration.is_zero() || spec.duration > MAX_DURATION {
        return bad(format!(
            "duration must be more than zero and at most 365 days, got {:?}",
            spec.duration
        ));
    }
    if spec.warmup > MAX_DURATION {
        return bad(format!(
            "warmup must be at most 365 days, got {:?}",
            spec.warmup
        ));
    }
    if spec.timeout.is_zero() || spec.timeout > MAX_TIMEOUT {
        return bad(format!(
            "timeout must be more than zero and at most 1 hour, got {:?}",
            spec.timeout
        ));
    }
    if let Some(cpus) = &spec.cpus {
        let allowed = cpu::allowed_cpu_list();
        if let Some(bad) = cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(LoadError::InvalidSpec(format!(
                "CPU {bad} is not available to this process (allowed: {allowed:?})"
            )));
        }
    }
    if let Some(r) = spec.rate {
        if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) {
            return bad(format!(
                "rate must be a positive number of requests per second, at most {MAX_RATE:e}, got {r}"
            ));
        }
    }
    Ok(())
}

/// Descriptors a run needs: one per connection, plus each worker's poll and timer and slack.
fn fds_needed(spec: &LoadSpec) -> u64 {
    let threads = spec.threads.min(spec.connections) as u64;
    spec.connections as u64 + 16 * threads + 64
}

/// Everything about `spec` that can be known without connecting: the numbers are in range, the
/// URL parses and resolves, the request can be built, the descriptors can be had. Callers run
/// this before printing anything, so a bad flag is an error, not a failed run.
pub fn check(spec: &LoadSpec) -> Result<(), LoadError> {
    prepare(spec).map(|_| ())
}

/// [`check`], returning the target and the serialised request.
fn prepare(spec: &LoadSpec) -> Result<(url::Target, Vec<u8>), LoadError> {
    validate(spec)?;
    let target = url::parse(&spec.url)?;
    let request = request::serialize(
        &target,
        &spec.method,
        &spec.headers,
        spec.body.as_deref(),
        false,
    )?;
    if request.len().saturating_mul(spec.pipeline) > MAX_BATCH_BYTES {
        return Err(LoadError::InvalidSpec(format!(
            "a pipeline of {} requests of {} bytes is more than {} MiB in one write",
            spec.pipeline,
            request.len(),
            MAX_BATCH_BYTES >> 20
        )));
    }
    cpu::ensure_fd_limit(fds_needed(spec)).map_err(LoadError::Resources)?;
    Ok((target, request))
}

/// Connects once to find an address that answers (and fail clearly if none does). Waits at most
/// `timeout` per address, and gives up at once when `cancel` is set.
fn preflight(
    url: &str,
    addrs: &[SocketAddr],
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<SocketAddr, LoadError> {
    let mut last = None;
    for &addr in addrs {
        match connect_interruptible(addr, timeout, cancel) {
            Ok(()) => return Ok(addr),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                return Err(LoadError::Interrupted)
            }
            Err(e) => last = Some((addr, e)),
        }
    }
    let (addr, source) = last.expect("at least one address");
    Err(LoadError::Connect {
        url: url.to_string(),
        addr,
        source,
    })
}

/// A non-blocking connect watched in short slices, so `cancel` is noticed within 50 ms.
fn connect_interruptible(
    addr: SocketAddr,
    timeout: Duration,
    cancel: &AtomicBool,
) -> std::io::Result<()> {
    use mio::{Events, Interest, Poll, Token};
    let mut stream = mio::net::TcpStream::connect(addr)?;
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut stream, Token(0), Interest::WRITABLE)?;
    let mut events = Events::with_capacity(4);
    let start = Instant::now();
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        match poll.poll(&mut events, Some(left.min(Duration::from_millis(50)))) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        if events.is_empty() {
            continue;
        }
        if let Some(e) = stream.take_error()? {
            return Err(e);
        }
        match stream.peer_addr() {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotConnected => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Runs the load described by `spec`; `cancel` (Ctrl-C) stops it early with what was measured.
pub fn run(spec: &LoadSpec, live: &Live, cancel: &AtomicBool) -> Result<LoadReport, LoadError> {
    let (target, request) = prepare(spec)?;
    let threads = spec.threads.min(spec.connections);
    let addr = preflight(&spec.url, &target.addrs, spec.timeout, cancel)?;
    let batch = request.repeat(spec.pipeline);
    let warm_end = spec.warmup.as_nanos() as u64;
    let plan = Plan {
        addr,
        request: &request,
        batch: &batch,
        pipeline: spec.pipeline,
        // Methods are case-sensitive: only `HEAD` has HEAD's bodiless answers.
        head_request: spec.method == "HEAD",
        warm_end,
        end: warm_end + spec.duration.as_nanos() as u64,
        timeout_ns: spec.timeout.as_nanos() as u64,
        seconds: spec.duration.as_secs_f64().ceil() as usize,
    };
    let shares: Vec<Share> = (0..threads)
        .map(|i| {
            let conns = spec.connections / threads + usize::from(i < spec.connections % threads);
            Share {
                index: i,
                connections: conns,
                rate: spec.rate.map(|r| {
                    let phase = (i as f64 * 1e9 / r) as u64;
                    (r * conns as f64 / spec.connections as f64, phase)
                }),
                cpu: spec
                    .cpus
                    .as_ref()
                    .filter(|c| !c.is_empty())
                    .map(|c| c[i % c.len()]),
            }
        })
        .collect();

    let barrier = Barrier::new(threads);
    let t0 = OnceLock::new();
    let sync = || {
        if barrier.wait().is_leader() {
            let _ = t0.set(Instant::now());
        }
        barrier.wait();
        *t0.get().expect("t0 set by the leader")
    };
    live.set_phase(Phase::Starting);
    let results: Vec<std::io::Result<ThreadStats>> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .iter()
            .map(|share| {
                let (plan, sync) = (&plan, &sync);
                std::thread::Builder::new()
                    .name(format!("rigor-load-{}", share.index))
                    .spawn_scoped(scope, move || worker::run(plan, share, sync, live, cancel))
                    .expect("spawn worker thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("worker thread panicked")))
            })
            .collect()
    });
    live.set_phase(Phase::Done);

    let mut merged = ThreadStats::new(spec.rate.is_some(), plan.seconds);
    for r in results {
        let s = r.map_err(|source| LoadError::Io {
            url: spec.url.clone(),
            source,
        })?;
        merged.merge(&s);
    }
    let allowed = match &spec.cpus {
        Some(c) if !c.is_empty() => {
            let mut d = c.clone();
            d.sort_unstable();
            d.dedup();
            d.len()
        }
        _ => cpu::allowed_cpus(),
    };
    let cancelled = cancel.load(Ordering::Relaxed);
    Ok(LoadReport::build(
        ReportInput {
            url: &spec.url,
            connections: spec.connections,
            threads,
            pipeline: spec.pipeline,
            warmup_secs: spec.warmup.as_secs_f64(),
            rate: spec.rate,
            cancelled,
            cores: threads.min(allowed).max(1),
        },
        &merged,
    ))
}
