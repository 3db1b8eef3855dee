//! What else the machine did while an iteration ran: CPU used by processes that are neither the
//! application nor rigor, tasks waiting for a CPU, the run queue and the clock. A VM whose
//! neighbour or a build in another terminal takes a core moves the figures without any code
//! change; these readings let that be seen and named.
//!
//! Resolution: the machine's CPU time comes from /proc/stat, in clock ticks (`USER_HZ`, 100 per
//! second): each field is truncated to a tick per CPU at each end of the span, so over a span
//! of `T` seconds on `N` CPUs one tick is `100 / (T × 100 × N)` % of the machine (0.25% for
//! 2 s on 2 CPUs), and `foreign_pct` is good to about two ticks per CPU. The application's CPU
//! (cgroup counter or tree accounts) and rigor's own (`getrusage`) are in ns and µs.

use crate::cpu_counters::{cpu_counters, CpuCounters};
use crate::procfs::{clock_ticks_per_second, keyed_value, read};
use nix::sys::resource::{getrusage, UsageWho};
use std::time::{Duration, Instant};

/// The machine at one edge of a span: the counters the span's figures are deltas of.
#[derive(Debug, Clone, Copy, Default)]
pub struct MachineReading {
    /// /proc/stat `cpu` line.
    pub counters: CpuCounters,
    /// CPU used so far by rigor's own process (every thread: load engine, sampler), ns.
    pub self_cpu_ns: u64,
    /// CPU used so far by the application (its cgroup, else its tree), ns; `None` when
    /// unreadable, which makes the foreign share unknown rather than wrong.
    pub app_cpu_ns: Option<u64>,
    /// /proc/pressure/cpu `some total=`, µs; `None` without PSI.
    pub psi_some_us: Option<u64>,
    /// When it was read; the span's length is what pressure is divided by.
    pub at: Option<Instant>,
}

/// Reads the machine now; `app_cpu_ns` is the application's CPU counter read by the caller,
/// who knows where it lives (a cgroup, a process tree, or rigor's reaped children).
pub fn machine_reading(app_cpu_ns: Option<u64>) -> MachineReading {
    let at = Instant::now();
    MachineReading {
        counters: cpu_counters(),
        self_cpu_ns: self_cpu_ns(),
        app_cpu_ns,
        psi_some_us: read("/proc/pressure/cpu").and_then(|t| psi_some_total(&t)),
        at: Some(at),
    }
}

/// CPU used so far by the live process tree rooted at `root` and the children its members
/// reaped, ns: the application's CPU where it has no cgroup. `None` when the root is gone.
pub fn tree_cpu_ns(root: i32) -> Option<u64> {
    let tick_ns = 1_000_000_000 / clock_ticks_per_second().max(1);
    let pids = crate::tree::descendants(root);
    let stats: Vec<_> = pids
        .iter()
        .filter_map(|&pid| Some((pid, crate::procfs::Stat::read(pid)?)))
        .collect();
    (!stats.is_empty()).then(|| {
        stats
            .iter()
            .map(|(pid, st)| crate::cpu_time::proc_cpu(*pid, st, tick_ns).total_ns())
            .sum()
    })
}

/// rigor's own CPU (user + system, all threads, not its children), ns.
fn self_cpu_ns() -> u64 {
    let Ok(u) = getrusage(UsageWho::RUSAGE_SELF) else {
        return 0;
    };
    let ns =
        |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000_000 + t.tv_usec() as u64 * 1000;
    ns(u.user_time()) + ns(u.system_time())
}

/// The `total=` of the `some` line of /proc/pressure/cpu: µs some task waited for a CPU.
fn psi_some_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix("total="))?
        .parse()
        .ok()
}

/// Figures sampled during the span (run queue, clock): their means over the samples.
#[derive(Debug, Clone, Default)]
pub struct SpanSamples {
    run_queue: Vec<f64>,
    freq_mhz: Vec<f64>,
    last: Option<Instant>,
    every: Duration,
}

impl SpanSamples {
    /// Samples at most once per `every` (see [`SpanSamples::sample`]).
    pub fn every(every: Duration) -> SpanSamples {
        SpanSamples {
            every,
            ..Default::default()
        }
    }

