//! `--stall-ms S --stall-every-ms P`: every worker freezes in the same wall-clock windows.

use std::time::{Duration, Instant};

/// Stall windows are `[k*P - S, k*P)` for k >= 1, counted from server start, so the server is
/// responsive right after start and every thread computes the same windows without talking.
pub(crate) struct Stall {
    start: Instant,
    stall: Duration,
    every: Duration,
}

impl Stall {
    pub(crate) fn new(start: Instant, stall: Duration, every: Duration) -> Self {
        Stall {
            start,
            stall,
            every,
        }
    }

    /// Time left in the current stall window, if `now` is inside one.
    pub(crate) fn remaining(&self, now: Instant) -> Option<Duration> {
        let elapsed = now.saturating_duration_since(self.start).as_nanos();
        let every = self.every.as_nanos();
        let phase = elapsed % every;
        let begin = every - self.stall.as_nanos();
        (phase >= begin).then(|| Duration::from_nanos((every - phase) as u64))
    }

    /// Blocks the calling event loop until the current stall window (if any) is over.
    pub(crate) fn wait(&self) {
        if let Some(left) = self.remaining(Instant::now()) {
            std::thread::sleep(left);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_end_each_period() {
        let t0 = Instant::now();
        let s = Stall::new(t0, Duration::from_millis(100), Duration::from_millis(1000));
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(s.remaining(at(0)), None);
        assert_eq!(s.remaining(at(899)), None);
        assert_eq!(s.remaining(at(900)), Some(Duration::from_millis(100)));
        assert_eq!(s.remaining(at(1950)), Some(Duration::from_millis(50)));
        assert_eq!(s.remaining(at(2000)), None);
    }
}
