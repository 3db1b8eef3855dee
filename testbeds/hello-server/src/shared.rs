//! State every worker thread reads: configuration, canned answers, counters and knob state.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Instant;

use mio::Waker;

use crate::config::Config;
use crate::knobs::error_rate::ErrorRate;
use crate::knobs::hold::Hold;
use crate::knobs::stall::Stall;
use crate::response::Responses;
use crate::stats::{self, StatsSnapshot, WorkerStats};

pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) responses: Responses,
    pub(crate) started: Instant,
    /// One counter block per worker, indexed by worker id.
    pub(crate) stats: Box<[WorkerStats]>,
    /// One waker per worker, indexed by worker id: new connections and shutdown.
    pub(crate) wakers: Vec<Waker>,
    pub(crate) stop: AtomicBool,
    pub(crate) errors: ErrorRate,
    /// Answered requests server-wide; only kept up to date for `--exit-after-requests`.
    pub(crate) answered: AtomicU64,
    pub(crate) hold: Hold,
    pub(crate) stall: Option<Stall>,
}

impl Shared {
    pub(crate) fn new(config: Config, wakers: Vec<Waker>, started: Instant) -> Self {
        Shared {
            responses: Responses::new(&config),
            started,
            stats: (0..wakers.len()).map(|_| WorkerStats::new()).collect(),
            wakers,
            stop: AtomicBool::new(false),
            errors: ErrorRate::new(config.error_rate),
            answered: AtomicU64::new(0),
            hold: Hold::new(config.hold_mib, config.hold_after.clone()),
            stall: config.stall.map(|(s, every)| Stall::new(started, s, every)),
            config,
        }
    }

    /// Whether `/health` should say 200 yet.
    pub(crate) fn ready(&self) -> bool {
        !self.config.never_ready && self.started.elapsed() >= self.config.ready_after
    }

    pub(crate) fn snapshot(&self) -> StatsSnapshot {
        stats::snapshot(self.stats.iter())
    }
}
