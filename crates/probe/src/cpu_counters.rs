//! Machine-wide counters read before and after each iteration: a VM whose host steals CPU, or a
//! CPU that throttles from heat, changes the numbers without any code change.

use crate::procfs::{cpu_dirs, read, read_u64};
use std::collections::BTreeSet;

/// A snapshot of the `cpu` line of /proc/stat (clock ticks, all CPUs) and the thermal
/// throttle counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuCounters {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    /// Time the hypervisor ran something else while this VM wanted the CPU.
    pub steal: u64,
    /// user + nice + system + idle + iowait + irq + softirq + steal (guest time is inside user).
    pub total: u64,
    /// Sum of core_throttle_count over CPUs plus package_throttle_count once per package;
    /// `None` where the kernel exposes no thermal_throttle (most VMs, non-Intel).
    pub throttle_count: Option<u64>,
}

/// Reads the counters now.
pub fn cpu_counters() -> CpuCounters {
    let mut c = read("/proc/stat")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("cpu "))
                .map(parse_cpu_line)
        })
        .unwrap_or_default();
    c.throttle_count = throttle_count();
    c
}

fn parse_cpu_line(line: &str) -> CpuCounters {
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let mut c = CpuCounters {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
        total: 0,
        throttle_count: None,
    };
    c.total = c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal;
    c
}

fn throttle_count() -> Option<u64> {
    let mut total = None;
    let mut packages = BTreeSet::new();
    for cpu in cpu_dirs() {
        let tt = cpu.join("thermal_throttle");
        if let Some(n) = read_u64(tt.join("core_throttle_count")) {
            *total.get_or_insert(0) += n;
        }
        // Every CPU of a package shows the same package counter: count it once.
        let package = read_u64(cpu.join("topology/physical_package_id"));
        if packages.insert(package) {
            if let Some(n) = read_u64(tt.join("package_throttle_count")) {
                *total.get_or_insert(0) += n;
            }
        }
    }
    total
}

impl CpuCounters {
    /// Percentage of all CPU time stolen by the hypervisor between `earlier` and `self`.
    pub fn steal_pct_since(&self, earlier: &CpuCounters) -> f64 {
        pct(
            self.steal.saturating_sub(earlier.steal),
            self.total.saturating_sub(earlier.total),
        )
    }

    /// Percentage of all CPU time that was busy (not idle, not iowait) in between: how loaded
    /// the whole machine was, the app and the load client included.
    pub fn busy_pct_since(&self, earlier: &CpuCounters) -> f64 {
        let idle = |c: &CpuCounters| c.idle + c.iowait;
        let dt = self.total.saturating_sub(earlier.total);
        pct(
            dt.saturating_sub(idle(self).saturating_sub(idle(earlier))),
            dt,
        )
    }

    /// Throttle events in between; `None` when the machine has no counters. `Some(0)` is the
    /// good answer.
    pub fn throttled_since(&self, earlier: &CpuCounters) -> Option<u64> {
        Some(self.throttle_count?.saturating_sub(earlier.throttle_count?))
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_deltas() {
        let a = parse_cpu_line("cpu  100 0 100 700 0 0 0 100 0 0");
        let b = parse_cpu_line("cpu  150 0 150 750 0 0 0 150 0 0");
        assert_eq!(a.total, 1000);
        assert_eq!(b.steal_pct_since(&a), 25.0);
        assert_eq!(b.busy_pct_since(&a), 75.0);
        assert_eq!(a.steal_pct_since(&a), 0.0);
        assert_eq!(b.throttled_since(&a), None);
        let t = |n| CpuCounters {
            throttle_count: Some(n),
            ..a
        };
        assert_eq!(t(7).throttled_since(&t(3)), Some(4));
    }
}
