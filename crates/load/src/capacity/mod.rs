//! The rate a service holds: the highest open-model rate whose measured window meets a
//! latency/error objective, found by probing the engine at rising then bisected rates. The
//! search itself ([`search`]) is pure logic over `probe(rate) -> window`; [`find_rate`] runs
//! it with the engine.

mod objective;
mod search;
#[cfg(test)]
mod search_tests;

pub use objective::{Bound, Figure, Objective, ObjectiveError, Window};
pub use search::{search, Capacity, Outcome, ProbeRow, SearchSettings, Stopped};

use crate::{LoadError, LoadReport, LoadSpec};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The first rate probed when none is given, requests per second.
pub const DEFAULT_START: f64 = 100.0;
/// The highest rate probed when none is given.
pub const DEFAULT_MAX: f64 = 100_000.0;
/// The answer's precision when none is given: the lowest rate missed within 5% of the highest met.
pub const DEFAULT_PRECISION: f64 = 0.05;
/// The shortest measured window of a probe under the default rule.
pub const MIN_PROBE: Duration = Duration::from_secs(3);
/// The longest measured window the default rule gives a probe.
pub const MAX_AUTO_PROBE: Duration = Duration::from_secs(60);
/// The shortest warmup before each probe: long enough for its connections to open and a
/// previous probe's backlog to drain.
pub const MIN_PROBE_WARMUP: Duration = Duration::from_secs(1);
/// Probes each end of the final interval gets (majority decides when they disagree).
pub const CONFIRM: usize = 2;
/// The most probes one search makes.
pub const MAX_PROBES: usize = 40;
/// The fewest requests a probe's measured window is due to send: below that a window's
/// percentiles are one or two requests' latency, and a rate of 0.05 req/s over 3 s sends none.
/// The search probes no rate below `MIN_PROBE_REQUESTS / probe seconds`.
pub const MIN_PROBE_REQUESTS: f64 = 10.0;

/// What to search for and within what: the objective, the rates, the precision, the probes.
#[derive(Debug, Clone, PartialEq)]
pub struct FindRate {
    pub objective: Objective,
    pub start: f64,
    pub max: f64,
    pub precision: f64,
    /// Each probe's measured window; `None`: the rule of [`FindRate::probe_duration`].
    pub probe: Option<Duration>,
}

/// Why a search's settings cannot be used; the message names the setting and its value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FindRateError {
    #[error("max {max} rps is below the start rate {start} rps: the search probes upward from start to max")]
    MaxBelowStart { start: f64, max: f64 },
    #[error("{what} {value} rps is outside {min}..={max}")]
    RateOutOfRange {
        what: &'static str,
        value: f64,
        min: f64,
        max: f64,
    },
    #[error(
        "precision {0} is outside (0, 0.5]: write e.g. 0.05 (or \"5%\") for an answer within 5%"
    )]
    Precision(f64),
    #[error("precision `{0}` is not a number: write e.g. 5% or 0.05")]
    PrecisionText(String),
    #[error("a probe of {0:?} measures nothing: give each probe at least 100ms (3s or more fills a service's queues)")]
    ProbeTooShort(Duration),
    #[error(
        "start {start} rps sends fewer than {MIN_PROBE_REQUESTS} requests in a probe of {probe_secs}s: \
         start at {floor} rps or more, or lengthen the probe"
    )]
    StartBelowFloor {
        start: f64,
        floor: f64,
        probe_secs: f64,
    },
}

/// A precision as written, `5%` or `0.05`, as a fraction (checked by [`FindRate::check`]).
pub fn parse_precision(text: &str) -> Result<f64, FindRateError> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (t, 1.0),
    };
    number
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .map(|n| n / scale)
        .ok_or_else(|| FindRateError::PrecisionText(text.into()))
}

impl FindRate {
    /// The defaults around `objective`: from 100 to 100000 rps, within 5%, probes by the rule.
    pub fn new(objective: Objective) -> FindRate {
        FindRate {
            objective,
            start: DEFAULT_START,
            max: DEFAULT_MAX,
            precision: DEFAULT_PRECISION,
            probe: None,
        }
    }

    /// Checks the settings before anything is loaded.
    pub fn check(&self) -> Result<(), FindRateError> {
        for (what, value) in [("start", self.start), ("max", self.max)] {
            if !(crate::MIN_RATE..=crate::MAX_RATE).contains(&value) {
                return Err(FindRateError::RateOutOfRange {
                    what,
                    value,
                    min: crate::MIN_RATE,
                    max: crate::MAX_RATE,
                });
            }
        }
        if self.max < self.start {
            return Err(FindRateError::MaxBelowStart {
                start: self.start,
                max: self.max,
            });
        }
        if !(self.precision > 0.0 && self.precision <= 0.5) {
            return Err(FindRateError::Precision(self.precision));
        }
        if let Some(p) = self.probe.filter(|p| *p < Duration::from_millis(100)) {
            return Err(FindRateError::ProbeTooShort(p));
        }
        let floor = self.min_rate();
        if self.start < floor {
            return Err(FindRateError::StartBelowFloor {
                start: self.start,
                floor,
                probe_secs: self.probe_duration().as_secs_f64(),
            });
        }
        Ok(())
    }

