//! A noisy machine: busy before the run, CPU stolen by a hypervisor, or throttled during it.

use crate::result::Warning;
use rigor_probe::{CpuCounters, Environment};

/// Warnings about the machine's state before the first iteration.
pub fn noisy_machine_before_run(env: &Environment) -> Vec<Warning> {
    let mut out = Vec::new();
    let cores = env.logical_cores.max(1) as f64;
    if let Some(load) = env.load_avg_1m {
        if load / cores > 0.5 {
            out.push(Warning::new(
                "busy_machine",
                format!(
                    "the machine was busy before the run: load average {load:.2} on {} cores ({:.2} per core)",
                    env.logical_cores,
                    load / cores
                ),
                "stop other work on the machine (or wait for it to settle) and run again",
            ));
        }
    }
    if let Some(p) = env.cpu_pressure_some_avg10 {
        if p > 10.0 {
            out.push(Warning::new(
                "cpu_pressure",
                format!("CPU pressure was {p:.1}% (some, avg10) before the run: tasks were waiting for CPU"),
                "stop other work on the machine and run again",
            ));
        }
    }
    if let Some(g) = &env.governor {
        if g != "performance" {
            out.push(Warning::new(
                "governor",
                format!("the CPU frequency governor is `{g}`, not `performance`: clock speed may drift between iterations"),
                "set the governor to performance (cpupower frequency-set -g performance)",
            ));
        }
    }
    out
}

/// Warnings about what the machine did during one iteration.
pub fn machine_guards(before: &CpuCounters, after: &CpuCounters, warnings: &mut Vec<Warning>) {
    let steal = after.steal_pct_since(before);
    if steal > 2.0 {
        warnings.push(Warning::new(
            "steal",
            format!("the hypervisor stole {steal:.1}% of the CPU during this iteration"),
            "use a dedicated host or instance type; stolen time makes figures vary with the neighbours",
        ));
    }
    if let Some(n) = after.throttled_since(before) {
        if n > 0 {
            warnings.push(Warning::new(
                "throttled",
                format!("the CPU was thermally throttled {n} time(s) during this iteration"),
                "cool the machine, or run fewer/shorter iterations with pauses",
            ));
        }
    }
}
