//! The open-model schedule: request k of a worker is due at start + k / rate, whatever happened
//! to earlier requests, so a slow server cannot slow the offered load (no coordinated omission).
//!
//! Requests that are due but not yet sent are only a range of indices (`next..`), never a queue:
//! however far the client falls behind, the backlog costs no memory and is counted in O(1).

/// Largest request index the schedule counts to: far beyond any run, and safe from overflow.
const MAX_INDEX: u64 = u64::MAX / 4;

pub struct Schedule {
    shape: Shape,
    /// Index of the next request to send.
    pub next: u64,
    /// Requests before this index have already been counted as waiting for a connection.
    pub waited_upto: u64,
}

/// How the requests are spread over time.
enum Shape {
    /// One rate: request k at `start_ns + k * interval_ns`.
    Even { start_ns: f64, interval_ns: f64 },
    /// Stages: a rate that changes linearly within each segment, this worker's share of it.
    Ramps(Ramps),
}

impl Schedule {
    /// `rate` in requests per second for this worker; `start_ns` offsets it from other workers.
    pub fn new(rate: f64, start_ns: u64) -> Self {
        Schedule {
            shape: Shape::Even {
                start_ns: start_ns as f64,
                interval_ns: 1e9 / rate,
            },
            next: 0,
            waited_upto: 0,
        }
    }

    /// A schedule that follows `segments` (ns since t0), taking `share` of their requests;
    /// `offset` (0 to 1) shifts this worker's requests against the other workers'.
    pub fn ramps(segments: &[Segment], share: f64, offset: f64) -> Self {
        let mut at = 0.0;
        let segs = segments
            .iter()
            .map(|s| {
                let seg = (at, *s);
                at += s.requests();
                seg
            })
            .collect();
        Schedule {
            shape: Shape::Ramps(Ramps {
                segs,
                share,
                offset,
            }),
            next: 0,
            waited_upto: 0,
        }
    }

    /// Intended send time of request `k`, ns since t0 (`u64::MAX`: never, the stages end
    /// before it).
    #[inline]
    pub fn intended(&self, k: u64) -> u64 {
        match &self.shape {
            Shape::Even {
                start_ns,
                interval_ns,
            } => (start_ns + k as f64 * interval_ns) as u64,
            Shape::Ramps(r) => r.time_of((k as f64 + r.offset) / r.share),
        }
    }

    /// The float estimate of the index due at `t` (settled exactly by the caller).
    fn estimate(&self, t: u64) -> u64 {
        let k = match &self.shape {
            Shape::Even {
                start_ns,
                interval_ns,
            } => {
                let rel = t as f64 - start_ns;
                if rel <= 0.0 {
                    return 0;
                }
                (rel / interval_ns).floor()
            }
            Shape::Ramps(r) => (r.count_at(t as f64) * r.share - r.offset).floor(),
        };
        if k <= 0.0 || k.is_nan() {
            0
        } else {
            (k as u64).min(MAX_INDEX)
        }
    }

    /// Index of the first request due at or after `t` (requests before it are due before `t`).
    pub fn first_at(&self, t: u64) -> u64 {
        let mut k = self.estimate(t);
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

/// One stretch of the stages' rate: from `from` to `to` requests per second, linearly, over
/// `len_ns` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub from: f64,
    pub to: f64,
    pub len_ns: f64,
}

impl Segment {
    /// Requests due over the whole segment.
    pub fn requests(&self) -> f64 {
        (self.from + self.to) / 2.0 * self.len_ns / 1e9
    }

    /// Requests due in its first `tau` ns.
    fn requests_by(&self, tau: f64) -> f64 {
        let slope = (self.to - self.from) / self.len_ns;
        (self.from * tau + slope * tau * tau / 2.0) / 1e9
    }

    /// When, in ns after its start, `c` of its requests are due (`c` within the segment's).
    fn time_of(&self, c: f64) -> f64 {
        // from·τ + slope/2·τ² = c·1e9, solved in the form that stays exact when the slope is 0.
        let slope = (self.to - self.from) / self.len_ns;
        let c = c * 1e9;
        let disc = (self.from * self.from + 2.0 * slope * c).max(0.0);
        let tau = 2.0 * c / (self.from + disc.sqrt());
        if tau.is_finite() {
            tau.clamp(0.0, self.len_ns)
        } else {
            0.0
        }
    }
}

/// The stages as segments back to back from t0, each with the requests due before it.
struct Ramps {
    segs: Vec<(f64, Segment)>,
    share: f64,
    offset: f64,
}

impl Ramps {
    /// Requests due (over all workers) by `t` ns since t0.
    fn count_at(&self, t: f64) -> f64 {
        let mut start = 0.0;
        for (before, s) in &self.segs {
            if t < start + s.len_ns {
                return before + s.requests_by((t - start).max(0.0));
            }
            start += s.len_ns;
        }
        self.segs.last().map_or(0.0, |(b, s)| b + s.requests())
    }

    /// When the `c`-th request (over all workers, fractional) is due, ns since t0; `u64::MAX`
    /// past the last segment.
    fn time_of(&self, c: f64) -> u64 {
        let mut start = 0.0;
        for (before, s) in &self.segs {
            let n = s.requests();
            if c < before + n && n > 0.0 {
                return (start + s.time_of(c - before)) as u64;
            }
            start += s.len_ns;
        }
        u64::MAX
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
    fn ramps_follow_the_rate_and_end_with_the_stages() {
        // 100/s for 1 s, then 100 → 300/s over 1 s (200 requests): 300 in all.
        let segs = [
            Segment {
                from: 100.0,
                to: 100.0,
                len_ns: 1e9,
            },
            Segment {
                from: 100.0,
                to: 300.0,
                len_ns: 1e9,
            },
        ];
        let s = Schedule::ramps(&segs, 1.0, 0.0);
        assert_eq!(s.intended(0), 0);
        assert_eq!(s.intended(50), 500_000_000);
        assert_eq!(s.first_at(1_000_000_000), 100);
        assert_eq!(s.first_at(2_000_000_000), 300);
        assert_eq!(s.intended(300), u64::MAX, "no request after the last stage");
        // Half-way through the ramp the rate is 200/s: 150 requests are due by then.
        assert_eq!(s.first_at(1_500_000_000), 175);
        // Two workers with half each and opposite phases share the requests between them.
        let a = Schedule::ramps(&segs, 0.5, 0.0);
        let b = Schedule::ramps(&segs, 0.5, 0.5);
        let end = 2_000_000_000;
        assert_eq!(a.first_at(end) + b.first_at(end), 300);
        // A ramp down to nothing.
        let down = [Segment {
            from: 200.0,
            to: 0.0,
            len_ns: 1e9,
        }];
        let s = Schedule::ramps(&down, 1.0, 0.0);
        assert_eq!(s.first_at(2_000_000_000), 100);
        assert!(s.intended(99) < 1_000_000_000);
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