    /// Takes a sample unless the last one is younger than the interval: callers call this from
    /// loops that spin faster than the sampling needs, and each read costs rigor CPU.
    pub fn sample(&mut self) {
        if self.last.is_some_and(|t| t.elapsed() < self.every) {
            return;
        }
        self.sample_now();
    }

    /// Takes a sample now (the span's edges).
    pub fn sample_now(&mut self) {
        self.last = Some(Instant::now());
        if let Some(n) = runnable_now() {
            self.run_queue.push(n);
        }
        if let Some(f) = mean_freq_mhz() {
            self.freq_mhz.push(f);
        }
    }

    fn mean(v: &[f64]) -> Option<f64> {
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// Tasks runnable now (/proc/stat `procs_running`), the reader itself not counted.
fn runnable_now() -> Option<f64> {
    let n = keyed_value(&read("/proc/stat")?, "procs_running")?;
    Some(n.saturating_sub(1) as f64)
}

/// Mean clock over CPUs: cpufreq's `scaling_cur_freq` (kHz) where there is one, else the
/// `cpu MHz` lines of /proc/cpuinfo (what most VMs give).
fn mean_freq_mhz() -> Option<f64> {
    let sysfs: Vec<f64> = crate::procfs::cpu_dirs()
        .iter()
        .filter_map(|d| crate::procfs::read_u64(d.join("cpufreq/scaling_cur_freq")))
        .map(|khz| khz as f64 / 1000.0)
        .collect();
    if !sysfs.is_empty() {
        return Some(sysfs.iter().sum::<f64>() / sysfs.len() as f64);
    }
    cpuinfo_mhz(&read("/proc/cpuinfo")?)
}

/// Mean of the `cpu MHz` lines of /proc/cpuinfo.
fn cpuinfo_mhz(text: &str) -> Option<f64> {
    let v: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse().ok())
        .collect();
    SpanSamples::mean(&v)
}

/// What else the machine did over a span.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Interference {
    /// CPU (user + nice + system + irq + softirq) used by processes other than the application
    /// and rigor, in % of the machine's total CPU time over the span, clamped at 0; `None` when
    /// the application's CPU could not be read or the span was too short to hold a tick.
    pub foreign_pct: Option<f64>,
    /// Share of the span some task waited for a CPU (PSI `cpu some`), in %; `None` without PSI.
    pub cpu_pressure_pct: Option<f64>,
    /// Mean runnable tasks (rigor's and the application's included) over the samples.
    pub run_queue: Option<f64>,
    /// Mean CPU clock over the samples, MHz.
    pub freq_mhz: Option<f64>,
}

/// The span's figures from its edges and what was sampled in between.
pub fn interference(
    before: &MachineReading,
    after: &MachineReading,
    samples: &SpanSamples,
) -> Interference {
    let span_us = match (before.at, after.at) {
        (Some(a), Some(b)) => b.saturating_duration_since(a).as_micros() as u64,
        _ => 0,
    };
    Interference {
        foreign_pct: foreign_pct(before, after, clock_ticks_per_second()),
        cpu_pressure_pct: pressure_pct(before.psi_some_us, after.psi_some_us, span_us),
        run_queue: SpanSamples::mean(&samples.run_queue),
        freq_mhz: SpanSamples::mean(&samples.freq_mhz),
    }
}

/// Busy ticks less the application's and rigor's CPU, in % of the total ticks; `ticks_per_s`
/// converts ticks to ns.
///
/// Busy is user + nice + system + irq + softirq: a task's CPU (its cgroup counter, rusage,
/// /proc/PID/stat) includes the interrupts and softirqs served while it was current, which
/// /proc/stat puts in its irq and softirq columns. Without them a loopback HTTP load, whose
/// packets are processed in softirq context, would be subtracted from time never counted as
/// busy, hiding other processes' CPU. Interrupt time no task is charged for counts as foreign.
fn foreign_pct(before: &MachineReading, after: &MachineReading, ticks_per_s: u64) -> Option<f64> {
    let busy = |c: &CpuCounters| c.user + c.nice + c.system + c.irq + c.softirq;
    let (a, b) = (&before.counters, &after.counters);
    let total_ticks = b.total.saturating_sub(a.total);
    if total_ticks == 0 || ticks_per_s == 0 {
        return None;
    }
    let tick_ns = 1e9 / ticks_per_s as f64;
    let busy_ns = busy(b).saturating_sub(busy(a)) as f64 * tick_ns;
    let app_ns = after.app_cpu_ns?.saturating_sub(before.app_cpu_ns?) as f64;
    let self_ns = after.self_cpu_ns.saturating_sub(before.self_cpu_ns) as f64;
    let foreign = (busy_ns - app_ns - self_ns).max(0.0);
    Some(foreign / (total_ticks as f64 * tick_ns) * 100.0)
}