    /// Each probe's measured window. Unless given, long enough that a rate `precision` above
    /// what the service holds builds a queue whose wait passes the objective's latency limit
    /// L within the first half of the window: a queue fed a fraction f faster than it drains
    /// adds f·t of wait after t, so the window is 2·L/precision, at least 3 s, at most 60 s.
    pub fn probe_duration(&self) -> Duration {
        if let Some(p) = self.probe {
            return p;
        }
        // Clamped as seconds before becoming a Duration: a tiny precision or a huge limit
        // gives more seconds than a Duration holds.
        let by_queue = self
            .objective
            .latency_limit_ms()
            .map(|l| 2.0 * l / 1000.0 / self.precision)
            .filter(|secs| !secs.is_nan())
            .unwrap_or(0.0);
        Duration::from_secs_f64(
            by_queue.clamp(MIN_PROBE.as_secs_f64(), MAX_AUTO_PROBE.as_secs_f64()),
        )
    }

    /// The warmup before each probe: the job's own, at least [`MIN_PROBE_WARMUP`].
    pub fn probe_warmup(&self, spec: &LoadSpec) -> Duration {
        spec.warmup.max(MIN_PROBE_WARMUP)
    }

    /// The lowest rate the search probes: one whose window is due at least
    /// [`MIN_PROBE_REQUESTS`] requests, and no lower than 1/1024 of the start; rounded up to
    /// a rate the search writes (whole from 100 up, else two decimals).
    pub fn min_rate(&self) -> f64 {
        let by_requests = MIN_PROBE_REQUESTS / self.probe_duration().as_secs_f64();
        let floor = by_requests.max(self.start / 1024.0).max(crate::MIN_RATE);
        if floor >= 100.0 {
            floor.ceil()
        } else {
            (floor * 100.0).ceil() / 100.0
        }
    }

    /// The search's settings.
    pub fn settings(&self) -> SearchSettings {
        SearchSettings {
            start: self.start,
            max: self.max,
            precision: self.precision,
            confirm: CONFIRM,
            max_probes: MAX_PROBES,
            min_rate: self.min_rate(),
        }
    }

    /// The engine's job for one probe at `rate`: the job's own, at that rate, for one probe.
    pub fn probe_spec(&self, spec: &LoadSpec, rate: f64) -> LoadSpec {
        LoadSpec {
            rate: Some(rate),
            duration: self.probe_duration(),
            warmup: self.probe_warmup(spec),
            ..spec.clone()
        }
    }
}

/// What [`find_rate`] found: the answer, and the engine's report of the last probe at the
/// rate found (`None` when no rate met the objective).
#[derive(Debug)]
pub struct Found {
    pub capacity: Capacity,
    pub at_capacity: Option<LoadReport>,
}

/// Searches with the engine: each probe is a run of `spec` at the probe's rate (see
/// [`FindRate::probe_spec`]), started after as long a quiet spell as the previous probe's
/// slowest request waited (at most the timeout: the queue it may have left), `seen` hears of each probe when it ends. A probe cut short by
/// `stop` ends the search with [`LoadError::Interrupted`] and the probes made so far.
pub fn find_rate(
    spec: &LoadSpec,
    find: &FindRate,
    live: &crate::Live,
    stop: &AtomicBool,
    mut seen: impl FnMut(&ProbeRow),
) -> Result<Found, Stopped<LoadError>> {
    let mut reports: Vec<(f64, LoadReport)> = Vec::new();
    let mut backlog = Duration::ZERO;
    let probe_secs = find.probe_duration().as_secs_f64();
    let warmup_secs = find.probe_warmup(spec).as_secs_f64();
    let capacity = search(
        &find.objective,
        &find.settings(),
        probe_secs,
        warmup_secs,
        |rate| {
            quiet(backlog, stop);
            let report = crate::run(&find.probe_spec(spec, rate), live, stop)?;
            backlog = drain_time(&report, spec.timeout);
            if report.cancelled {
                return Err(LoadError::Interrupted);
            }
            let window = Window::from_report(&report);
            reports.retain(|(r, _)| *r != rate);
            reports.push((rate, report));
            Ok(window)
        },
        &mut seen,
    )?;
    let at_capacity = capacity
        .capacity_rps
        .and_then(|c| reports.into_iter().find(|(r, _)| *r == c))
        .map(|(_, report)| report);
    Ok(Found {
        capacity,
        at_capacity,
    })
}

/// How long the service may still be working off what a probe left queued: its slowest
/// request's wait (the queue's length in time when the window closed), at most the timeout.
fn drain_time(report: &LoadReport, timeout: Duration) -> Duration {
    Duration::from_secs_f64(report.latency.max_ms.max(0.0) / 1000.0).min(timeout)
}

/// Sends nothing for `d` (or until `stop`), so the next probe does not start on the previous
/// one's queue.
fn quiet(d: Duration, stop: &AtomicBool) {
    let until = std::time::Instant::now() + d;
    while std::time::Instant::now() < until && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
}
