//! Turning samples into the app.* measurements: max/mean over the measured window, lifetime
//! maxima apart, and nothing invented when a reading was not taken.

use crate::cpu_time::tree_cpu_ns;
use crate::sample::ProcSample;
use crate::sampler::Samples;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// `app.owned`: max tree PSS in the window (memory shared only inside the tree once).
    #[serde(default)]
    pub owned_max_mib: Option<f64>,
    /// `app.cgroup.memory`: max cgroup memory in the window.
    pub cgroup_memory_max_mib: Option<f64>,
    /// `app.cgroup.cache`: page cache at the sample where cgroup memory peaked.
    pub cgroup_cache_max_mib: Option<f64>,
    /// `app.cgroup.anon`: anonymous memory (heap, stacks) at the sample where cgroup memory
    /// peaked: the kernel's count of what the app's processes own, shared pages once.
    pub cgroup_anon_mib: Option<f64>,
    /// `app.threads.start`: threads at the window's first sample.
    pub threads_start: Option<f64>,
    /// `app.threads.end`: threads at the window's last sample taken while the load ran: the
    /// sample answering the window's end is taken once the load is over, when a server with a
    /// thread per connection has already let them go.
    pub threads_end: Option<f64>,
    /// `app.threads.max`: most threads in the window.
    pub threads_max: Option<f64>,
    /// Involuntary context switches of the tree across the window: a sign of CPU contention.
    /// Counted per thread: each thread's last reading in the window less its reading at the
    /// window's start (all of it for a thread born later), so threads that exited during the
    /// window (a thread per connection) still count up to their last sample.
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
            owned_max_mib: window.iter().filter_map(|s| s.pss_bytes).max().map(mib),
            cgroup_memory_max_mib: cg_peak.map(|(m, _)| mib(m)),
            cgroup_cache_max_mib: cg_peak.and_then(|(_, s)| s.cgroup_cache).map(mib),
            cgroup_anon_mib: cg_peak.and_then(|(_, s)| s.cgroup_anon).map(mib),
            threads_start: window.first().map(|s| s.threads as f64),
            threads_end: self.while_loaded(window).map(|s| s.threads as f64),
            threads_max: window.iter().map(|s| s.threads).max().map(|t| t as f64),
            nonvoluntary_ctxt_switches: (window.len() >= 2).then(|| switches(window)),
        }
    }

    /// The window's last sample taken while the load ran: the one before the sample that
    /// answered the end mark, when there is one.
    fn while_loaded<'a>(&self, window: &'a [ProcSample]) -> Option<&'a ProcSample> {
        let range = self.window_range();
        let ends_on_mark = self
            .marks
            .iter()
            .any(|m| m.mark == crate::Mark::WindowEnd && m.sampled && m.index + 1 == range.end);
        match window.len() {
            n if n >= 2 && ends_on_mark => window.get(n - 2),
            _ => window.last(),
        }
    }
}

/// Involuntary context switches across `window`, thread by thread (see
/// [`AppFigures::nonvoluntary_ctxt_switches`]).
fn switches(window: &[ProcSample]) -> f64 {
    let first = &window[0].nonvoluntary_ctxt_switches;
    let mut last: BTreeMap<i32, u64> = BTreeMap::new();
    for s in window {
        last.extend(s.nonvoluntary_ctxt_switches.iter().map(|(t, n)| (*t, *n)));
    }
    last.iter()
        .map(|(tid, n)| n.saturating_sub(first.get(tid).copied().unwrap_or(0)))
        .sum::<u64>() as f64
}

/// (max, time-weighted mean) raw CPU of the tree, 100 = one core, over consecutive pairs
/// (each measured by [`pair_cpu`]).
pub(crate) fn cpu(samples: &[ProcSample], clock_ticks: u64) -> (Option<f64>, Option<f64>) {
    let mut max: Option<f64> = None;
    let mut total_secs = 0.0;
    let mut total_cpu_secs = 0.0;
    for pair in samples.windows(2) {
        let Some(p) = pair_cpu(&pair[0], &pair[1], clock_ticks) else {
            continue;
        };
        total_secs += p.secs;
        total_cpu_secs += p.cpu_secs;
        if let Some(pct) = p.rate_pct() {
            max = Some(max.map_or(pct, |m: f64| m.max(pct)));
        }
    }
    let mean = (total_secs > 0.0).then(|| total_cpu_secs / total_secs * 100.0);
    (max.or(mean), mean)
}

/// The tree's CPU between two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairCpu {
    /// Wall time between them, s.
    pub secs: f64,
    /// CPU the tree used in between, s.
    pub cpu_secs: f64,
    /// Whether the pair is long enough to be read as a rate (see [`pair_cpu`]).
    pub long_enough: bool,
}

impl PairCpu {
    /// CPU over the pair, 100 = one core; `None` when the pair is too short to say.
    pub fn rate_pct(&self) -> Option<f64> {
        self.long_enough.then(|| self.cpu_secs / self.secs * 100.0)
    }
}

