//! Raising the app's scheduling priority, as crank's "priority = high" does, and saying
//! whether it worked instead of silently measuring at normal priority.

use crate::procfs::Stat;
use crate::tree::descendants;
use nix::errno::Errno;
use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// The nice value [`set_priority_high`] asks for.
pub const HIGH_PRIORITY_NICE: i32 = -10;

/// Why [`set_priority_high`] could not raise a priority: the caller records it and warns.
#[derive(Debug, thiserror::Error)]
pub enum PriorityError {
    /// No such process (it may have exited already).
    #[error("process {pid} does not exist")]
    NoProcess { pid: i32 },
    /// setpriority refused for some threads: each `thread TID: why`, and whether a refusal
    /// was for lack of privilege (then the message says what it needs).
    #[error(
        "could not set nice {HIGH_PRIORITY_NICE}: {}{}",
        .threads.join(", "),
        if *.denied { " (raising priority needs root or CAP_SYS_NICE)" } else { "" }
    )]
    Refused { threads: Vec<String>, denied: bool },
}

/// Sets nice -10 on every thread of `pid` and its descendants (Linux applies nice per thread,
/// and threads created later inherit it). `Err` says why not, e.g. missing CAP_SYS_NICE.
pub fn set_priority_high(pid: i32) -> Result<(), PriorityError> {
    let pids = descendants(pid);
    if pids.is_empty() {
        return Err(PriorityError::NoProcess { pid });
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
            match set_nice_of(tid, HIGH_PRIORITY_NICE) {
                // A thread that exited meanwhile is not a failure.
                Ok(()) | Err(Errno::ESRCH) => {}
                Err(e) => failures.push(format!("thread {tid}: {}", io::Error::from(e))),
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        let denied = failures.iter().any(|f| f.contains("ermission"));
        Err(PriorityError::Refused {
            threads: failures,
            denied,
        })
    }
}

/// The nice value of a process's main thread, to record what priority the app really ran at.
pub fn nice(pid: i32) -> Option<i32> {
    Stat::read(pid).map(|s| s.nice() as i32)
}

/// The calling thread's nice value (Linux keeps one per thread; a new thread or child starts
/// with its creator's).
pub fn current_nice() -> io::Result<i32> {
    // getpriority may return -1 as a valid nice value, so only errno tells a failure.
    Errno::clear();
    // SAFETY: getpriority has no memory-safety preconditions. (nix has no wrapper for it.)
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    match Errno::last_raw() {
        0 => Ok(nice),
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

/// Sets the calling thread's nice value. One system call and no allocation, so a child may
/// call it between fork and exec (`CommandExt::pre_exec`); lowering it needs CAP_SYS_NICE.
pub fn set_nice(nice: i32) -> io::Result<()> {
    set_nice_of(0, nice).map_err(io::Error::from)
}

/// setpriority(PRIO_PROCESS) on one thread id (0: the calling thread).
fn set_nice_of(tid: i32, nice: i32) -> Result<(), Errno> {
    // SAFETY: setpriority has no memory-safety preconditions. (nix has no wrapper for it.)
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    Errno::result(rc).map(drop)
}

/// No base nice value remembered yet.
const UNSET: i32 = i32::MIN;

static BASE_NICE: AtomicI32 = AtomicI32::new(UNSET);

/// Remembers the calling thread's nice value as the one applications start with, before rigor
/// raises its own priority for the load: the raise must not leak into what it measures.
pub fn remember_base_nice() -> io::Result<i32> {
    let nice = current_nice()?;
    BASE_NICE.store(nice, Ordering::SeqCst);
    Ok(nice)
}

/// The nice value [`remember_base_nice`] recorded, for a child to restore with [`set_nice`].
pub fn base_nice() -> Option<i32> {
    let nice = BASE_NICE.load(Ordering::SeqCst);
    (nice != UNSET).then_some(nice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_is_read_set_and_remembered() {
        // In a thread of its own: nice is per thread, and the test runner's threads keep theirs.
        std::thread::spawn(|| {
            let start = current_nice().unwrap();
            assert!((-20..=19).contains(&start));
            assert_eq!(remember_base_nice().unwrap(), start);
            assert_eq!(base_nice(), Some(start));
            // Raising the nice value (less priority) needs no privilege.
            let lower = (start + 1).min(19);
            set_nice(lower).unwrap();
            assert_eq!(current_nice().unwrap(), lower);
            assert_eq!(base_nice(), Some(start), "the remembered value stays");
            // Going back needs CAP_SYS_NICE (or RLIMIT_NICE room): done, or refused as such.
            match set_nice(start) {
                Ok(()) => assert_eq!(current_nice().unwrap(), start),
                Err(e) => assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}"),
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn raising_a_missing_process_says_so() {
        let e = set_priority_high(i32::MAX).unwrap_err();
        assert!(matches!(e, PriorityError::NoProcess { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            format!("process {} does not exist", i32::MAX)
        );
    }
}