/// PSI `some` µs over the span's µs, in %, capped at 100 (the counter and the clock are read a
/// few µs apart).
fn pressure_pct(before: Option<u64>, after: Option<u64>, span_us: u64) -> Option<f64> {
    if span_us == 0 {
        return None;
    }
    let waited = after?.saturating_sub(before?) as f64;
    Some((waited / span_us as f64 * 100.0).min(100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(user: u64, system: u64, idle: u64, app: Option<u64>, me: u64) -> MachineReading {
        MachineReading {
            counters: CpuCounters {
                user,
                system,
                idle,
                total: user + system + idle,
                ..Default::default()
            },
            self_cpu_ns: me,
            app_cpu_ns: app,
            ..Default::default()
        }
    }

    #[test]
    fn foreign_is_busy_less_app_and_rigor_in_ticks_of_the_total() {
        // 400 ticks of 10 ms = 4 s of machine; 300 busy ticks = 3 s; the app used 1.5 s and
        // rigor 0.5 s: 1 s foreign = 25%.
        let a = reading(1000, 500, 5000, Some(7_000_000_000), 2_000_000_000);
        let b = reading(1250, 550, 5100, Some(8_500_000_000), 2_500_000_000);
        let f = foreign_pct(&a, &b, 100).unwrap();
        assert!((f - 25.0).abs() < 1e-9, "{f}");
        // Other tick lengths convert too: at 250 Hz the same ticks are 1.2 s busy of 1.6 s.
        let b250 = reading(1250, 550, 5100, Some(7_400_000_000), 2_400_000_000);
        let f = foreign_pct(&a, &b250, 250).unwrap();
        assert!((f - 25.0).abs() < 1e-9, "{f}");
    }

    #[test]
    fn foreign_is_clamped_unknown_without_the_app_and_none_over_no_time() {
        // The app's ns counter says more than the truncated ticks: never below zero.
        let a = reading(0, 0, 0, Some(0), 0);
        let b = reading(100, 0, 100, Some(1_100_000_000), 0);
        assert_eq!(foreign_pct(&a, &b, 100), Some(0.0));
        let unknown = reading(100, 0, 100, None, 0);
        assert_eq!(foreign_pct(&a, &unknown, 100), None);
        assert_eq!(foreign_pct(&a, &a, 100), None);
    }

    #[test]
    fn pressure_is_waited_time_over_the_span() {
        assert_eq!(
            pressure_pct(Some(1_000), Some(501_000), 2_000_000),
            Some(25.0)
        );
        assert_eq!(
            pressure_pct(Some(0), Some(3_000_000), 2_000_000),
            Some(100.0)
        );
        assert_eq!(pressure_pct(None, Some(5), 10), None);
        assert_eq!(pressure_pct(Some(0), Some(5), 0), None);
        let psi = "some avg10=4.63 avg60=8.70 avg300=11.20 total=14130063573\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(psi_some_total(psi), Some(14130063573));
    }

    #[test]
    fn samples_are_averaged_and_rate_limited() {
        let mut s = SpanSamples::every(Duration::from_secs(3600));
        s.sample();
        s.sample();
        assert!(s.run_queue.len() <= 1, "{:?}", s.run_queue);
        s.sample_now();
        assert_eq!(SpanSamples::mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(SpanSamples::mean(&[]), None);
        let info = "cpu MHz\t\t: 2400.000\nflags: x\ncpu MHz\t\t: 2600.000\n";
        assert_eq!(cpuinfo_mhz(info), Some(2500.0));
    }
}
