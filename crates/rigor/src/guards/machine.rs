//! A noisy machine: busy before the run, CPU stolen by a hypervisor, or throttled during it.

use crate::result::{Warning, WarningKind};
use rigor_probe::{Environment, Interference, MachineReading, SpanSamples};

/// How busy the machine is right now: CPU use over a short look (the load average lags by a
/// minute, so a build that just finished would read as "busy" for a while after).
pub fn busy_now_pct() -> f64 {
    let before = rigor_probe::cpu_counters();
    std::thread::sleep(std::time::Duration::from_millis(500));
    rigor_probe::cpu_counters().busy_pct_since(&before)
}

/// Warnings about the machine's state before the first iteration. A load average above 0.5 per
/// core counts as busy only while the CPUs are still busy now (`busy_now_pct` ≥ 20%).
pub fn noisy_machine_before_run(env: &Environment, busy_now_pct: f64) -> Vec<Warning> {
    let mut out = Vec::new();
    let cores = env.logical_cores.max(1) as f64;
    let busy_now = busy_now_pct >= 20.0;
    if let Some(load) = env.load_avg_1m.filter(|l| l / cores > 0.5 && busy_now) {
        out.push(Warning::of(
            WarningKind::BusyMachine,
            format!(
                "the machine was busy before the run: load average {load:.2} on {} cores ({:.2} per core), \
                 CPUs {busy_now_pct:.0}% busy just before the start",
                env.logical_cores,
                load / cores
            )
));
    }
    if let Some(r) = env.runnable_threads {
        let already = out.iter().any(|w| w.kind == WarningKind::BusyMachine);
        if !already && busy_now && r as f64 / cores > 0.5 && r >= 2 {
            out.push(Warning::of(
                WarningKind::BusyMachine,
                format!(
                    "the machine was busy before the run: {r} threads were runnable on {} cores, \
                     CPUs {busy_now_pct:.0}% busy just before the start",
                    env.logical_cores
                ),
            ));
        }
    }
    if let Some(p) = env.cpu_pressure_some_avg10 {
        if p > 10.0 && busy_now {
            out.push(Warning::of(
                WarningKind::CpuPressure,
                format!("CPU pressure was {p:.1}% (some, avg10) before the run: tasks were waiting for CPU")
));
        }
    }
    if let Some(g) = &env.governor {
        if g != "performance" {
            out.push(Warning::of(
                WarningKind::Governor,
                format!("the CPU frequency governor is `{g}`, not `performance`: clock speed may drift between iterations")
));
        }
    }
    out
}

/// Foreign CPU above this share of the machine is named: other work took a core's worth of
/// time slices from the application or the load (5% is a tenth of a core on 2 cores).
pub const FOREIGN_WARN_PCT: f64 = 5.0;

/// CPU pressure above this share of the iteration, with foreign CPU above
/// [`FOREIGN_WARN_PCT`], is named: tasks waited for a CPU while something else held one. The
/// application and the load compete for the CPUs by themselves, so pressure alone is no
/// interference (on 2 cores a quiet run reads 20–60%).
pub const PRESSURE_WARN_PCT: f64 = 50.0;

/// Warnings about what the machine did during one iteration (between `before` and `after`,
/// with the run queue and clock `samples` taken in between), and the readings themselves.
pub fn machine_guards(
    before: &MachineReading,
    after: &MachineReading,
    samples: &SpanSamples,
    warnings: &mut Vec<Warning>,
) -> crate::result::MachineDuring {
    let (b, a) = (&before.counters, &after.counters);
    let steal = a.steal_pct_since(b);
    let i = rigor_probe::interference(before, after, samples);
    if steal > 2.0 {
        warnings.push(Warning::of(
            WarningKind::Steal,
            format!("the hypervisor stole {steal:.1}% of the CPU during this iteration"),
        ));
    }
    if let Some(n) = a.throttled_since(b) {
        if n > 0 {
            warnings.push(Warning::of(
                WarningKind::Throttled,
                format!("the CPU was thermally throttled {n} time(s) during this iteration"),
            ));
        }
    }
    interference_guards(&i, warnings);
    crate::result::MachineDuring {
        steal_pct: steal,
        busy_pct: a.busy_pct_since(b),
        throttle_events: a.throttled_since(b),
        foreign_pct: i.foreign_pct,
        cpu_pressure_pct: i.cpu_pressure_pct,
        run_queue: i.run_queue,
        freq_mhz: i.freq_mhz,
        interference_pct: Some(interference_pct(steal, i.foreign_pct)),
        app_wait_per_cpu: None,
        client_wait_per_cpu: None,
    }
}

