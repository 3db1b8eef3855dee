//! Per-thread tallies: each worker owns one (no sharing on the hot path); merged at the end.

use crate::h2::H2Tally;
use crate::report::{ErrorCounts, ParseFailure};
use crate::second::Second;
use crate::tls::TlsTally;
use hdrhistogram::Histogram;

/// Highest latency recorded, in µs (an hour); longer values saturate.
pub(crate) const MAX_US: u64 = 3_600_000_000;

/// Distinct parse-failure reasons kept with an example; later reasons are still counted in
/// `errors.parse`, just not described.
pub const MAX_PARSE_REASONS: usize = 8;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 3).expect("valid histogram bounds")
}

/// What one request of a mix measured in the window.
#[derive(Clone)]
pub struct RequestStats {
    /// Answered requests (any status).
    pub requests: u64,
    /// Answers by status, in the order first seen (a request sees few).
    pub status: Vec<(u16, u64)>,
    /// Latency of its answers and of its requests given up (µs), as the run's own histogram.
    pub latency: Histogram<u64>,
    /// Its requests that got no answer: timed out, lost with their connection, reset or
    /// refused, or whose exchange failed.
    pub errors: u64,
}

impl RequestStats {
    fn new() -> Self {
        RequestStats {
            requests: 0,
            status: Vec::new(),
            latency: new_histogram(),
            errors: 0,
        }
    }

    /// One answer with `status` after `latency_us`.
    #[inline]
    pub fn record(&mut self, status: u16, latency_us: u64) {
        self.requests += 1;
        self.latency.saturating_record(latency_us);
        match self.status.iter_mut().find(|(c, _)| *c == status) {
            Some((_, n)) => *n += 1,
            None => self.status.push((status, 1)),
        }
    }

    /// Adds another worker's figures.
    pub fn merge(&mut self, o: &RequestStats) {
        self.requests += o.requests;
        self.errors += o.errors;
        self.latency.add(&o.latency).expect("same histogram bounds");
        for &(code, n) in &o.status {
            match self.status.iter_mut().find(|(c, _)| *c == code) {
                Some((_, m)) => *m += n,
                None => self.status.push((code, n)),
            }
        }
    }
}

/// Everything one worker measured.
pub struct ThreadStats {
    pub latency: Histogram<u64>,
    pub uncorrected: Option<Histogram<u64>>,
    pub status: Vec<u64>,
    pub requests: u64,
    pub bytes_read: u64,
    pub errors: ErrorCounts,
    /// Why responses failed to parse, counted by reason (at most [`MAX_PARSE_REASONS`]).
    pub parse_failures: Vec<ParseFailure>,
    /// Responses, errors and latency per second of the window; grows as seconds pass, never
    /// past `timeline_cap`, so a long duration costs nothing up front.
    pub timeline: Vec<Second>,
    timeline_cap: usize,
    /// Warmup requests answered (any status): those the application received.
    pub warmup_answered: u64,
    pub warmup_bytes: u64,
    pub in_flight_at_end: u64,
    pub in_flight_bytes: u64,
    pub abandoned: u64,
    pub waited: u64,
    /// Open model: requests due in the window that never got a connection within the timeout.
    pub not_sent: u64,
    pub max_lag_ns: u64,
    pub cpu_secs: f64,
    /// When the worker stopped measuring, in ns after the measured window opened.
    pub measured_ns: u64,
    /// Cancelled after the window closed, while its last requests were awaited.
    pub drain_cut: bool,
    /// https:// only: the handshakes.
    pub tls: Option<TlsTally>,
    /// HTTP/2 only: limits, goodbyes and resets.
    pub h2: Option<H2Tally>,
    /// A request mix: each request's own figures, in the mix's order.
    pub requests_of: Vec<RequestStats>,
}

impl ThreadStats {
    /// `seconds`: length of the window, the most timeline entries there can be.
    pub fn new(open_model: bool, seconds: usize) -> Self {
        ThreadStats {
            latency: new_histogram(),
            uncorrected: open_model.then(new_histogram),
            status: vec![0; 1000],
            requests: 0,
            bytes_read: 0,
            errors: ErrorCounts::default(),
            parse_failures: Vec::new(),
            timeline: Vec::new(),
            timeline_cap: seconds.max(1),
            warmup_answered: 0,
            warmup_bytes: 0,
            in_flight_at_end: 0,
            in_flight_bytes: 0,
            abandoned: 0,
            waited: 0,
            not_sent: 0,
            max_lag_ns: 0,
            cpu_secs: 0.0,
            measured_ns: 0,
            drain_cut: false,
            tls: None,
            h2: None,
            requests_of: Vec::new(),
        }
    }

