//! The open-model schedule: request k of a worker is due at start + k / rate, whatever happened
//! to earlier requests, so a slow server cannot slow the offered load (no coordinated omission).
//!
//! Requests that are due but not yet sent are only a range of indices (`next..`), never a queue:
//! however far the client falls behind, the backlog costs no memory and is counted in O(1).

/// Largest request index the schedule counts to: far beyond any run, and safe from overflow.
const MAX_INDEX: u64 = u64::MAX / 4;

pub struct Schedule {
    start_ns: f64,
    interval_ns: f64,
    /// Index of the next request to send.
    pub next: u64,
    /// Requests before this index have already been counted as waiting for a connection.
    pub waited_upto: u64,
}

impl Schedule {
    /// `rate` in requests per second for this worker; `start_ns` offsets it from other workers.
    pub fn new(rate: f64, start_ns: u64) -> Self {
        Schedule {
            start_ns: start_ns as f64,
            interval_ns: 1e9 / rate,
            next: 0,
            waited_upto: 0,
        }
    }

    /// Intended send time of request `k`, ns since t0.
    #[inline]
    pub fn intended(&self, k: u64) -> u64 {
        (self.start_ns + k as f64 * self.interval_ns) as u64
    }

    /// Index of the first request due at or after `t` (requests before it are due before `t`).
    pub fn first_at(&self, t: u64) -> u64 {
        let rel = t as f64 - self.start_ns;
        if rel <= 0.0 {
            return 0;
        }
        let mut k = ((rel / self.interval_ns).floor() as u64).min(MAX_INDEX);
        // The float estimate can be off by a little either way; settle it exactly.
        while k > 0 && self.intended(k - 1) >= t {
            k -= 1;
        }
        while k < MAX_INDEX && self.intended(k) < t {
            k += 1;
        }
        k
    }

    /// Index of the last request due at `now` (None if none is due yet).
    pub fn last_due(&self, now: u64) -> Option<u64> {
        match self.first_at(now.saturating_add(1)) {
            0 => None,
            k => Some(k - 1),
        }
    }

    /// How many requests in `from..to` (indices) are due in `[lo, hi)` (ns).
    pub fn count_due_between(&self, from: u64, to: u64, lo: u64, hi: u64) -> u64 {
        let a = from.max(self.first_at(lo));
        let b = to.min(self.first_at(hi));
        b.saturating_sub(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spacing() {
        let s = Schedule::new(1000.0, 500);
        assert_eq!(s.intended(0), 500);
        assert_eq!(s.intended(3), 3_000_500);
        assert_eq!(s.last_due(499), None);
        assert_eq!(s.last_due(500), Some(0));
        assert_eq!(s.last_due(3_000_499), Some(2));
        assert_eq!(s.last_due(3_000_500), Some(3));
        assert_eq!(s.first_at(0), 0);
        assert_eq!(s.first_at(501), 1);
        assert_eq!(s.first_at(3_000_500), 3);
        assert_eq!(s.count_due_between(0, 100, 1_000_500, 3_000_500), 2);
        assert_eq!(s.count_due_between(2, 100, 1_000_500, 3_000_500), 1);
    }

    #[test]
    fn absurd_rates_are_counted_not_iterated() {
        // A trillion requests per second: ten seconds of schedule is 1e13 requests, counted in
        // constant time.
        let s = Schedule::new(1e12, 0);
        let ten_s = 10_000_000_000;
        let n = s.count_due_between(0, u64::MAX, 0, ten_s);
        assert!((n as f64 - 1e13).abs() < 1e13 * 1e-6, "{n}");
        assert_eq!(
            s.last_due(ten_s).map(|k| k + 1),
            Some(s.first_at(ten_s + 1))
        );
        // A year at that rate is more requests than a u64 counts: saturates, never overflows.
        let year = 365 * 24 * 3600 * 1_000_000_000u64;
        assert_eq!(s.first_at(year), MAX_INDEX);
        assert!(s.last_due(u64::MAX).is_some());
    }
}