/// Steal plus foreign CPU, both in % of the machine's CPU time. Without a foreign figure (the
/// application's CPU was unreadable) it is steal alone: a lower bound, never a guess.
pub fn interference_pct(steal_pct: f64, foreign_pct: Option<f64>) -> f64 {
    steal_pct + foreign_pct.unwrap_or(0.0)
}

/// Foreign CPU and CPU pressure during the iteration, named with their figures.
fn interference_guards(i: &Interference, warnings: &mut Vec<Warning>) {
    let Some(foreign) = i.foreign_pct.filter(|f| *f > FOREIGN_WARN_PCT) else {
        return;
    };
    warnings.push(Warning::of(
        WarningKind::ForeignCpu,
        format!("other processes used {foreign:.1}% of the machine's CPU during this iteration"),
    ));
    if let Some(p) = i.cpu_pressure_pct.filter(|p| *p > PRESSURE_WARN_PCT) {
        warnings.push(Warning::of(
            WarningKind::CpuPressure,
            format!(
                "tasks waited for a CPU {p:.0}% of this iteration (CPU pressure, some) while \
                 other processes ran"
            ),
        ));
    }
}

/// Warns when a row's iterations vary more than 10% (CV) on the primary measurement: changes
/// smaller than the noise cannot be seen.
pub fn noisy_row(primary: &str, summary: Option<&crate::result::Summary>) -> Option<Warning> {
    let s = summary?;
    (s.n >= 2 && s.cv > 0.10).then(|| {
        Warning::of(
            WarningKind::NoisyRow,
            format!(
                "{primary} varies by {:.1}% CV across iterations: a change smaller than that cannot be seen",
                s.cv * 100.0
            )
)
    })
}

/// A load client that waited this long for a CPU per unit of CPU it got had at most half the
/// CPU it could use: it sent less than it would have, and the figures may measure its
/// starvation rather than the application.
pub const CLIENT_WAIT_PER_CPU: f64 = 1.0;

/// ... provided the waits add up to this share of the iteration per client thread: a client
/// that mostly sleeps on the network waits a scheduler slice at each short wake-up, many times
/// its CPU, without being held back.
pub const CLIENT_WAITED_PCT: f64 = 20.0;

