//! CPU time of a process tree that no process can slip through: per-thread nanosecond runtime
//! for live threads, the reaped-children counters for processes that already exited, and the
//! rule that turns two snapshots into the CPU used in between.

use crate::procfs::{read, Stat};
use std::collections::BTreeMap;

/// The CPU account of one process at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProcCpu {
    /// CPU of the process itself in ns: the scheduler's runtime of its live threads
    /// (task/*/schedstat), or utime + stime when those ticks say more (threads that exited
    /// took their runtime with them; only the ticks keep it).
    pub own_ns: u64,
    /// CPU of its children that exited and were reaped by it (cutime + cstime, which include
    /// their own reaped descendants): how a child that lived between two samples is counted.
    pub children_ns: u64,
    /// Its parent at this instant: tells whether an exited process was reaped inside the tree.
    pub ppid: i32,
    /// When it started, in clock ticks since boot: tells a process forked between two samples
    /// (all its CPU is new) from one seen for the first time (its past is not).
    pub started_ticks: u64,
}

impl ProcCpu {
    /// Everything this process and its reaped children used, in ns.
    pub fn total_ns(&self) -> u64 {
        self.own_ns + self.children_ns
    }
}

/// Reads the account of `pid`, whose /proc/PID/stat was just read as `stat`.
pub(crate) fn proc_cpu(pid: i32, stat: &Stat, tick_ns: u64) -> ProcCpu {
    let ticks_ns = stat.cpu_ticks() * tick_ns;
    ProcCpu {
        own_ns: live_threads_ns(pid).map_or(ticks_ns, |ns| ns.max(ticks_ns)),
        children_ns: stat.children_cpu_ticks() * tick_ns,
        ppid: stat.ppid(),
        started_ticks: stat.start_ticks(),
    }
}

/// Sum of the scheduler's runtime (first field of schedstat, ns) over the live threads of
/// `pid`; `None` when the kernel has no schedstat (CONFIG_SCHED_INFO off).
fn live_threads_ns(pid: i32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = None;
    for t in tasks.flatten() {
        if let Some(ns) = read(t.path().join("schedstat"))
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        {
            *total.get_or_insert(0) += ns;
        }
    }
    total
}

/// Now on the clock /proc's start times use (CLOCK_BOOTTIME), in clock ticks, rounded down.
pub(crate) fn boot_ticks_now(clock_ticks: u64) -> u64 {
    let Ok(ts) = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME) else {
        return u64::MAX; // unknown: no process counts as newly forked
    };
    ts.tv_sec() as u64 * clock_ticks + ts.tv_nsec() as u64 * clock_ticks / 1_000_000_000
}

/// CPU used by the tree between snapshots `a` (taken at `a_boot_ticks`) and `b`, in ns.
///
/// A process present in both counts its growth (own and reaped children). A process new in `b`
/// that started after `a` was forked in between and counts whole; one that started earlier
/// (seen late) is only a baseline. A process gone from `b` whose parent is still in
/// the tree was reaped by that parent: its total moved into the parent's children counter, so
/// it is taken out once. A process reaped outside the tree (an orphan) takes its last interval
/// with it: only a cgroup counter sees that.
pub(crate) fn tree_cpu_ns(
    a: &BTreeMap<i32, ProcCpu>,
    a_boot_ticks: u64,
    b: &BTreeMap<i32, ProcCpu>,
) -> u64 {
    let mut now: i128 = 0;
    let mut before: i128 = 0;
    for (pid, cb) in b {
        match a.get(pid) {
            Some(ca) => before += ca.total_ns() as i128,
            None if cb.started_ticks < a_boot_ticks => continue,
            None => {}
        }
        now += cb.total_ns() as i128;
    }
    for (pid, ca) in a {
        if !b.contains_key(pid) && b.contains_key(&ca.ppid) {
            before += ca.total_ns() as i128;
        }
    }
    (now - before).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(own: u64, children: u64, ppid: i32) -> ProcCpu {
        ProcCpu {
            own_ns: own,
            children_ns: children,
            ppid,
            started_ticks: 1000,
        }
    }

    #[test]
    fn reaped_children_new_children_and_orphans() {
        let a: BTreeMap<_, _> = [(1, cpu(100, 0, 0)), (2, cpu(50, 0, 1)), (3, cpu(30, 0, 99))]
            .into_iter()
            .collect();
        // 1 grew by 10 and reaped 2 (which had used 70 by then) and a child that lived 40
        // entirely in between; 3 was reaped outside the tree; 4 is new with 5.
        let mut b: BTreeMap<_, _> = [(1, cpu(110, 110, 0)), (4, cpu(5, 0, 1))]
            .into_iter()
            .collect();
        // 10 (own) + 20 (2's last part) + 40 (short child) + 5 (new) = 75; 3's last part is lost.
        assert_eq!(tree_cpu_ns(&a, 1000, &b), 75);
        assert_eq!(tree_cpu_ns(&b, 1000, &b), 0);
        // A process that started before `a` but is seen only now brings no past CPU.
        b.insert(
            5,
            ProcCpu {
                started_ticks: 999,
                ..cpu(500, 0, 1)
            },
        );
        assert_eq!(tree_cpu_ns(&a, 1000, &b), 75);
        // A counter that reads lower (rounding) never gives negative CPU.
        let c: BTreeMap<_, _> = [(1, cpu(109, 110, 0))].into_iter().collect();
        assert_eq!(tree_cpu_ns(&b, 1000, &c), 0);
    }
}