    /// These tallies with a section for each of a mix's `n` requests.
    pub fn with_requests(mut self, n: usize) -> Self {
        self.requests_of = (0..n).map(|_| RequestStats::new()).collect();
        self
    }

    /// These tallies with an HTTP/2 section (HTTP/2 runs).
    pub fn with_h2(mut self, h2: bool) -> Self {
        self.h2 = h2.then(H2Tally::default);
        self
    }

    /// These tallies with a TLS section (https:// runs).
    pub fn with_tls(mut self, tls: bool) -> Self {
        self.tls = tls.then(TlsTally::new);
        self
    }

    /// Second `sec` of the window (later seconds are the last: the window's requests answered
    /// after it closed count in its last second).
    #[inline]
    pub fn second(&mut self, sec: usize) -> &mut Second {
        let sec = sec.min(self.timeline_cap - 1);
        if self.timeline.len() <= sec {
            self.timeline.resize(sec + 1, Second::default());
        }
        &mut self.timeline[sec]
    }

    /// Adds errors to second `sec` of the window.
    pub fn tick_errors(&mut self, sec: usize, errors: u64) {
        self.second(sec).errors += errors;
    }

    /// Counts one parse failure under `reason`, keeping `example` for the first of each reason.
    pub fn parse_failure(&mut self, reason: &'static str, example: impl FnOnce() -> String) {
        if let Some(f) = self.parse_failures.iter_mut().find(|f| f.reason == reason) {
            f.count += 1;
        } else if self.parse_failures.len() < MAX_PARSE_REASONS {
            self.parse_failures.push(ParseFailure {
                reason: reason.into(),
                count: 1,
                example: example(),
            });
        }
    }

    pub fn merge(&mut self, o: &ThreadStats) {
        self.latency.add(&o.latency).expect("same histogram bounds");
        if let (Some(a), Some(b)) = (self.uncorrected.as_mut(), o.uncorrected.as_ref()) {
            a.add(b).expect("same histogram bounds");
        }
        for (a, b) in self.status.iter_mut().zip(&o.status) {
            *a += b;
        }
        self.requests += o.requests;
        self.bytes_read += o.bytes_read;
        self.errors.connect += o.errors.connect;
        self.errors.read += o.errors.read;
        self.errors.write += o.errors.write;
        self.errors.timeout += o.errors.timeout;
        self.errors.parse += o.errors.parse;
        self.errors.closed += o.errors.closed;
        self.errors.tls += o.errors.tls;
        self.errors.reset += o.errors.reset;
        self.errors.goaway += o.errors.goaway;
        match (self.h2.as_mut(), o.h2.as_ref()) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.h2 = Some(b.clone()),
            _ => {}
        }
        match (self.tls.as_mut(), o.tls.as_ref()) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => {
                let mut t = TlsTally::new();
                t.merge(b);
                self.tls = Some(t);
            }
            _ => {}
        }
        for f in &o.parse_failures {
            let kept = self.parse_failures.len();
            match self
                .parse_failures
                .iter_mut()
                .find(|m| m.reason == f.reason)
            {
                Some(m) => m.count += f.count,
                None if kept < MAX_PARSE_REASONS => self.parse_failures.push(f.clone()),
                None => {}
            }
        }
        for (sec, second) in o.timeline.iter().enumerate() {
            self.second(sec).merge(second);
        }
        self.warmup_answered += o.warmup_answered;
        self.warmup_bytes += o.warmup_bytes;
        self.in_flight_at_end += o.in_flight_at_end;
        self.in_flight_bytes += o.in_flight_bytes;
        self.abandoned += o.abandoned;
        self.waited += o.waited;
        self.not_sent += o.not_sent;
        self.max_lag_ns = self.max_lag_ns.max(o.max_lag_ns);
        self.cpu_secs += o.cpu_secs;
        self.measured_ns = self.measured_ns.max(o.measured_ns);
        self.drain_cut |= o.drain_cut;
        for (a, b) in self.requests_of.iter_mut().zip(&o.requests_of) {
            a.merge(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_grows_lazily_and_is_capped() {
        // A window of a million hours costs nothing until its seconds are used.
        let mut s = ThreadStats::new(false, 3_600_000_000);
        assert!(s.timeline.capacity() < 1024);
        s.second(2).responses += 1;
        let counts = |s: &ThreadStats| -> Vec<(u64, u64)> {
            s.timeline.iter().map(|t| (t.responses, t.errors)).collect()
        };
        assert_eq!(counts(&s), vec![(0, 0), (0, 0), (1, 0)]);
        let mut short = ThreadStats::new(false, 2);
        short.tick_errors(99, 1);
        assert_eq!(counts(&short), vec![(0, 0), (0, 1)]);
    }
}
