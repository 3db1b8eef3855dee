//! Client CPU and placement: per-thread CPU clocks, pinning and the descriptor limit.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use nix::unistd::Pid;
use std::io;

/// CPU time consumed by the calling thread, in seconds.
pub fn thread_cpu_secs() -> f64 {
    // Raw libc on purpose: the engine reads this clock at the edges of the measured window,
    // where the reading itself should cost as little as it can; a bare vDSO call with an
    // out-parameter has nothing a wrapper would check.
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// How many CPUs this process may run on (its affinity mask).
pub fn allowed_cpus() -> usize {
    match allowed_cpu_list().len() {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// The CPUs this process may run on (empty when the mask cannot be read); what pinning can use.
pub fn allowed_cpu_list() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The affinity mask naming `cpus`, for `sched_setaffinity` here or in a child between fork and
/// exec (building it allocates nothing on success). A CPU number past what the mask can hold is
/// an error naming it, where the C macro would write past the mask.
pub fn cpu_set(cpus: &[usize]) -> io::Result<CpuSet> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "CPU {cpu} is out of range (the largest CPU number is {})",
                    CpuSet::count() - 1
                ),
            )
        })?;
    }
    Ok(set)
}

/// Pins the calling thread to `cpu`; a CPU number past what the affinity calls can name is an
/// error, not an abort.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    sched_setaffinity(Pid::from_raw(0), &cpu_set(&[cpu])?)?;
    Ok(())
}

/// Makes sure `needed` descriptors can be open, raising RLIMIT_NOFILE (soft, then hard) if it must.
pub fn ensure_fd_limit(needed: u64) -> Result<(), FdLimitError> {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return Ok(());
    };
    if soft >= needed {
        return Ok(());
    }
    if setrlimit(Resource::RLIMIT_NOFILE, needed.max(soft), hard.max(needed)).is_ok() {
        return Ok(());
    }
    Err(FdLimitError { needed, soft, hard })
}

/// RLIMIT_NOFILE is below what a run needs and could not be raised: says how to raise it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{needed} file descriptors are needed but the limit is {soft} (hard {hard}); raise it with `ulimit -n {needed}`"
)]
pub struct FdLimitError {
    /// Descriptors the run would hold open.
    pub needed: u64,
    /// The soft limit in force.
    pub soft: u64,
    /// The hard limit in force.
    pub hard: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_and_pinning() {
        let allowed = allowed_cpu_list();
        assert!(!allowed.is_empty());
        assert_eq!(allowed_cpus(), allowed.len());
        let e = pin_current_thread(CpuSet::count()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains(&CpuSet::count().to_string()), "{e}");
        // Pinning in a thread of its own, so the test runner's threads keep their mask.
        let cpu = allowed[0];
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(allowed_cpu_list(), vec![cpu]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn cpu_sets_are_checked_not_aborted() {
        let set = cpu_set(&[0, 2, 3]).unwrap();
        let named: Vec<usize> = (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap())
            .collect();
        assert_eq!(named, vec![0, 2, 3]);
        assert!(cpu_set(&[CpuSet::count() - 1]).is_ok());
        for c in [CpuSet::count(), 5000, usize::MAX] {
            let e = cpu_set(&[0, c]).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("CPU {c} is out of range")),
                "{e}"
            );
        }
    }

    #[test]
    fn fd_limit_already_met() {
        assert!(ensure_fd_limit(3).is_ok());
    }
}