/// `client_starved` when the load client's threads (`times`, over the iteration) waited in a run
/// queue for at least as long as they ran and for [`CLIENT_WAITED_PCT`] of the iteration
/// (`waited_pct`, per thread); `name` says which client.
pub fn client_starved_guard(
    name: &str,
    times: &rigor_probe::SchedTimes,
    waited_pct: f64,
    warnings: &mut Vec<Warning>,
) {
    let (Some(ratio), Some(got)) = (times.wait_per_cpu(), times.got_pct()) else {
        return;
    };
    if ratio < CLIENT_WAIT_PER_CPU || waited_pct < CLIENT_WAITED_PCT {
        return;
    }
    warnings.push(Warning::of(
        WarningKind::ClientStarved,
        format!(
            "{name} waited {:.2} s for a CPU while it ran {:.2} s ({ratio:.1} s per CPU second, \
             {waited_pct:.0}% of the iteration: it had {got:.0}% of the CPU it asked for): it may \
             have been the bottleneck",
            times.wait_ns as f64 / 1e9,
            times.run_ns as f64 / 1e9
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Summary;
    use rigor_probe::CpuCounters;

    fn summary(n: usize, cv: f64) -> Summary {
        Summary {
            n,
            mean: 1.0,
            median: 1.0,
            stdev: cv,
            cv,
            min: 1.0,
            max: 1.0,
        }
    }

    #[test]
    fn a_row_noisier_than_ten_percent_is_flagged() {
        assert_eq!(
            noisy_row("load.rps", Some(&summary(3, 0.12))),
            Some(Warning::of(
                WarningKind::NoisyRow,
                "load.rps varies by 12.0% CV across iterations: a change smaller than that \
                 cannot be seen"
            ))
        );
        assert!(noisy_row("load.rps", Some(&summary(3, 0.08))).is_none());
        assert!(noisy_row("load.rps", Some(&summary(1, 0.5))).is_none());
        assert!(noisy_row("load.rps", None).is_none());
    }

    #[test]
    fn a_lagging_load_average_alone_is_not_a_busy_machine() {
        let env = Environment {
            logical_cores: 2,
            load_avg_1m: Some(1.8),
            runnable_threads: Some(3),
            cpu_pressure_some_avg10: Some(40.0),
            ..Default::default()
        };
        let kinds = |busy: f64| -> Vec<String> {
            noisy_machine_before_run(&env, busy)
                .into_iter()
                .map(|w| w.kind.to_string())
                .collect()
        };
        assert_eq!(kinds(95.0), vec!["busy_machine", "cpu_pressure"]);
        assert!(kinds(3.0).is_empty(), "{:?}", kinds(3.0));
    }

    fn reading(c: CpuCounters, app_ns: u64) -> MachineReading {
        MachineReading {
            counters: c,
            app_cpu_ns: Some(app_ns),
            ..Default::default()
        }
    }

    #[test]
    fn steal_and_throttle_read_from_counter_deltas() {
        let before = CpuCounters {
            steal: 0,
            total: 1000,
            throttle_count: Some(5),
            ..Default::default()
        };
        let after = CpuCounters {
            steal: 50,
            total: 2000,
            throttle_count: Some(7),
            ..Default::default()
        };
        let none = SpanSamples::default();
        let mut w = Vec::new();
        let m = machine_guards(&reading(before, 0), &reading(after, 0), &none, &mut w);
        let kinds: Vec<&str> = w.iter().map(|w| w.kind.as_str()).collect();
        assert_eq!(kinds, vec!["steal", "throttled"]);
        assert_eq!(m.foreign_pct, Some(0.0));
        assert_eq!(m.interference_pct, Some(5.0));
        let mut w = Vec::new();
        let _ = machine_guards(&reading(before, 0), &reading(before, 0), &none, &mut w);
        assert!(w.is_empty());
    }

    #[test]
    fn foreign_cpu_is_named_with_its_figure_and_added_to_steal() {
        // 1000 ticks of machine, 300 busy, the app used 0.5 s (50 ticks): 250 ticks foreign.
        let before = CpuCounters::default();
        let after = CpuCounters {
            user: 300,
            idle: 650,
            steal: 50,
            total: 1000,
            ..Default::default()
        };
        let tick_ns = 1_000_000_000 / rigor_probe::clock_ticks_per_second();
        let mut w = Vec::new();
        let m = machine_guards(
            &reading(before, 0),
            &reading(after, 50 * tick_ns),
            &SpanSamples::default(),
            &mut w,
        );
        let foreign = m.foreign_pct.unwrap();
        assert!((foreign - 25.0).abs() < 1e-6, "{foreign}");
        assert!((m.interference_pct.unwrap() - 30.0).abs() < 1e-6);
        let kinds: Vec<&str> = w.iter().map(|w| w.kind.as_str()).collect();
        assert_eq!(kinds, vec!["steal", "foreign_cpu"]);
        assert_eq!(
            w[1].message,
            "other processes used 25.0% of the machine's CPU during this iteration"
        );
        // Below the threshold, or unknown: no warning; unknown foreign leaves steal alone.
        let quiet = Interference {
            foreign_pct: Some(FOREIGN_WARN_PCT),
            cpu_pressure_pct: Some(90.0),
            ..Default::default()
        };
        let mut w = Vec::new();
        interference_guards(&quiet, &mut w);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(interference_pct(3.0, None), 3.0);
        // Pressure is named only with foreign work running.
        let busy = Interference {
            foreign_pct: Some(12.0),
            cpu_pressure_pct: Some(80.0),
            ..Default::default()
        };
        interference_guards(&busy, &mut w);
        let kinds: Vec<&str> = w.iter().map(|w| w.kind.as_str()).collect();
        assert_eq!(kinds, vec!["foreign_cpu", "cpu_pressure"]);
        assert!(w[1].message.contains("80%"), "{}", w[1].message);
    }
}
