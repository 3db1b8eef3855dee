//! `run`: validates the spec, checks the target answers a connect, splits the connections over
//! worker threads, starts them at one t0 and merges what they measured.

use crate::report::{LoadReport, ReportInput};
use crate::stats::ThreadStats;
use crate::worker::{self, Plan, Share};
use crate::{cpu, request, url, Live, LoadError, LoadSpec, Phase};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

fn validate(spec: &LoadSpec) -> Result<(), LoadError> {
    let bad = |m: &str| Err(LoadError::InvalidSpec(m.to_string()));
    if spec.connections == 0 {
        return bad("connections must be at least 1");
    }
    if spec.threads == 0 {
        return bad("threads must be at least 1");
    }
    if spec.pipeline == 0 {
        return bad("pipeline must be at least 1");
    }
    if spec.duration.is_zero() {
        return bad("duration must be more than zero");
    }
    if spec.timeout.is_zero() {
        return bad("timeout must be more than zero");
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
        if !(r.is_finite() && r > 0.0) {
            return bad("rate must be a positive number of requests per second");
        }
    }
    Ok(())
}

/// Connects once, blocking, to find an address that answers (and fail clearly if none does).
fn preflight(url: &str, addrs: &[SocketAddr], timeout: Duration) -> Result<SocketAddr, LoadError> {
    let mut last = None;
    for &addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(_) => return Ok(addr),
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

/// Runs the load described by `spec`; `cancel` (Ctrl-C) stops it early with what was measured.
pub fn run(spec: &LoadSpec, live: &Live, cancel: &AtomicBool) -> Result<LoadReport, LoadError> {
    validate(spec)?;
    let target = url::parse(&spec.url)?;
    let request = request::serialize(
        &target,
        &spec.method,
        &spec.headers,
        spec.body.as_deref(),
        false,
    )?;
    let threads = spec.threads.min(spec.connections);
    cpu::ensure_fd_limit((spec.connections + 16 * threads + 64) as u64)
        .map_err(LoadError::Resources)?;
    let addr = preflight(&spec.url, &target.addrs, spec.timeout)?;
    let batch = request.repeat(spec.pipeline);
    let warm_end = spec.warmup.as_nanos() as u64;
    let plan = Plan {
        addr,
        request: &request,
        batch: &batch,
        pipeline: spec.pipeline,
        head_request: spec.method.eq_ignore_ascii_case("HEAD"),
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
    let cancelled = cancel.load(std::sync::atomic::Ordering::Relaxed);
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