/// CPU the tree used from sample `a` to a later sample `b`: the cgroup counter when both read it
/// (it sees every process that ran), otherwise the tree's per-process accounts (see
/// [`tree_cpu_ns`]). `None` when `b` is not after `a`.
///
/// A pair only a few ms apart (a mark right after a periodic sample) is not `long_enough` for a
/// rate: the time a sample takes to read, or one tick of a tick-based account, would read as a
/// spike. Its CPU still counts in a mean over a longer span.
pub fn pair_cpu(a: &ProcSample, b: &ProcSample, clock_ticks: u64) -> Option<PairCpu> {
    let secs = b.at.checked_duration_since(a.at)?.as_secs_f64();
    if secs <= 0.0 {
        return None;
    }
    let (ns, exact) = match (a.cgroup_cpu_ns, b.cgroup_cpu_ns) {
        (Some(x), Some(y)) => (y.saturating_sub(x), true),
        _ => (tree_cpu_ns(&a.cpu, a.boot_ticks, &b.cpu), false),
    };
    let shortest = if exact {
        MIN_EXACT_PAIR_SECS
    } else {
        5.0 / clock_ticks.max(1) as f64
    };
    Some(PairCpu {
        secs,
        cpu_secs: ns as f64 / 1e9,
        long_enough: secs >= shortest,
    })
}

/// Shortest pair that counts for the maximum with a nanosecond counter.
const MIN_EXACT_PAIR_SECS: f64 = 0.02;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_time::ProcCpu;
    use crate::sampler::{Mark, MarkRecord};
    use std::collections::BTreeMap;
    use std::time::{Duration, Instant};

    /// A sample whose processes (ppid 0, started at boot) used `ticks` of 10 ms each.
    fn sample(at: Instant, ticks: &[(i32, u64)], rss_mib: u64, threads: u64) -> ProcSample {
        let cpu = |t: u64| ProcCpu {
            own_ns: t * 10_000_000,
            ..ProcCpu::default()
        };
        ProcSample {
            at,
            boot_ticks: 1000,
            cpu: ticks
                .iter()
                .map(|(p, t)| (*p, cpu(*t)))
                .collect::<BTreeMap<_, _>>(),
            cgroup_cpu_ns: None,
            rss_bytes: rss_mib << 20,
            uss_bytes: None,
            pss_bytes: None,
            threads,
            nonvoluntary_ctxt_switches: (0..threads as i32).map(|t| (t, 10)).collect(),
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
                MarkRecord {
                    mark: Mark::WindowStart,
                    at: s(1000),
                    index: 1,
                    sampled: true,
                },
                MarkRecord {
                    mark: Mark::WindowEnd,
                    at: s(3000),
                    index: 3,
                    sampled: true,
                },
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
        // The end mark's sample (3 threads) came after the load closed its connections: the
        // threads at the end are those of the window's last sample before it.
        assert_eq!(f.threads_end, Some(4.0));
        assert_eq!(f.threads_max, Some(4.0));
        // Threads 2 and 3 were born in the window with 10 switches each; 3 exited before the
        // end and still counts.
        assert_eq!(f.nonvoluntary_ctxt_switches, Some(20.0));
        // Sample by sample by the same rule, on the same scale: the window's largest is app.cpu.
        let per_pair: Vec<_> = (1..5).map(|i| samples.cpu_pct_between(i - 1, i)).collect();
        assert_eq!(per_pair, [Some(50.0), Some(25.0), Some(75.0), Some(200.0)]);
        assert_eq!(samples.window_range(), 1..4);
        assert_eq!(samples.cpu_pct_between(0, 9), None);
    }

    #[test]
    fn an_end_mark_without_its_sample_ends_the_window_at_the_sample_before() {
        let t0 = Instant::now();
        let s = |ms: u64| t0 + Duration::from_millis(ms);
        let mark = |mark, ms, index, sampled| MarkRecord {
            mark,
            at: s(ms),
            index,
            sampled,
        };
        let samples = Samples {
            samples: vec![
                sample(s(0), &[(1, 0)], 10, 4),
                sample(s(1000), &[(1, 50)], 20, 4),
                // Taken later, while the app shut down: not part of the window.
                sample(s(3000), &[(1, 60)], 900, 1),
            ],
            marks: vec![
                mark(Mark::WindowStart, 0, 0, true),
                mark(Mark::WindowEnd, 2000, 2, false),
            ],
            clock_ticks: 100,
            cpus: 1,
        };
        assert_eq!(samples.window().len(), 2);
        let f = samples.figures();
        assert_eq!(f.rss_max_mib, Some(20.0));
        assert_eq!(f.threads_end, Some(4.0));
    }

    #[test]
    fn switches_of_threads_that_exited_in_the_window_still_count() {
        let t0 = Instant::now();
        let s = |ms: u64| t0 + Duration::from_millis(ms);
        let with = |ms, switches: &[(i32, u64)]| {
            let mut x = sample(s(ms), &[(1, 0)], 10, switches.len() as u64);
            x.nonvoluntary_ctxt_switches = switches.iter().copied().collect();
            x
        };
        let samples = Samples {
            samples: vec![
                with(0, &[(1, 5), (7, 100)]),
                // A thread per connection: 8 and 9 serve, 7 goes on.
                with(250, &[(1, 6), (7, 150), (8, 40), (9, 30)]),
                with(500, &[(1, 7), (7, 160), (8, 90), (9, 70)]),
                // The load closed its connections: their threads are gone with their counts.
                with(600, &[(1, 8)]),
            ],
            marks: vec![
                MarkRecord {
                    mark: Mark::WindowStart,
                    at: s(0),
                    index: 0,
                    sampled: true,
                },
                MarkRecord {
                    mark: Mark::WindowEnd,
                    at: s(600),
                    index: 3,
                    sampled: true,
                },
            ],
            clock_ticks: 100,
            cpus: 1,
        };
        let f = samples.figures();
        // 1: 3, 7: 60 (to its last reading), 8: 90, 9: 70.
        assert_eq!(f.nonvoluntary_ctxt_switches, Some(223.0));
        assert_eq!(f.threads_end, Some(4.0));
        assert_eq!(f.threads_max, Some(4.0));
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
    }
}
