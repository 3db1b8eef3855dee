//! Raising the app's scheduling priority, as crank's "priority = high" does, and saying
//! whether it worked instead of silently measuring at normal priority.

use crate::procfs::Stat;
use crate::tree::descendants;

/// The nice value [`set_priority_high`] asks for.
pub const HIGH_PRIORITY_NICE: i32 = -10;

/// Sets nice -10 on every thread of `pid` and its descendants (Linux applies nice per thread,
/// and threads created later inherit it). `Err` says why not, e.g. missing CAP_SYS_NICE.
pub fn set_priority_high(pid: i32) -> Result<(), String> {
    let pids = descendants(pid);
    if pids.is_empty() {
        return Err(format!("process {pid} does not exist"));
    }
    let mut failures = Vec::new();
    for p in pids {
        let tids: Vec<i32> = std::fs::read_dir(format!("/proc/{p}/task"))
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_else(|_| vec![p]);
        for tid in tids {
            // SAFETY: setpriority has no memory-safety preconditions.
            let rc = unsafe {
                libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, HIGH_PRIORITY_NICE)
            };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                // A thread that exited meanwhile is not a failure.
                if e.raw_os_error() != Some(libc::ESRCH) {
                    failures.push(format!("thread {tid}: {e}"));
                }
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        let hint = if failures.iter().any(|f| f.contains("ermission")) {
            " (raising priority needs root or CAP_SYS_NICE)"
        } else {
            ""
        };
        Err(format!(
            "could not set nice {HIGH_PRIORITY_NICE}: {}{hint}",
            failures.join(", ")
        ))
    }
}

/// The nice value of a process's main thread, to record what priority the app really ran at.
pub fn nice(pid: i32) -> Option<i32> {
    Stat::read(pid).map(|s| s.nice() as i32)
}
