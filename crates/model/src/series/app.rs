//! The application's samples as a series: when each was taken, CPU since the one before (the
//! probe's own rule, on `app.cpu`'s scale), RSS and threads, and where the window was.

use super::{hundredth, ms_since, MAX_POINTS};
use crate::result::{Iteration, Series};
use rigor_probe::{Mark, Samples};
use std::time::{Duration, Instant};

const MIB: f64 = 1024.0 * 1024.0;

/// Puts the application's samples in the iteration's series (keeping whatever else it holds).
pub fn record_app(it: &mut Iteration, samples: &Samples, spawned_at: Instant) {
    if samples.samples().is_empty() {
        return;
    }
    fill(
        it.series.get_or_insert_with(Series::default),
        samples,
        spawned_at,
    );
}

/// A command's window is its whole life: from spawn to exit.
pub fn record_command_window(it: &mut Iteration, elapsed: Duration) {
    if let Some(s) = it.series.as_mut() {
        s.window = Some([0.0, super::tenth(elapsed.as_secs_f64() * 1e3)]);
    }
}

/// The sample-by-sample arrays, thinned to [`MAX_POINTS`] at most.
fn fill(series: &mut Series, samples: &Samples, spawned_at: Instant) {
    let all = samples.samples();
    let window = samples.window_range();
    let kept = kept_indices(all.len(), &window, MAX_POINTS);
    series.thinned_from = (kept.len() < all.len()).then_some(all.len());
    series.t_ms = kept
        .iter()
        .map(|&i| ms_since(spawned_at, all[i].at))
        .collect();
    // CPU since the previous kept sample: after thinning it spans the points dropped between.
    series.cpu = kept
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let prev = *kept.get(k.checked_sub(1)?)?;
            samples.cpu_pct_between(prev, i).map(hundredth)
        })
        .collect();
    series.rss = kept
        .iter()
        .map(|&i| hundredth(all[i].rss_bytes as f64 / MIB))
        .collect();
    series.threads = kept.iter().map(|&i| all[i].threads as f64).collect();
    let marked = samples.marks().iter().any(|m| m.mark == Mark::WindowStart);
    series.window = (marked && !window.is_empty()).then(|| {
        [
            ms_since(spawned_at, all[window.start].at),
            ms_since(spawned_at, all[window.end - 1].at),
        ]
    });
}

