//! `run`: validates the spec, checks the target answers a connect (and, for https://, a
//! handshake), splits the connections over worker threads, starts them at one t0 and merges
//! what they measured.

use crate::check::prepare;
use crate::preflight::preflight;
use crate::report::{LoadReport, ReportInput};
use crate::stats::ThreadStats;
use crate::tls::{check_handshake, TlsClient};
use crate::worker::{self, Plan, Share};
use crate::{cpu, Live, LoadError, LoadSpec, Phase};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::Instant;

/// Runs the load described by `spec`; `cancel` (Ctrl-C) stops it early with what was measured.
pub fn run(spec: &LoadSpec, live: &Live, cancel: &AtomicBool) -> Result<LoadReport, LoadError> {
    let crate::check::Prepared {
        target,
        request,
        h2,
    } = prepare(spec)?;
    let io = crate::io::resolve(spec.io, target.tls, spec.http2)?;
    let threads = spec.threads.min(spec.connections);
    crate::source::check_local(&spec.source_addrs)?;
    let source = spec.source_addrs.first().copied();
    let (addr, first) = preflight(&spec.url, &target.addrs, source, spec.timeout, cancel)?;
    // A client without resumption for the check and the connections opened before the clock
    // (their handshakes are full ones, however they interleave), and one whose session cache
    // lets reconnects during the run resume.
    let (fresh, tls) = match target.tls {
        true => {
            let fresh = TlsClient::new(&spec.url, &target, spec.insecure, 0, spec.http2)?;
            check_handshake(&spec.url, first, &fresh, spec.timeout, cancel)?;
            let resuming =
                TlsClient::new(&spec.url, &target, spec.insecure, TLS_SESSIONS, spec.http2)?;
            (Some(fresh), Some(resuming))
        }
        false if spec.http2 => {
            crate::h2::check_h2c(&spec.url, first, spec.timeout, cancel)?;
            (None, None)
        }
        false => (None, None),
    };
    // HTTP/2 keeps `streams` requests in flight per connection where HTTP/1.1 pipelines.
    let depth = if spec.http2 {
        spec.streams
    } else {
        spec.pipeline
    };
    let batch = request.repeat(spec.pipeline);
    let warm_end = spec.warmup.as_nanos() as u64;
    let plan = Plan {
        addr,
        sources: &spec.source_addrs,
        request: &request,
        batch: &batch,
        pipeline: depth,
        // Methods are case-sensitive: only `HEAD` has HEAD's bodiless answers.
        head_request: spec.method == "HEAD",
        warm_end,
        end: warm_end + spec.duration.as_nanos() as u64,
        timeout_ns: spec.timeout.as_nanos() as u64,
        seconds: spec.duration.as_secs_f64().ceil() as usize,
        tls: tls.as_ref(),
        tls_fresh: fresh.as_ref(),
        io_uring: io == crate::IoMode::IoUring,
        io_fallback: spec.io == crate::IoMode::Auto,
        h2: h2.as_ref(),
    };
    let shares = shares(spec, threads);
    live.set_phase(Phase::Starting);
    let (results, t0) = run_workers(&plan, &shares, live, cancel);
    live.set_phase(Phase::Done);

    let mut merged = ThreadStats::new(spec.rate.is_some(), plan.seconds)
        .with_tls(tls.is_some())
        .with_h2(spec.http2);
    let mut paths = std::collections::BTreeSet::new();
    for r in results {
        let (s, on_uring) = r.map_err(|source| LoadError::Io {
            url: spec.url.clone(),
            source,
        })?;
        merged.merge(&s);
        paths.insert(if on_uring { "io_uring" } else { "epoll" });
    }
    // What ran, not what was asked: a worker of `auto` may have fallen back to epoll.
    let io = match paths.len() {
        0 => io.as_str().to_string(),
        _ => paths.into_iter().collect::<Vec<_>>().join(","),
    };
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
            insecure: spec.insecure,
            io: &io,
            tls: tls.is_some(),
            streams: spec.http2.then_some(spec.streams),
            cores: threads.min(allowed).max(1),
            window_opened_at: t0.map(|t0| t0 + spec.warmup),
        },
        &merged,
    ))
}

/// Sessions the TLS client keeps for resumption (per server name rustls keeps a few TLS 1.3
/// tickets and one TLS 1.2 session; a run talks to one server).
const TLS_SESSIONS: usize = 256;

/// Each worker's connections (spread evenly), open-model rate and phase, and CPU.
fn shares(spec: &LoadSpec, threads: usize) -> Vec<Share> {
    (0..threads)
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
        .collect()
}

/// Runs one thread per share, all starting at one t0 (the last to arrive at the barrier sets
/// it), and collects what each measured, with that t0.
fn run_workers(
    plan: &Plan<'_>,
    shares: &[Share],
    live: &Live,
    cancel: &AtomicBool,
) -> (Vec<std::io::Result<(ThreadStats, bool)>>, Option<Instant>) {
    let barrier = Barrier::new(shares.len());
    let t0 = OnceLock::new();
    let sync = || {
        if barrier.wait().is_leader() {
            let _ = t0.set(Instant::now());
        }
        barrier.wait();
        *t0.get().expect("t0 set by the leader")
    };
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .iter()
            .map(|share| {
                let sync = &sync;
                std::thread::Builder::new()
                    .name(format!("{}{}", crate::WORKER_THREAD_PREFIX, share.index))
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
    (results, t0.get().copied())
}
