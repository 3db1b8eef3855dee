//! `--error-rate F`: a deterministic, server-wide share of 500 answers.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The n-th eligible request fails when `floor(n*F) > floor((n-1)*F)`, so after n requests
/// exactly `floor(n*F)` have failed: tests can assert counts, not ranges.
pub(crate) struct ErrorRate {
    rate: f64,
    seen: AtomicU64,
}

impl ErrorRate {
    pub(crate) fn new(rate: f64) -> Self {
        ErrorRate {
            rate,
            seen: AtomicU64::new(0),
        }
    }

    /// Whether the next eligible request should fail. Touches the shared counter only when the
    /// knob is on, so the default server has no cross-thread traffic here.
    #[inline]
    pub(crate) fn next_is_error(&self) -> bool {
        if self.rate <= 0.0 {
            return false;
        }
        let n = self.seen.fetch_add(1, Relaxed) + 1;
        (n as f64 * self.rate).floor() > ((n - 1) as f64 * self.rate).floor()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_share() {
        for rate in [0.0, 0.1, 0.25, 0.333, 1.0] {
            let e = ErrorRate::new(rate);
            let errors = (0..1000).filter(|_| e.next_is_error()).count() as u64;
            assert_eq!(errors, (1000.0 * rate).floor() as u64, "rate {rate}");
        }
    }
}
