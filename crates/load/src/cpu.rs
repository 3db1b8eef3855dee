//! Client CPU and placement: per-thread CPU clocks, pinning and the descriptor limit.

use std::io;

/// CPU time consumed by the calling thread, in seconds.
pub fn thread_cpu_secs() -> f64 {
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
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let n = libc::CPU_COUNT(&set);
            if n > 0 {
                return n as usize;
            }
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPUs this process may run on.
pub fn allowed_cpu_list() -> Vec<usize> {
    // SAFETY: as above.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..8 * std::mem::size_of::<libc::cpu_set_t>())
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: as above; CPU_SET bounds-checks against the set size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is out of range"),
            ));
        }
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Makes sure `needed` descriptors can be open, raising RLIMIT_NOFILE (soft, then hard) if it must.
pub fn ensure_fd_limit(needed: u64) -> Result<(), String> {
    // SAFETY: getrlimit/setrlimit on a struct we own.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return Ok(());
        }
        if lim.rlim_cur >= needed {
            return Ok(());
        }
        let mut want = lim;
        want.rlim_cur = needed.max(lim.rlim_cur);
        if lim.rlim_max < needed {
            want.rlim_max = needed;
        }
        if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
            return Ok(());
        }
        Err(format!(
            "{needed} file descriptors are needed but the limit is {} (hard {}); raise it with `ulimit -n {needed}`",
            lim.rlim_cur, lim.rlim_max
        ))
    }
}
