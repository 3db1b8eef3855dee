//! One reading of a process tree (and optionally its cgroup): the raw material the sampler
//! collects and the figures are computed from.

use crate::cgroup::Cgroup;
use crate::cpu_time::{boot_ticks_now, proc_cpu, ProcCpu};
use crate::procfs::{clock_ticks_per_second, read, status_value, Stat};
use crate::tree::descendants;
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::time::Instant;

/// A snapshot of a process tree at one instant.
#[derive(Debug, Clone)]
pub struct ProcSample {
    /// When the snapshot was taken (monotonic).
    pub at: Instant,
    /// The same instant in clock ticks since boot, the clock of processes' start times.
    pub boot_ticks: u64,
    /// The CPU account of each process (ns), so the CPU between two samples counts every
    /// process that ran in between, children that lived less than an interval included.
    pub cpu: BTreeMap<i32, ProcCpu>,
    /// The cgroup's own CPU counter (ns), read first, at `at`: it sees every process that
    /// ever ran in the cgroup, so it is preferred to the tree's accounts when present.
    pub cgroup_cpu_ns: Option<u64>,
    /// Sum of VmRSS over the tree (shared pages are counted once per process).
    pub rss_bytes: u64,
    /// Sum of Private_Clean + Private_Dirty (USS) over the tree; `None` when any process's
    /// smaps could not be read (e.g. not permitted), because a partial sum would understate.
    pub uss_bytes: Option<u64>,
    /// Sum of Pss over the tree: memory the tree owns, pages shared among its own processes
    /// (a pre-fork server's copy-on-write heap) counted once; `None` like `uss_bytes`.
    pub pss_bytes: Option<u64>,
    /// OS threads over the tree.
    pub threads: u64,
    /// Involuntary context switches of each live thread of the tree, by thread id: a thread's
    /// count leaves with it when it exits, so the window's figure keeps each thread's last
    /// reading (see [`crate::AppFigures::nonvoluntary_ctxt_switches`]).
    pub nonvoluntary_ctxt_switches: BTreeMap<i32, u64>,
    /// Number of processes in the tree.
    pub pids: usize,
    /// The cgroup's memory usage (v2 memory.current, v1 memory.usage_in_bytes).
    pub cgroup_memory: Option<u64>,
    /// The page-cache part of the cgroup's memory.
    pub cgroup_cache: Option<u64>,
    /// The anonymous part of the cgroup's memory.
    pub cgroup_anon: Option<u64>,
}

/// Reads the tree rooted at `root` plus any other process in `cgroup`, and the cgroup's memory. `None` when the root is gone
/// (or a zombie: exited but not yet reaped).
pub fn sample_tree(root: i32, cgroup: Option<&Cgroup>) -> Option<ProcSample> {
    let mut pids = descendants(root);
    if pids.is_empty() {
        return None;
    }
    // Processes that left the tree (daemonised, parent exited) but stayed in the app's cgroup
    // are still the app's.
    if let Some(cg) = cgroup {
        for pid in cg.pids() {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
    }
    let clock_ticks = clock_ticks_per_second().max(1);
    let tick_ns = 1_000_000_000 / clock_ticks;
    // The CPU counters are read in one tight pass right after the timestamp, before the slower
    // memory reads: the time between them is what a CPU rate is divided by, so any delay
    // between the clock and the counters shows as a rate above what the CPUs could give.
    let at = Instant::now();
    let mut sample = ProcSample {
        at,
        boot_ticks: boot_ticks_now(clock_ticks),
        cpu: BTreeMap::new(),
        cgroup_cpu_ns: cgroup.and_then(Cgroup::cpu_usage_ns),
        rss_bytes: 0,
        uss_bytes: Some(0),
        pss_bytes: Some(0),
        threads: 0,
        nonvoluntary_ctxt_switches: BTreeMap::new(),
        pids: 0,
        cgroup_memory: None,
        cgroup_cache: None,
        cgroup_anon: None,
    };
    let mut live = Vec::with_capacity(pids.len());
    for pid in pids {
        let Some(stat) = Stat::read(pid) else {
            if pid == root {
                return None;
            }
            continue; // exited between the listing and now
        };
        // A zombie root has exited; only its parent's wait() is left to happen.
        if pid == root && matches!(stat.state, 'Z' | 'X') {
            return None;
        }
        // A zombie has released its memory and threads; only its final CPU counts.
        sample.cpu.insert(pid, proc_cpu(pid, &stat, tick_ns));
        sample.pids += 1;
        if stat.state != 'Z' {
            live.push((pid, stat.num_threads()));
        }
    }
    for (pid, stat_threads) in live {
        if let Some(status) = read(format!("/proc/{pid}/status")) {
            sample.rss_bytes += status_value(&status, "VmRSS").unwrap_or(0);
            sample.threads += status_value(&status, "Threads").unwrap_or(stat_threads);
        }
        sample
            .nonvoluntary_ctxt_switches
            .extend(nonvoluntary_switches(pid));
        match memory_rollup(pid) {
            Ok(Some(r)) => {
                if let Some(u) = sample.uss_bytes.as_mut() {
                    *u += r.uss;
                }
                if let Some(p) = sample.pss_bytes.as_mut() {
                    *p += r.pss;
                }
            }
            Ok(None) => {} // exited meanwhile
            Err(()) => {
                sample.uss_bytes = None;
                sample.pss_bytes = None;
            }
        }
    }
    if let Some(cg) = cgroup {
        sample.cgroup_memory = cg.memory_bytes();
        sample.cgroup_cache = cg.page_cache_bytes();
        sample.cgroup_anon = cg.anon_bytes();
    }
    Some(sample)
}

/// Involuntary context switches of every live thread of `pid`, by thread id (/proc/PID/status
/// alone reports only the main thread's).
fn nonvoluntary_switches(pid: i32) -> Vec<(i32, u64)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| {
            let t = t.ok()?;
            let tid = t.file_name().to_str()?.parse().ok()?;
            let status = read(t.path().join("status"))?;
            Some((tid, status_value(&status, "nonvoluntary_ctxt_switches")?))
        })
        .collect()
}

/// What smaps says one process holds.
struct Rollup {
    /// Private_Clean + Private_Dirty: pages no other process maps.
    uss: u64,
    /// Pss: each page divided by the number of processes mapping it.
    pss: u64,
}

/// USS and PSS of one process from smaps_rollup (or smaps on kernels before 4.14).
/// `Ok(None)`: the process is gone. `Err`: it exists but cannot be read.
fn memory_rollup(pid: i32) -> Result<Option<Rollup>, ()> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"));
    let text = match rollup {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            match std::fs::read_to_string(format!("/proc/{pid}/smaps")) {
                Ok(t) => t,
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(_) => return Err(()),
            }
        }
        Err(e) if e.raw_os_error() == Some(nix::errno::Errno::ESRCH as i32) => return Ok(None),
        Err(_) => return Err(()),
    };
    // Kernel threads and zombies have an empty rollup: they own no memory.
    let mut r = Rollup { uss: 0, pss: 0 };
    for line in text.lines() {
        for key in ["Private_Clean", "Private_Dirty"] {
            if let Some(v) = status_value(line, key) {
                r.uss += v;
            }
        }
        if let Some(v) = status_value(line, "Pss") {
            r.pss += v;
        }
    }
    Ok(Some(r))
}
