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
use std::sync::{Barrier, Condvar, Mutex, OnceLock};
use std::time::Instant;

/// Runs the load described by `spec`; `cancel` (Ctrl-C) stops it early with what was measured.
pub fn run(spec: &LoadSpec, live: &Live, cancel: &AtomicBool) -> Result<LoadReport, LoadError> {
    let crate::check::Prepared {
        target,
        request,
        h2,
        mix,
    } = prepare(spec)?;
    // A mix's requests differ in length: they go out from each connection's own buffer, which
    // the io_uring path does not keep (`auto` takes epoll).
    let io_asked = match (&mix, spec.io) {
        (Some(_), crate::IoMode::Auto) => crate::IoMode::Epoll,
        (_, io) => io,
    };
    let io = crate::io::resolve(io_asked, target.tls, spec.http2)?;
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
    let (warm_end, end) = match spec.stages.is_empty() {
        true => {
            let w = spec.warmup.as_nanos() as u64;
            (w, w + spec.duration.as_nanos() as u64)
        }
        false => crate::stages::window(&spec.stages, spec.measure_stage, spec.warmup),
    };
    let segments = crate::stages::segments(&spec.stages, spec.warmup);
    let h2_reqs: Vec<crate::h2::H2Request> = match (&mix, &h2) {
        (Some(m), _) => m.h2.clone(),
        (None, Some(r)) => vec![r.clone()],
        (None, None) => Vec::new(),
    };
    let plan = Plan {
        addr,
        sources: &spec.source_addrs,
        request: &request,
        batch: &batch,
        pipeline: depth,
        // Methods are case-sensitive: only `HEAD` has HEAD's bodiless answers.
        head_request: spec.method == "HEAD" && mix.is_none(),
        warm_end,
        end,
        timeout_ns: spec.timeout.as_nanos() as u64,
        seconds: ((end - warm_end) as f64 / 1e9).ceil() as usize,
        tls: tls.as_ref(),
        tls_fresh: fresh.as_ref(),
        io_uring: io == crate::IoMode::IoUring,
        io_fallback: spec.io == crate::IoMode::Auto,
        h2: (!h2_reqs.is_empty()).then_some(h2_reqs.as_slice()),
        mix: mix.as_ref(),
        seed: spec.mix.as_ref().map_or(0, |m| m.seed),
        segments: &segments,
    };
    let shares = shares(spec, threads);
    live.set_phase(Phase::Starting);
    let workers = run_workers(&plan, &shares, live, cancel);
    live.set_phase(Phase::Done);
    let (results, t0) = workers?;

    let mut merged = ThreadStats::new(spec.open_model(), plan.seconds)
        .with_tls(tls.is_some())
        .with_h2(spec.http2)
        .with_requests(mix.as_ref().map_or(0, |m| m.names.len()));
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
            rate: match spec.stages.is_empty() {
                true => spec.rate,
                // The stages' mean over the window: what was offered in it, per second.
                false => Some(
                    crate::stages::due_between(&segments, warm_end, end)
                        / ((end - warm_end) as f64 / 1e9),
                ),
            },
            request_names: mix.as_ref().map(|m| m.names.as_slice()),
            cancelled,
            insecure: spec.insecure,
            io: &io,
            tls: tls.is_some(),
            streams: spec.http2.then_some(spec.streams),
            cores: threads.min(allowed).max(1),
            window_opened_at: t0.map(|t0| t0 + std::time::Duration::from_nanos(warm_end)),
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
                ramps: (!spec.stages.is_empty()).then(|| {
                    (
                        conns as f64 / spec.connections as f64,
                        i as f64 / threads as f64,
                    )
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

/// What each worker measured (and whether it ran on io_uring), with the t0 they started at.
type Workers = (Vec<std::io::Result<(ThreadStats, bool)>>, Option<Instant>);

/// Runs one thread per share, all starting at one t0 (the last to arrive at the barrier sets
/// it), and collects what each measured, with that t0. Every thread is started before any
/// begins: a thread that cannot be started (a process or memory limit) lets those already
/// started go home without work, instead of leaving them at a barrier that never fills.
fn run_workers(
    plan: &Plan<'_>,
    shares: &[Share],
    live: &Live,
    cancel: &AtomicBool,
) -> Result<Workers, LoadError> {
    let barrier = Barrier::new(shares.len());
    let t0 = OnceLock::new();
    let sync = || {
        if barrier.wait().is_leader() {
            let _ = t0.set(Instant::now());
        }
        barrier.wait();
        *t0.get().expect("t0 set by the leader")
    };
    let gate = Gate::default();
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(shares.len());
        let mut failed = None;
        for share in shares {
            let (sync, gate) = (&sync, &gate);
            let spawned = std::thread::Builder::new()
                .name(format!("{}{}", crate::WORKER_THREAD_PREFIX, share.index))
                .spawn_scoped(scope, move || {
                    if !gate.wait() {
                        return Err(std::io::Error::other("not started"));
                    }
                    worker::run(plan, share, sync, live, cancel)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    failed = Some(LoadError::Resources(format!(
                        "cannot start load thread {} of {}: {e} (a limit on processes, \
                         threads or memory; fewer threads, `-t`, need fewer)",
                        share.index + 1,
                        shares.len()
                    )));
                    break;
                }
            }
        }
        gate.open(failed.is_none());
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("worker thread panicked")))
            })
            .collect();
        match failed {
            Some(e) => Err(e),
            None => Ok((results, t0.get().copied())),
        }
    })
}

/// Holds the workers until every one of them is started, then lets them run or, when one
/// could not be started, sends them home.
#[derive(Default)]
struct Gate {
    open: Mutex<Option<bool>>,
    changed: Condvar,
}

impl Gate {
    /// Whether to run: blocks until [`Gate::open`].
    fn wait(&self) -> bool {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *open {
                return go;
            }
            open = self.changed.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self, go: bool) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = Some(go);
        self.changed.notify_all();
    }
}
