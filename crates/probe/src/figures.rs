//! Turning samples into the app.* measurements: max/mean over the measured window, lifetime
//! maxima apart, and nothing invented when a reading was not taken.

use crate::sample::ProcSample;
use crate::sampler::Samples;
use serde::{Deserialize, Serialize};

const MIB: f64 = 1024.0 * 1024.0;

/// The application's figures for one iteration. Every field is `None` when it could not be
/// taken (too few samples, no cgroup, unreadable smaps): absent, never zero.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppFigures {
    /// `app.cpu`: max tree CPU between two window samples, 100 = all normalising CPUs.
    pub cpu_max_pct: Option<f64>,
    /// `app.cpu.avg`: tree CPU over the whole window (time-weighted), 100 = all normalising CPUs.
    pub cpu_mean_pct: Option<f64>,
    /// `app.cores`: max raw tree CPU, 100 = one core.
    pub cores_max_pct: Option<f64>,
    /// `app.rss`: max tree RSS in the window.
    pub rss_max_mib: Option<f64>,
    /// `app.rss.lifetime`: max tree RSS over every sample.
    pub rss_lifetime_max_mib: Option<f64>,
    /// `app.private`: max tree USS in the window.
    pub private_max_mib: Option<f64>,
    /// `app.cgroup.memory`: max cgroup memory in the window.
    pub cgroup_memory_max_mib: Option<f64>,
    /// `app.cgroup.cache`: page cache at the sample where cgroup memory peaked.
    pub cgroup_cache_max_mib: Option<f64>,
    /// Anonymous memory at the sample where cgroup memory peaked.
    pub cgroup_anon_mib: Option<f64>,
    /// `app.threads.start`: threads at the window's first sample.
    pub threads_start: Option<f64>,
    /// `app.threads.end`: threads at the window's last sample.
    pub threads_end: Option<f64>,
    /// `app.threads.max`: most threads in the window.
    pub threads_max: Option<f64>,
    /// Involuntary context switches of the tree across the window: a sign of CPU contention.
    pub nonvoluntary_ctxt_switches: Option<f64>,
}

impl Samples {
    /// The figures of the measured window (see [`Samples::window`]) plus lifetime maxima.
    pub fn figures(&self) -> AppFigures {
        let window = self.window();
        let (cores_max, cores_mean) = cpu(window, self.clock_ticks);
        let cpus = self.cpus.max(1) as f64;
        let mib = |b: u64| b as f64 / MIB;
        let cg_peak = window
            .iter()
            .filter_map(|s| s.cgroup_memory.map(|m| (m, s)))
            .max_by_key(|(m, _)| *m);
        AppFigures {
            cpu_max_pct: cores_max.map(|c| c / cpus),
            cpu_mean_pct: cores_mean.map(|c| c / cpus),
            cores_max_pct: cores_max,
            rss_max_mib: window.iter().map(|s| s.rss_bytes).max().map(mib),
            rss_lifetime_max_mib: self.samples.iter().map(|s| s.rss_bytes).max().map(mib),
            private_max_mib: window.iter().filter_map(|s| s.uss_bytes).max().map(mib),
            cgroup_memory_max_mib: cg_peak.map(|(m, _)| mib(m)),
            cgroup_cache_max_mib: cg_peak.and_then(|(_, s)| s.cgroup_cache).map(mib),
            cgroup_anon_mib: cg_peak.and_then(|(_, s)| s.cgroup_anon).map(mib),
            threads_start: window.first().map(|s| s.threads as f64),
            threads_end: window.last().map(|s| s.threads as f64),
            threads_max: window.iter().map(|s| s.threads).max().map(|t| t as f64),
            nonvoluntary_ctxt_switches: match (window.first(), window.last()) {
                (Some(a), Some(b)) if window.len() >= 2 => Some(
                    b.nonvoluntary_ctxt_switches
                        .saturating_sub(a.nonvoluntary_ctxt_switches) as f64,
                ),
                _ => None,
            },
        }
    }
}

impl AppFigures {
    /// The figures that have a DESIGN measurement id, as (id, value), present ones only.
    pub fn measurements(&self) -> Vec<(&'static str, f64)> {
        [
            ("app.cpu", self.cpu_max_pct),
            ("app.cpu.avg", self.cpu_mean_pct),
            ("app.cores", self.cores_max_pct),
            ("app.rss", self.rss_max_mib),
            ("app.rss.lifetime", self.rss_lifetime_max_mib),
            ("app.private", self.private_max_mib),
            ("app.cgroup.memory", self.cgroup_memory_max_mib),
            ("app.cgroup.cache", self.cgroup_cache_max_mib),
            ("app.threads.start", self.threads_start),
            ("app.threads.end", self.threads_end),
            ("app.threads.max", self.threads_max),
        ]
        .into_iter()
        .filter_map(|(id, v)| Some((id, v?)))
        .collect()
    }
}

