//! What this machine allows (online CPUs, open files), so numbers in the config and flags are
//! checked against it before anything is built or started.

use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};

/// Machine limits a plan is checked against; `None` means unknown (not checked).
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// CPUs that are online and allowed to rigor, for `cpus` lists.
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

/// CPUs that are online (`/sys/devices/system/cpu/online`, e.g. `0-3,6`) and in rigor's own
/// affinity mask (a container's cpuset): pinning to any other CPU fails.
fn online_cpus() -> Option<Vec<usize>> {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| super::parse_cpu_list(t.trim()).ok());
    let allowed = rigor_load::allowed_cpu_list();
    match (online, allowed.is_empty()) {
        (Some(online), false) => Some(online.into_iter().filter(|c| allowed.contains(c)).collect()),
        (Some(online), true) => Some(online),
        (None, false) => Some(allowed),
        (None, true) => std::thread::available_parallelism()
            .ok()
            .map(|n| (0..n.get()).collect()),
    }
}

/// The hard RLIMIT_NOFILE: the engine raises its soft limit up to it when it needs to.
fn open_file_limit() -> Option<u64> {
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    (hard != RLIM_INFINITY).then_some(hard)
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
