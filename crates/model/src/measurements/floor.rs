//! The smallest absolute change that means anything for a figure. A page cache of a few KiB or
//! a thread count of 1–2 moves by whole pages and whole threads: one more page is +100%, which
//! says nothing about the application. Such a figure is judged on this floor, in its own unit,
//! whenever the floor is wider than the relative threshold at its baseline.

use super::ids;

/// Page cache comes and goes with files the process touched: under a MiB it is noise.
const PAGE_CACHE_MIB: f64 = 1.0;
/// Memory figures move by pages and allocator arenas: a quarter of a MiB is the least change
/// worth a verdict (a 60 MiB working set is still judged at 1%).
const MEMORY_MIB: f64 = 0.25;
/// Runtimes start and stop helper threads on their own: two threads either way is no change.
const THREADS: f64 = 2.0;

/// The absolute floor of `id` in its unit, or `None` when only the relative threshold applies.
pub fn floor(id: &str) -> Option<f64> {
    match id {
        ids::APP_CGROUP_CACHE => Some(PAGE_CACHE_MIB),
        ids::APP_RSS
        | ids::APP_RSS_LIFETIME
        | ids::APP_PRIVATE
        | ids::APP_OWNED
        | ids::APP_CGROUP_MEMORY
        | ids::APP_CGROUP_ANON => Some(MEMORY_MIB),
        ids::APP_THREADS_START | ids::APP_THREADS_END | ids::APP_THREADS_MAX => Some(THREADS),
        _ => None,
    }
}

/// The relative threshold, in %, a comparison of `id` from `baseline_median` is judged at: the
/// run's `threshold_pct`, or the floor as a share of the baseline when that is wider. Returns
/// the floor too when it is the one that applies.
pub fn threshold_pct(
    id: &str,
    baseline_median: Option<f64>,
    threshold_pct: f64,
) -> (f64, Option<f64>) {
    let Some(f) = floor(id) else {
        return (threshold_pct, None);
    };
    match baseline_median.map(f64::abs).filter(|b| *b > 0.0) {
        Some(b) if 100.0 * f / b > threshold_pct.abs() => (100.0 * f / b, Some(f)),
        _ => (threshold_pct, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_wider_than_the_threshold_replaces_it() {
        // 4 KiB of page cache: 1 MiB is 25,600% of it.
        let (t, f) = threshold_pct(ids::APP_CGROUP_CACHE, Some(0.00390625), 2.0);
        assert_eq!(f, Some(1.0));
        assert!((t - 25_600.0).abs() < 1e-9, "{t}");
        // 60 MiB: a quarter MiB is 0.42%, under the 2% threshold, which stays.
        assert_eq!(threshold_pct(ids::APP_RSS, Some(60.0), 2.0), (2.0, None));
        // One thread: two threads either way is 200%.
        assert_eq!(
            threshold_pct(ids::APP_THREADS_END, Some(1.0), 2.0),
            (200.0, Some(2.0))
        );
        assert_eq!(threshold_pct(ids::LOAD_RPS, Some(1.0), 2.0), (2.0, None));
        // A zero baseline has no relative threshold to widen.
        assert_eq!(
            threshold_pct(ids::APP_CGROUP_CACHE, Some(0.0), 2.0),
            (2.0, None)
        );
    }
}