/// Which of `n` samples to keep: all when they fit in `max`, else `max` spread evenly, the first
/// and last of the window among them so its edges stay exact.
fn kept_indices(n: usize, window: &std::ops::Range<usize>, max: usize) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    let even = max.saturating_sub(2).max(2);
    let mut kept: Vec<usize> = (0..even)
        .map(|k| ((k as f64) * (n - 1) as f64 / (even - 1) as f64).round() as usize)
        .collect();
    if !window.is_empty() {
        kept.extend([window.start, window.end - 1]);
    }
    kept.sort_unstable();
    kept.dedup();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigor_probe::{MarkRecord, ProcCpu, ProcSample};
    use std::collections::BTreeMap;

    /// A sample of one process (started at boot) that has used `cpu_ms` in all.
    fn sample(at: Instant, cpu_ms: u64, rss_bytes: u64, threads: u64) -> ProcSample {
        let cpu = ProcCpu {
            own_ns: cpu_ms * 1_000_000,
            ..ProcCpu::default()
        };
        ProcSample {
            at,
            boot_ticks: 1000,
            cpu: BTreeMap::from([(1, cpu)]),
            cgroup_cpu_ns: None,
            rss_bytes,
            uss_bytes: None,
            pss_bytes: None,
            threads,
            nonvoluntary_ctxt_switches: BTreeMap::new(),
            pids: 1,
            cgroup_memory: None,
            cgroup_cache: None,
            cgroup_anon: None,
        }
    }

    fn mark(mark: Mark, at: Instant, index: usize) -> MarkRecord {
        MarkRecord {
            mark,
            at,
            index,
            sampled: true,
        }
    }

    #[test]
    fn one_point_per_sample_on_the_spawn_clock() {
        let spawned = Instant::now();
        let at = |ms: f64| spawned + Duration::from_secs_f64(ms / 1e3);
        // CPU used in all: 0, 50 ms by 250 ms, 300 ms by 500 ms, then 302 ms 3 ms later (a
        // mark right after a periodic sample: too short a span for a rate).
        let samples = Samples::from_parts(
            vec![
                sample(at(10.04), 0, 3 << 20, 1),
                sample(at(260.04), 50, (10 << 20) + 12_345, 4),
                sample(at(510.04), 300, 20 << 20, 5),
                sample(at(513.04), 302, 20 << 20, 5),
            ],
            vec![
                mark(Mark::WindowStart, at(260.0), 1),
                mark(Mark::WindowEnd, at(512.9), 3),
            ],
            100,
            2,
        );
        let mut it = Iteration::new(0, 0);
        record_app(&mut it, &samples, spawned);
        let s = it.series.expect("a series");
        assert_eq!(s.t_ms, [10.0, 260.0, 510.0, 513.0]);
        // 50 ms of CPU in 250 ms on 2 CPUs = 10%; then 250 ms in 250 ms = 50%.
        assert_eq!(s.cpu, [None, Some(10.0), Some(50.0), None]);
        assert_eq!(s.rss, [3.0, 10.01, 20.0, 20.0]);
        assert_eq!(s.threads, [1.0, 4.0, 5.0, 5.0]);
        assert_eq!(s.window, Some([260.0, 513.0]));
        assert_eq!(s.thinned_from, None);
        // The largest window point is app.cpu, by the probe's one rule.
        assert_eq!(samples.figures().cpu_max_pct, Some(50.0));
    }

    #[test]
    fn a_long_run_is_thinned_evenly_keeping_the_window_edges() {
        let spawned = Instant::now();
        let n = 25_000;
        let samples = Samples::from_parts(
            (0..n)
                .map(|i| sample(spawned + Duration::from_millis(30 * i), 15 * i, 1 << 20, 2))
                .collect(),
            vec![
                mark(Mark::WindowStart, spawned, 1_001),
                mark(Mark::WindowEnd, spawned, 23_456),
            ],
            100,
            1,
        );
        let mut it = Iteration::new(0, 0);
        record_app(&mut it, &samples, spawned);
        let s = it.series.expect("a series");
        assert!(s.t_ms.len() <= MAX_POINTS, "{}", s.t_ms.len());
        assert!(s.t_ms.len() >= MAX_POINTS - 2);
        assert_eq!(s.thinned_from, Some(n as usize));
        assert_eq!(s.t_ms.first(), Some(&0.0));
        assert_eq!(s.t_ms.last(), Some(&(30.0 * (n - 1) as f64)));
        assert_eq!(s.window, Some([30_030.0, 703_680.0]));
        assert!(s.t_ms.contains(&30_030.0) && s.t_ms.contains(&703_680.0));
        // 15 ms of CPU every 30 ms on one CPU is 50% over any span, however thinned; only a
        // window edge kept right next to an evenly chosen point makes a span too short to say.
        assert_eq!(s.cpu.len(), s.t_ms.len());
        let said: Vec<f64> = s.cpu.iter().flatten().copied().collect();
        assert!(said.iter().all(|&c| c == 50.0), "{:?}", &s.cpu[..5]);
        assert!(
            said.len() >= s.cpu.len() - 3,
            "{} of {}",
            said.len(),
            s.cpu.len()
        );
    }

    #[test]
    fn no_samples_no_series() {
        let mut it = Iteration::new(0, 0);
        record_app(
            &mut it,
            &Samples::from_parts(vec![], vec![], 100, 1),
            Instant::now(),
        );
        assert_eq!(it.series, None);
    }
}
