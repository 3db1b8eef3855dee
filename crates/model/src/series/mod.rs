//! Building an iteration's [`Series`](crate::result::Series): the application's samples and the
//! load's seconds put on one clock (ms since the process was spawned), rounded to what the
//! readings can tell apart so a long run stays a few kilobytes.

mod app;
mod load;

pub use app::{record_app, record_command_window};
pub use load::record_load;

/// Most application points kept per iteration; a longer run is thinned evenly (the window's
/// edges kept) and says so in `thinned_from`.
pub const MAX_POINTS: usize = 10_000;

/// To 0.1: times in ms (a sample takes longer to read than that).
pub fn tenth(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// To 0.01: CPU %, MiB.
pub(crate) fn hundredth(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Milliseconds from `since` to `at` (0 when `at` is earlier), to 0.1 ms.
pub(crate) fn ms_since(since: std::time::Instant, at: std::time::Instant) -> f64 {
    tenth(at.saturating_duration_since(since).as_secs_f64() * 1e3)
}
