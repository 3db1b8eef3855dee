//! The open-model schedule: request k of a worker is due at start + k / rate, whatever happened
//! to earlier requests, so a slow server cannot slow the offered load (no coordinated omission).

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

    /// Index of the last request due at `now` (None if none is due yet).
    pub fn last_due(&self, now: u64) -> Option<u64> {
        let t = now as f64 - self.start_ns;
        if t < 0.0 {
            return None;
        }
        let mut k = (t / self.interval_ns).floor() as u64;
        while k > 0 && self.intended(k) > now {
            k -= 1;
        }
        (self.intended(k) <= now).then_some(k)
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
    }
}
