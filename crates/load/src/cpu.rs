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

/// The CPUs this process may run on (empty when the mask cannot be read).
pub fn allowed_cpu_list() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Pins the calling thread to `cpu`; a CPU number past what the affinity calls can name is an
/// error, not an abort.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    let mut set = CpuSet::new();
    set.set(cpu).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is out of range"),
        )
    })?;
    sched_setaffinity(Pid::from_raw(0), &set)?;
    Ok(())
}

/// Makes sure `needed` descriptors can be open, raising RLIMIT_NOFILE (soft, then hard) if it must.
pub fn ensure_fd_limit(needed: u64) -> Result<(), String> {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return Ok(());
    };
    if soft >= needed {
        return Ok(());
    }
    if setrlimit(Resource::RLIMIT_NOFILE, needed.max(soft), hard.max(needed)).is_ok() {
        return Ok(());
    }
    Err(format!(
        "{needed} file descriptors are needed but the limit is {soft} (hard {hard}); raise it with `ulimit -n {needed}`"
    ))
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
    fn fd_limit_already_met() {
        assert!(ensure_fd_limit(3).is_ok());
    }
}
