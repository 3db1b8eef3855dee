//! Stages of the open model: the offered rate over time as k6's ramping arrival rate draws it
//! (each stage moves linearly from the rate before it to its own), and the measured window
//! they leave (all of them, or one).

use crate::schedule::Segment;
use crate::LoadError;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One stage: the rate reached at its end, and how long it takes. The first stage holds its
/// rate; each later one ramps linearly from the previous stage's rate to its own.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// Requests per second at the end of the stage (0 allowed: a ramp down to nothing).
    pub rate: f64,
    pub duration: Duration,
}

/// Most stages a run may have.
pub const MAX_STAGES: usize = 1000;

/// Checks stages and the stage to measure: rates in range, durations above zero, at least one
/// request due, the measured stage one of them.
pub(crate) fn validate(
    stages: &[Stage],
    measure: Option<usize>,
    rate: Option<f64>,
) -> Result<(), LoadError> {
    let bad = |m: String| Err(LoadError::InvalidSpec(m));
    if stages.is_empty() {
        return match measure {
            Some(n) => bad(format!(
                "stage {} is measured but there are no stages",
                n + 1
            )),
            None => Ok(()),
        };
    }
    if rate.is_some() {
        return bad("a rate and stages both set the offered rate: give one".into());
    }
    if stages.len() > MAX_STAGES {
        return bad(format!("at most {MAX_STAGES} stages, got {}", stages.len()));
    }
    let mut total = Duration::ZERO;
    for (i, s) in stages.iter().enumerate() {
        if !(s.rate.is_finite() && (0.0..=crate::MAX_RATE).contains(&s.rate)) {
            return bad(format!(
                "stage {}: rate must be between 0 and {:e} requests per second, got {}",
                i + 1,
                crate::MAX_RATE,
                s.rate
            ));
        }
        if s.duration.is_zero() {
            return bad(format!(
                "stage {}: its duration must be more than zero",
                i + 1
            ));
        }
        total = total.saturating_add(s.duration);
    }
    if total > crate::MAX_DURATION {
        return bad(format!(
            "the stages last {total:?}, more than the longest window (365 days)"
        ));
    }
    if let Some(n) = measure {
        if n >= stages.len() {
            return bad(format!(
                "stage {} is measured but there are only {} stages",
                n + 1,
                stages.len()
            ));
        }
    }
    let (lo, hi) = window(stages, measure, Duration::ZERO);
    let due = due_between(&segments(stages, Duration::ZERO), lo, hi);
    if due < 1.0 {
        return bad(format!(
            "the measured stages offer {due:.2} requests: raise their rates or durations"
        ));
    }
    Ok(())
}

/// The rate from t0: the warmup at the first stage's rate, then each stage.
pub(crate) fn segments(stages: &[Stage], warmup: Duration) -> Vec<Segment> {
    let mut out = Vec::with_capacity(stages.len() + 1);
    let Some(first) = stages.first() else {
        return out;
    };
    if !warmup.is_zero() {
        out.push(Segment {
            from: first.rate,
            to: first.rate,
            len_ns: warmup.as_nanos() as f64,
        });
    }
    let mut before = first.rate;
    for s in stages {
        out.push(Segment {
            from: before,
            to: s.rate,
            len_ns: s.duration.as_nanos() as f64,
        });
        before = s.rate;
    }
    out
}

/// The measured window, ns since t0: every stage after the warmup, or stage `measure` alone.
pub(crate) fn window(stages: &[Stage], measure: Option<usize>, warmup: Duration) -> (u64, u64) {
    let start = |n: usize| -> Duration { stages[..n].iter().map(|s| s.duration).sum() };
    // A stage that does not exist is refused by `validate`; until then, all of them.
    let (from, to) = match measure.filter(|&n| n < stages.len()) {
        Some(n) => (start(n), start(n + 1)),
        None => (Duration::ZERO, start(stages.len())),
    };
    (
        (warmup + from).as_nanos() as u64,
        (warmup + to).as_nanos() as u64,
    )
}

/// Requests due (all workers) between `lo` and `hi` ns since t0.
pub(crate) fn due_between(segments: &[Segment], lo: u64, hi: u64) -> f64 {
    let s = crate::schedule::Schedule::ramps(segments, 1.0, 0.0);
    s.first_at(hi).saturating_sub(s.first_at(lo)) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(rate: f64, secs: u64) -> Stage {
        Stage {
            rate,
            duration: Duration::from_secs(secs),
        }
    }

    #[test]
    fn the_window_is_the_stages_or_one_of_them() {
        let stages = [st(100.0, 2), st(300.0, 4), st(300.0, 1)];
        let w = Duration::from_secs(1);
        assert_eq!(window(&stages, None, w), (1_000_000_000, 8_000_000_000));
        assert_eq!(window(&stages, Some(1), w), (3_000_000_000, 7_000_000_000));
        let segs = segments(&stages, w);
        assert_eq!(segs.len(), 4);
        // warmup 100, stage 1 200, the ramp (100+300)/2·4 = 800, the hold 300.
        assert_eq!(due_between(&segs, 0, u64::MAX), 1400.0);
        assert_eq!(due_between(&segs, 3_000_000_000, 7_000_000_000), 800.0);
    }

    #[test]
    fn bad_stages_are_refused_by_name() {
        let e = |stages: &[Stage], m, r| validate(stages, m, r).unwrap_err().to_string();
        assert!(e(&[st(1.0, 1)], None, Some(5.0)).contains("give one"));
        assert!(e(&[st(-1.0, 1)], None, None).contains("stage 1: rate"));
        assert!(e(&[st(1.0, 1), st(1.0, 0)], None, None).contains("stage 2: its duration"));
        assert!(e(&[st(1.0, 1)], Some(1), None).contains("only 1 stages"));
        assert!(e(&[st(0.0, 1)], None, None).contains("0.00 requests"));
        assert!(e(&[], Some(0), None).contains("no stages"));
        assert!(validate(&[st(0.0, 1), st(10.0, 1)], Some(1), None).is_ok());
    }
}