/// (max, time-weighted mean) raw CPU of the tree, 100 = one core, over consecutive pairs.
/// Only processes present in both samples of a pair count, so churn is not read as CPU.
pub(crate) fn cpu(samples: &[ProcSample], clock_ticks: u64) -> (Option<f64>, Option<f64>) {
    let mut max: Option<f64> = None;
    let mut total_secs = 0.0;
    let mut total_cpu_secs = 0.0;
    for pair in samples.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let dt = b.at.duration_since(a.at).as_secs_f64();
        if dt <= 0.0 {
            continue;
        }
        let ticks: u64 = b
            .cpu_ticks
            .iter()
            .filter_map(|(pid, t)| Some(t.saturating_sub(*a.cpu_ticks.get(pid)?)))
            .sum();
        let cpu_secs = ticks as f64 / clock_ticks as f64;
        total_secs += dt;
        total_cpu_secs += cpu_secs;
        // A pair only a few ticks apart (a mark right after a periodic sample) is too coarse
        // for a maximum: one tick in 1 ms would read as 1000%. It still counts in the mean.
        if dt >= 5.0 / clock_ticks as f64 {
            let pct = cpu_secs / dt * 100.0;
            max = Some(max.map_or(pct, |m: f64| m.max(pct)));
        }
    }
    let mean = (total_secs > 0.0).then(|| total_cpu_secs / total_secs * 100.0);
    (max.or(mean), mean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::Mark;
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    fn sample(at: Instant, ticks: &[(i32, u64)], rss_mib: u64, threads: u64) -> ProcSample {
        ProcSample {
            at,
            cpu_ticks: ticks.iter().copied().collect::<BTreeMap<_, _>>(),
            rss_bytes: rss_mib << 20,
            uss_bytes: None,
            threads,
            nonvoluntary_ctxt_switches: threads * 10,
            pids: ticks.len(),
            cgroup_memory: None,
            cgroup_cache: None,
            cgroup_anon: None,
        }
    }

    #[test]
    fn window_cpu_and_memory() {
        let t0 = Instant::now();
        let s = |ms: u64| t0 + Duration::from_millis(ms);
        let samples = Samples {
            samples: vec![
                sample(s(0), &[(1, 0)], 500, 1),
                sample(s(1000), &[(1, 100)], 10, 2), // window start
                // pid 2 appears with a big count: not counted as CPU in this interval.
                sample(s(2000), &[(1, 150), (2, 1000)], 20, 4),
                sample(s(3000), &[(1, 200), (2, 1100)], 30, 3), // window end
                sample(s(4000), &[(1, 600)], 900, 1),
            ],
            marks: vec![
                (Mark::WindowStart, s(1000), 1),
                (Mark::WindowEnd, s(3000), 3),
            ],
            clock_ticks: 100,
            cpus: 2,
        };
        let f = samples.figures();
        // intervals: 50 ticks/1s = 50%, then 50+100 ticks/1s = 150%
        assert_eq!(f.cores_max_pct, Some(150.0));
        assert_eq!(f.cpu_max_pct, Some(75.0));
        assert_eq!(f.cpu_mean_pct, Some(50.0));
        assert_eq!(f.rss_max_mib, Some(30.0));
        assert_eq!(f.rss_lifetime_max_mib, Some(900.0));
        assert_eq!(f.private_max_mib, None);
        assert_eq!(f.cgroup_memory_max_mib, None);
        assert_eq!(f.threads_start, Some(2.0));
        assert_eq!(f.threads_end, Some(3.0));
        assert_eq!(f.threads_max, Some(4.0));
        assert_eq!(f.nonvoluntary_ctxt_switches, Some(10.0));
        let m = f.measurements();
        assert_eq!(m.len(), 8);
        assert!(m.contains(&("app.cores", 150.0)));
        assert!(m.contains(&("app.rss.lifetime", 900.0)));
    }

    #[test]
    fn nothing_sampled_means_nothing_reported() {
        let samples = Samples {
            samples: vec![],
            marks: vec![],
            clock_ticks: 100,
            cpus: 1,
        };
        assert_eq!(samples.figures(), AppFigures::default());
        assert!(AppFigures::default().measurements().is_empty());
    }
}
