//! The live view of a running load, shared by `rigor load` and `rigor run`: which phase the
//! engine is in, by the name people see, and the requests per second over the last half second,
//! read from the engine's live counters while it runs.

use rigor_load::{Live, Phase};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long the live rate averages over.
const WINDOW: Duration = Duration::from_millis(500);

/// The engine's phase as progress names it.
pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Starting => "connecting",
        Phase::Warmup => "warmup",
        Phase::Measuring => "measuring",
        Phase::Done => "finishing",
    }
}

/// One look at the running load.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub phase: Phase,
    /// Since [`watch`] began.
    pub elapsed: Duration,
    /// Completed requests per second over the last window (0 until the first window ends).
    pub rps: f64,
}

impl Reading {
    /// The phase's name ([`phase_name`]).
    pub fn phase_name(&self) -> &'static str {
        phase_name(self.phase)
    }
}

/// Calls `tick` with a fresh reading every `every` until `finished` says the engine is done.
pub fn watch(
    live: &Live,
    every: Duration,
    finished: impl Fn() -> bool,
    mut tick: impl FnMut(Reading),
) {
    let started = Instant::now();
    let mut last = (Instant::now(), 0u64);
    let mut rps = 0.0;
    while !finished() {
        let done = live.completed.load(Ordering::Relaxed);
        if last.0.elapsed() >= WINDOW {
            rps = done.saturating_sub(last.1) as f64 / last.0.elapsed().as_secs_f64();
            last = (Instant::now(), done);
        }
        tick(Reading {
            phase: live.phase(),
            elapsed: started.elapsed(),
            rps,
        });
        std::thread::sleep(every);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn phases_have_the_names_progress_shows() {
        let names: Vec<&str> = [
            Phase::Starting,
            Phase::Warmup,
            Phase::Measuring,
            Phase::Done,
        ]
        .into_iter()
        .map(phase_name)
        .collect();
        assert_eq!(names, ["connecting", "warmup", "measuring", "finishing"]);
    }

    #[test]
    fn ticks_until_finished_and_rates_the_last_window() {
        let live = Live::default();
        let ticks = Cell::new(0u32);
        let mut last = None;
        watch(
            &live,
            Duration::from_millis(50),
            || ticks.get() >= 14,
            |r| {
                ticks.set(ticks.get() + 1);
                live.completed.fetch_add(100, Ordering::Relaxed);
                last = Some(r);
            },
        );
        assert_eq!(ticks.get(), 14);
        let r = last.expect("a reading");
        assert_eq!(r.phase_name(), "connecting");
        // 100 requests per 50 ms tick: about 2000 per second once a window has passed (less when
        // a busy machine stretches the sleeps).
        assert!((400.0..2600.0).contains(&r.rps), "{}", r.rps);
        assert!(r.elapsed >= Duration::from_millis(600), "{:?}", r.elapsed);
    }
}
