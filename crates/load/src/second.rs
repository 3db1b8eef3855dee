//! One second of the measured window as one worker saw it: responses, errors, and a coarse
//! latency histogram small enough to keep for every second and cheap enough to fill on every
//! response (a fixed array, no allocation; merged across workers at the end).

/// Sub-buckets per power of two: a latency is placed within an eighth of its octave, so a
/// percentile read back is never below the true one and at most 12.5% above it (and never
/// above the second's exact maximum, which is kept apart).
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Highest octave kept: latencies from 2^31 µs (about 36 minutes) up share the last bucket.
const TOP_BIT: u32 = 30;
/// Values below `SUB` µs have a bucket each; each octave above has `SUB`.
const BUCKETS: usize = (TOP_BIT as usize - SUB_BITS as usize + 2) * SUB;

/// Latencies (µs) of one second, on a log scale with exact count, sum and maximum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondLatency {
    count: u64,
    sum_us: u64,
    max_us: u64,
    buckets: [u32; BUCKETS],
}

impl Default for SecondLatency {
    fn default() -> Self {
        SecondLatency {
            count: 0,
            sum_us: 0,
            max_us: 0,
            buckets: [0; BUCKETS],
        }
    }
}

/// The bucket of `us`: exact below `SUB`, then `SUB` buckets per octave.
#[inline]
fn bucket(us: u64) -> usize {
    let us = us.min((1 << (TOP_BIT + 1)) - 1);
    if us < SUB as u64 {
        return us as usize;
    }
    let msb = 63 - us.leading_zeros();
    let sub = (us >> (msb - SUB_BITS)) as usize & (SUB - 1);
    (msb - SUB_BITS + 1) as usize * SUB + sub
}

/// The highest value bucket `i` holds.
fn bucket_top(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let octave = (i / SUB) as u32 - 1; // values of 2^(octave + SUB_BITS)..
    let sub = (i % SUB) as u64;
    (((SUB as u64 + sub) << octave) + (1 << octave)) - 1
}

impl SecondLatency {
    /// Adds `n` requests of `us` each.
    #[inline]
    pub fn record_n(&mut self, us: u64, n: u64) {
        self.count += n;
        self.sum_us = self.sum_us.saturating_add(us.saturating_mul(n));
        self.max_us = self.max_us.max(us);
        let b = &mut self.buckets[bucket(us)];
        *b = b.saturating_add(n.min(u32::MAX as u64) as u32);
    }

    pub fn merge(&mut self, o: &SecondLatency) {
        self.count += o.count;
        self.sum_us = self.sum_us.saturating_add(o.sum_us);
        self.max_us = self.max_us.max(o.max_us);
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            *a = a.saturating_add(*b);
        }
    }

    /// Exact mean, µs; `None` when nothing was recorded.
    pub fn mean_us(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_us as f64 / self.count as f64)
    }

    /// Exact maximum, µs.
    pub fn max_us(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max_us)
    }

    /// The `p`th percentile (nearest rank), µs: the top of the bucket holding it, capped at the
    /// exact maximum, so it is never below the true value.
    pub fn percentile_us(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((p / 100.0 * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank {
                return Some(bucket_top(i).min(self.max_us));
            }
        }
        Some(self.max_us)
    }
}

/// One second of one worker's window (merged: of the whole engine).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Second {
    /// Responses completed in it.
    pub responses: u64,
    /// Errors of any kind counted in it.
    pub errors: u64,
    /// Latency of every request of the window answered or given up in it (the population of the
    /// full-window histogram, second by second).
    pub latency: SecondLatency,
}

impl Second {
    pub fn merge(&mut self, o: &Second) {
        self.responses += o.responses;
        self.errors += o.errors;
        self.latency.merge(&o.latency);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order_within_an_eighth() {
        let mut last = 0;
        for us in (0..100_000u64).chain([1 << 20, (1 << 31) - 1, u64::MAX]) {
            let b = bucket(us);
            assert!(b >= last, "{us}");
            assert!(b < BUCKETS, "{us}");
            last = b;
            if us < 1 << 31 {
                let top = bucket_top(b);
                assert!(top >= us, "{us} in bucket {b} topping at {top}");
                assert!(top as f64 <= us as f64 * 1.125 + 1.0, "{us}: {top}");
                assert_eq!(bucket(top), b, "{us}");
            }
        }
    }

    #[test]
    fn percentiles_mean_and_max_against_a_sorted_list() {
        let mut s = SecondLatency::default();
        // 990 fast answers (1000..1990 µs) and 10 slow ones (50 ms)
        let mut all: Vec<u64> = (0..990).map(|i| 1000 + i).collect();
        all.extend([50_000; 10]);
        for &us in &all {
            s.record_n(us, 1);
        }
        all.sort_unstable();
        let exact_p99 = all[(0.99 * all.len() as f64).ceil() as usize - 1];
        let p99 = s.percentile_us(99.0).unwrap();
        assert!(
            p99 >= exact_p99 && p99 as f64 <= exact_p99 as f64 * 1.125,
            "{p99}"
        );
        assert_eq!(s.percentile_us(100.0), Some(50_000));
        let mean = all.iter().sum::<u64>() as f64 / all.len() as f64;
        assert_eq!(s.mean_us(), Some(mean));
        assert_eq!(s.max_us(), Some(50_000));
        // Merging two halves gives the same as recording all in one.
        let (mut a, mut b) = (SecondLatency::default(), SecondLatency::default());
        for (i, &us) in all.iter().enumerate() {
            if i % 2 == 0 { &mut a } else { &mut b }.record_n(us, 1);
        }
        a.merge(&b);
        assert_eq!(a, s);
        assert_eq!(SecondLatency::default().percentile_us(99.0), None);
    }
}
