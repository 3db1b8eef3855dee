//! Per-thread tallies: each worker owns one (no sharing on the hot path); merged at the end.

use crate::report::ErrorCounts;
use hdrhistogram::Histogram;

/// Highest latency recorded, in µs (an hour); longer values saturate.
const MAX_US: u64 = 3_600_000_000;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 3).expect("valid histogram bounds")
}

/// Everything one worker measured.
pub struct ThreadStats {
    pub latency: Histogram<u64>,
    pub uncorrected: Option<Histogram<u64>>,
    pub status: Vec<u64>,
    pub requests: u64,
    pub bytes_read: u64,
    pub errors: ErrorCounts,
    pub timeline: Vec<(u64, u64)>,
    pub warmup_sent: u64,
    pub warmup_bytes: u64,
    pub in_flight_at_end: u64,
    pub in_flight_bytes: u64,
    pub abandoned: u64,
    pub waited: u64,
    pub max_lag_ns: u64,
    pub cpu_secs: f64,
    /// When the worker stopped measuring, in ns after the measured window opened.
    pub measured_ns: u64,
}

impl ThreadStats {
    pub fn new(open_model: bool, seconds: usize) -> Self {
        ThreadStats {
            latency: new_histogram(),
            uncorrected: open_model.then(new_histogram),
            status: vec![0; 1000],
            requests: 0,
            bytes_read: 0,
            errors: ErrorCounts::default(),
            timeline: vec![(0, 0); seconds.max(1)],
            warmup_sent: 0,
            warmup_bytes: 0,
            in_flight_at_end: 0,
            in_flight_bytes: 0,
            abandoned: 0,
            waited: 0,
            max_lag_ns: 0,
            cpu_secs: 0.0,
            measured_ns: 0,
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
        for (a, b) in self.timeline.iter_mut().zip(&o.timeline) {
            a.0 += b.0;
            a.1 += b.1;
        }
        self.warmup_sent += o.warmup_sent;
        self.warmup_bytes += o.warmup_bytes;
        self.in_flight_at_end += o.in_flight_at_end;
        self.in_flight_bytes += o.in_flight_bytes;
        self.abandoned += o.abandoned;
        self.waited += o.waited;
        self.max_lag_ns = self.max_lag_ns.max(o.max_lag_ns);
        self.cpu_secs += o.cpu_secs;
        self.measured_ns = self.measured_ns.max(o.measured_ns);
    }
}
