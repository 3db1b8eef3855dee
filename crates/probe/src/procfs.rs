//! Small readers for /proc and /sys files shared by the other modules.

use nix::unistd::{sysconf, SysconfVar};
use std::fs;
use std::path::Path;

/// Reads a whole file as a string, `None` on any error (the process may have exited).
pub(crate) fn read(path: impl AsRef<Path>) -> Option<String> {
    fs::read_to_string(path).ok()
}

/// Reads a file holding one value (sysfs style) and trims it.
pub(crate) fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    read(path).map(|s| s.trim().to_string())
}

/// Reads a file holding one unsigned integer.
pub(crate) fn read_u64(path: impl AsRef<Path>) -> Option<u64> {
    read_trimmed(path)?.parse().ok()
}

/// Numeric entries of /proc: the thread-group leaders (processes) currently alive.
pub(crate) fn all_pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// The /sys/devices/system/cpu/cpuN directories (one per CPU the kernel knows of).
pub(crate) fn cpu_dirs() -> Vec<std::path::PathBuf> {
    let Ok(dir) = fs::read_dir("/sys/devices/system/cpu") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let name = e.file_name();
        let n = name.to_str()?.strip_prefix("cpu")?;
        n.parse::<u32>().ok().map(|_| e.path())
    })
    .collect()
}

/// The fields of /proc/PID/stat after the `(comm)` part, indexed so that
/// `fields[n - 3]` is field `n` of proc(5).
pub(crate) struct Stat {
    pub comm: String,
    fields: Vec<u64>,
    pub state: char,
}

impl Stat {
    pub fn read(pid: i32) -> Option<Stat> {
        Self::parse(&read(format!("/proc/{pid}/stat"))?)
    }

    pub fn parse(text: &str) -> Option<Stat> {
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text.get(open + 1..close)?.to_string();
        let mut rest = text.get(close + 1..)?.split_whitespace();
        let state = rest.next()?.chars().next()?;
        // Field 3 (state) is not numeric; keep a placeholder so indices line up.
        let mut fields = vec![0];
        // Some fields (nice, priority) may be negative: parse as i64 and keep the bits.
        fields.extend(rest.map(|f| f.parse::<i64>().map(|v| v as u64).unwrap_or(0)));
        Some(Stat {
            comm,
            fields,
            state,
        })
    }

    fn field(&self, n: usize) -> u64 {
        self.fields.get(n - 3).copied().unwrap_or(0)
    }

    pub fn ppid(&self) -> i32 {
        self.field(4) as i32
    }

    /// utime + stime in clock ticks, for all threads (live and exited) of the process.
    pub fn cpu_ticks(&self) -> u64 {
        self.field(14) + self.field(15)
    }

    /// cutime + cstime in clock ticks: children that exited and were reaped by this process.
    pub fn children_cpu_ticks(&self) -> u64 {
        self.field(16) + self.field(17)
    }

    /// When the process started, in clock ticks since boot.
    pub fn start_ticks(&self) -> u64 {
        self.field(22)
    }

    pub fn nice(&self) -> i64 {
        self.field(19) as i64
    }

    pub fn num_threads(&self) -> u64 {
        self.field(20)
    }
}

/// Value of a `Key:   123 kB` line in a status-style file, converted to bytes when it has a kB unit.
pub(crate) fn status_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        let mut parts = rest.split_whitespace();
        let n: u64 = parts.next()?.parse().ok()?;
        Some(match parts.next() {
            Some("kB") => n * 1024,
            _ => n,
        })
    })
}

/// Value of a `key value` line (memory.stat, cpu.stat style).
pub(crate) fn keyed_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let mut parts = line.split_whitespace();
        (parts.next()? == key).then_some(())?;
        parts.next()?.parse().ok()
    })
}

/// Clock ticks per second used by /proc/PID/stat times.
pub fn clock_ticks_per_second() -> u64 {
    match sysconf(SysconfVar::CLK_TCK) {
        Ok(Some(v)) if v > 0 => v as u64,
        _ => 100,
    }
}

/// CPUs currently online: the default divisor that turns raw CPU into "100 = all cores".
pub fn online_cpus() -> usize {
    match sysconf(SysconfVar::_NPROCESSORS_ONLN) {
        Ok(Some(v)) if v > 0 => v as usize,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// How many CPUs a process may run on (its affinity mask), so a pinned app's CPU can be
/// normalised to the cores it was given rather than the whole machine.
pub fn allowed_cpus(pid: i32) -> Option<usize> {
    let status = read(format!("/proc/{pid}/status"))?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    cpu_list_len(list.trim())
}

/// Length of a kernel CPU list such as `0-3,8,10-11`.
pub(crate) fn cpu_list_len(list: &str) -> Option<usize> {
    if list.is_empty() {
        return Some(0);
    }
    let mut n = 0;
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                n += b.checked_sub(a)? + 1;
            }
            None => {
                part.trim().parse::<usize>().ok()?;
                n += 1;
            }
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_and_parens_in_comm() {
        let s =
            Stat::parse("42 (a) b (c)) S 7 42 42 0 -1 4194560 1 0 0 0 11 22 4 5 20 -5 3 0 100 0 0")
                .unwrap();
        assert_eq!(s.comm, "a) b (c)");
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid(), 7);
        assert_eq!(s.cpu_ticks(), 33);
        assert_eq!(s.children_cpu_ticks(), 9);
        assert_eq!(s.start_ticks(), 100);
        assert_eq!(s.nice(), -5);
        assert_eq!(s.num_threads(), 3);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list_len("0-3,8,10-11"), Some(7));
        assert_eq!(cpu_list_len("0"), Some(1));
        assert_eq!(cpu_list_len(""), Some(0));
        assert_eq!(cpu_list_len("x"), None);
    }

    #[test]
    fn status_values() {
        let t = "Name:\tx\nVmRSS:\t  1024 kB\nThreads:\t4\n";
        assert_eq!(status_value(t, "VmRSS"), Some(1024 * 1024));
        assert_eq!(status_value(t, "Threads"), Some(4));
        assert_eq!(status_value(t, "Vm"), None);
        assert_eq!(keyed_value("cache 5\nrss 7\n", "rss"), Some(7));
    }
}
