//! Request counters: one block per worker thread (single writer, no contention), summed on read.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::Serialize;

use crate::http::Route;

/// What the server has seen so far, so tests and rigor can check exactly what reached the app
/// (for example, requests sent outside a measured window).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StatsSnapshot {
    /// Answered requests, excluding `/stats` and `/health` (so probes do not skew counts).
    pub requests: u64,
    /// Answered requests by path (query stripped), `/health` and `/stats` included;
    /// unknown paths are counted under `"other"`, malformed requests not at all.
    pub by_path: BTreeMap<String, u64>,
    /// Answered requests by status code (every answer, probes included; garbage answers excluded).
    pub status: BTreeMap<u16, u64>,
    /// Accepted connections since start.
    pub connections: u64,
    /// Bytes read from clients since start.
    pub bytes_received: u64,
    /// Bytes of answers queued for clients since start (every answer, probes included).
    pub bytes_sent: u64,
    /// Connections open now (accepted, not yet closed).
    pub open_connections: u64,
}

const CODES: usize = 1000;

/// Counters written by exactly one worker thread; aligned so workers never share a cache line.
#[repr(align(128))]
pub(crate) struct WorkerStats {
    requests: AtomicU64,
    connections: AtomicU64,
    bytes_received: AtomicU64,
    bytes_sent: AtomicU64,
    closed: AtomicU64,
    routes: [AtomicU64; Route::FIXED],
    status_paths: Box<[AtomicU64]>,
    status: Box<[AtomicU64]>,
}

/// Increment without a locked instruction: each counter has a single writer.
#[inline]
fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(by), Relaxed);
}

fn zeros(n: usize) -> Box<[AtomicU64]> {
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

impl WorkerStats {
    pub(crate) fn new() -> Self {
        WorkerStats {
            requests: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            bytes_received: AtomicU64::new(0),
            bytes_sent: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            routes: std::array::from_fn(|_| AtomicU64::new(0)),
            status_paths: zeros(CODES),
            status: zeros(CODES),
        }
    }

    pub(crate) fn connection(&self) {
        bump(&self.connections, 1);
    }

    pub(crate) fn received(&self, bytes: usize) {
        bump(&self.bytes_received, bytes as u64);
    }

    pub(crate) fn sent(&self, bytes: usize) {
        bump(&self.bytes_sent, bytes as u64);
    }

    pub(crate) fn closed(&self) {
        bump(&self.closed, 1);
    }

    /// Records one answer; `status` is `None` for answers that are not HTTP (garbage).
    pub(crate) fn answered(&self, route: Route, status: Option<u16>) {
        if route.counts_as_request() {
            bump(&self.requests, 1);
        }
        if let Route::Status(code) = route {
            bump(&self.status_paths[usize::from(code) % CODES], 1);
        } else if let Some(i) = route.fixed_index() {
            bump(&self.routes[i], 1);
        }
        if let Some(code) = status {
            bump(&self.status[usize::from(code) % CODES], 1);
        }
    }
}

/// Sums every worker's counters into one snapshot.
pub(crate) fn snapshot<'a>(workers: impl IntoIterator<Item = &'a WorkerStats>) -> StatsSnapshot {
    let mut snap = StatsSnapshot::default();
    let mut routes = [0u64; Route::FIXED];
    let mut status_paths = vec![0u64; CODES];
    let mut status = vec![0u64; CODES];
    let mut closed = 0u64;
    for w in workers {
        snap.bytes_sent += w.bytes_sent.load(Relaxed);
        closed += w.closed.load(Relaxed);
        snap.requests += w.requests.load(Relaxed);
        snap.connections += w.connections.load(Relaxed);
        snap.bytes_received += w.bytes_received.load(Relaxed);
        for (sum, c) in routes.iter_mut().zip(w.routes.iter()) {
            *sum += c.load(Relaxed);
        }
        for (sum, c) in status_paths.iter_mut().zip(w.status_paths.iter()) {
            *sum += c.load(Relaxed);
        }
        for (sum, c) in status.iter_mut().zip(w.status.iter()) {
            *sum += c.load(Relaxed);
        }
    }
    // Read after the accepts they close, so never more closes than accepts.
    snap.open_connections = snap.connections.saturating_sub(closed);
    for (i, &n) in routes.iter().enumerate() {
        if n > 0 {
            snap.by_path.insert(Route::fixed_name(i).to_string(), n);
        }
    }
    for (code, &n) in status_paths.iter().enumerate() {
        if n > 0 {
            snap.by_path.insert(format!("/status/{code}"), n);
        }
    }
    for (code, &n) in status.iter().enumerate() {
        if n > 0 {
            snap.status.insert(code as u16, n);
        }
    }
    snap
}
