//! rigor's own processes as /proc shows them: who descends from rigor, who carries its owner
//! mark (an environment variable every application and build inherits), and their names.

use std::collections::BTreeSet;

/// The environment variable set on every application and build rigor starts: `PID:STARTTIME`
/// of the rigor that started it, so leftovers can be found even after they left its tree.
pub const MARK: &str = "RIGOR_OWNER";

/// One process, as much as rigor needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub comm: String,
    pub zombie: bool,
    pub start: u64,
}

impl Proc {
    /// `4242 (sleep)`.
    pub fn name(&self) -> String {
        format!("{} ({})", self.pid, self.comm)
    }
}

/// Reads `/proc/PID/stat`.
pub fn read(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    Some(Proc {
        pid,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        comm,
        zombie: rest.first().is_some_and(|s| *s == "Z" || *s == "X"),
        start: rest.get(19)?.parse().ok()?,
    })
}

/// Every process on the machine.
pub fn all() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read)
        .collect()
}

/// The value of `key` in a process's initial environment (readable for our own processes).
pub fn env_value(pid: i32, key: &str) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{key}=");
    bytes
        .split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// This rigor's owner mark: `PID:STARTTIME` (the start time tells a reused PID apart).
pub fn own_mark() -> String {
    let pid = std::process::id() as i32;
    format!("{pid}:{}", read(pid).map(|p| p.start).unwrap_or(0))
}

/// Whether the rigor named by an owner mark is still running.
pub fn owner_alive(mark: &str) -> bool {
    let Some((pid, start)) = mark.split_once(':') else {
        return false;
    };
    match (pid.parse::<i32>(), start.parse::<u64>()) {
        (Ok(pid), Ok(start)) => read(pid).is_some_and(|p| p.start == start && !p.zombie),
        _ => false,
    }
}

/// Processes that belong to this rigor: its descendants and whatever carries its mark, except
/// rigor itself and the `exclude`d ones (the sentinel).
pub fn ours(mark: &str, exclude: &[i32]) -> Vec<Proc> {
    let me = std::process::id() as i32;
    let procs = all();
    let mut tree: BTreeSet<i32> = BTreeSet::from([me]);
    loop {
        let before = tree.len();
        for p in &procs {
            if tree.contains(&p.ppid) && !exclude.contains(&p.pid) {
                tree.insert(p.pid);
            }
        }
        if tree.len() == before {
            break;
        }
    }
    // An excluded process's descendants carry the mark too: they are excluded with it.
    let mut spared: BTreeSet<i32> = exclude.iter().copied().collect();
    loop {
        let before = spared.len();
        for p in &procs {
            if spared.contains(&p.ppid) {
                spared.insert(p.pid);
            }
        }
        if spared.len() == before {
            break;
        }
    }
    procs
        .into_iter()
        .filter(|p| p.pid != me && !spared.contains(&p.pid))
        .filter(|p| tree.contains(&p.pid) || env_value(p.pid, MARK).as_deref() == Some(mark))
        .collect()
}

/// `4242 (sleep), 4250 (daemon)`.
pub fn names(list: &[Proc]) -> String {
    list.iter().map(Proc::name).collect::<Vec<_>>().join(", ")
}
