//! What this machine allows (online CPUs, open files), so numbers in the config and flags are
//! checked against it before anything is built or started.

/// Machine limits a plan is checked against; `None` means unknown (not checked).
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// CPUs that are online, for `cpus` lists.
    pub online_cpus: Option<Vec<usize>>,
    /// The most file descriptors this process may open (the hard limit), for `connections`.
    pub max_open_files: Option<u64>,
}

/// Descriptors kept for rigor itself (logs, pipes, /proc readings) on top of the connections.
pub const RESERVED_FDS: u64 = 64;

impl Limits {
    /// Reads the limits of the machine rigor runs on.
    pub fn this_machine() -> Limits {
        Limits {
            online_cpus: online_cpus(),
            max_open_files: open_file_limit(),
        }
    }

    /// The most connections one load job may open here, if known.
    pub fn max_connections(&self) -> Option<u64> {
        self.max_open_files
            .map(|n| n.saturating_sub(RESERVED_FDS).max(1))
    }
}

/// `/sys/devices/system/cpu/online` (e.g. `0-3,6`), or every CPU the process may count.
fn online_cpus() -> Option<Vec<usize>> {
    if let Ok(text) = std::fs::read_to_string("/sys/devices/system/cpu/online") {
        if let Ok(list) = super::parse_cpu_list(text.trim()) {
            return Some(list);
        }
    }
    std::thread::available_parallelism()
        .ok()
        .map(|n| (0..n.get()).collect())
}

/// The hard RLIMIT_NOFILE: the engine raises its soft limit up to it when it needs to.
fn open_file_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return None;
    }
    (lim.rlim_max != libc::RLIM_INFINITY).then_some(lim.rlim_max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_has_a_cpu_and_some_descriptors() {
        let l = Limits::this_machine();
        assert!(l.online_cpus.as_ref().is_some_and(|c| c.contains(&0)));
        assert!(l.max_connections().unwrap_or(1) >= 1);
    }
}
