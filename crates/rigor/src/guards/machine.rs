//! A noisy machine: busy before the run, CPU stolen by a hypervisor, or throttled during it.

use crate::result::{Warning, WarningKind};
use rigor_probe::{CpuCounters, Environment};

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

/// Warnings about what the machine did during one iteration, and the readings themselves.
pub fn machine_guards(
    before: &CpuCounters,
    after: &CpuCounters,
    warnings: &mut Vec<Warning>,
) -> crate::result::MachineDuring {
    let steal = after.steal_pct_since(before);
    if steal > 2.0 {
        warnings.push(Warning::of(
            WarningKind::Steal,
            format!("the hypervisor stole {steal:.1}% of the CPU during this iteration"),
        ));
    }
    if let Some(n) = after.throttled_since(before) {
        if n > 0 {
            warnings.push(Warning::of(
                WarningKind::Throttled,
                format!("the CPU was thermally throttled {n} time(s) during this iteration"),
            ));
        }
    }
    crate::result::MachineDuring {
        steal_pct: steal,
        busy_pct: after.busy_pct_since(before),
        throttle_events: after.throttled_since(before),
        ..Default::default()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Summary;

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
        let mut w = Vec::new();
        let _ = machine_guards(&before, &after, &mut w);
        let kinds: Vec<&str> = w.iter().map(|w| w.kind.as_str()).collect();
        assert_eq!(kinds, vec!["steal", "throttled"]);
        let mut w = Vec::new();
        let _ = machine_guards(&before, &before, &mut w);
        assert!(w.is_empty());
    }
}
