//! Nothing outlives its iteration or its rigor: what an application or build left running is
//! found (descendants of rigor, which is their subreaper, and carriers of its owner mark), named
//! and killed; what a previous rigor that died left behind — processes and cgroups — is found
//! and removed at the next start.

use super::procs::{self, Proc, MARK};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// This rigor's owner mark, computed once.
pub fn mark() -> &'static str {
    static MARK_VALUE: OnceLock<String> = OnceLock::new();
    MARK_VALUE.get_or_init(procs::own_mark)
}

/// Makes rigor the reaper of its applications' orphans: a daemonising or `setsid` child stays
/// in rigor's tree, where [`sweep`] finds it.
pub fn become_subreaper() {
    // Best effort: without it orphans are still found by their mark.
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// Processes that serve the whole run and outlive its iterations by design (the transports of
/// load hosts' agents), each with its descendants; rigor ends them itself.
static SPARED: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Keeps `pid` and its descendants out of every sweep until [`unspare`].
pub fn spare(pid: u32) {
    SPARED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(pid as i32);
}

/// Ends [`spare`]: the process is being ended by its owner.
pub fn unspare(pid: u32) {
    SPARED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&p| p != pid as i32);
}

/// The processes [`spare`] keeps out of the sweeps.
pub fn spared() -> Vec<u32> {
    SPARED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|&p| p as u32)
        .collect()
}

/// Our processes still alive (zombie children are reaped on the way).
fn alive_ours() -> Vec<Proc> {
    let me = std::process::id() as i32;
    let mut exclude: Vec<i32> = super::sentinel::pid().into_iter().collect();
    exclude.extend(SPARED.lock().unwrap_or_else(|e| e.into_inner()).iter());
    procs::ours(mark(), &exclude)
        .into_iter()
        .filter(|p| {
            if p.zombie && p.ppid == me {
                // Reaps one exited child of ours that nothing else waits for.
                let _ = waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG));
            }
            !p.zombie
        })
        .collect()
}

/// Kills every process of ours still running after `grace` (time to exit on its own), and
/// returns the ones that had to be killed, for a warning naming them. Survivors of SIGKILL
/// (should never happen) are in the second list.
pub fn sweep(grace: Duration) -> (Vec<Proc>, Vec<Proc>) {
    let deadline = Instant::now() + grace;
    let mut left = alive_ours();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = alive_ours();
    }
    if left.is_empty() {
        return (left, Vec::new());
    }
    let mut killed = left.clone();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        for p in &left {
            sigkill(p.pid);
        }
        std::thread::sleep(Duration::from_millis(20));
        left = alive_ours();
        for p in &left {
            if !killed.iter().any(|k| k.pid == p.pid) {
                killed.push(p.clone());
            }
        }
        if left.is_empty() || Instant::now() >= deadline {
            return (killed, left);
        }
    }
}

/// Processes started by a rigor that is gone (its mark names a dead owner): killed, and named.
pub fn previous_leftovers() -> Vec<String> {
    let mut found: Vec<(Proc, String)> = procs::all()
        .into_iter()
        .filter(|p| !p.zombie)
        .filter_map(|p| {
            let owner = procs::env_value(p.pid, MARK)?;
            (!procs::owner_alive(&owner)).then_some((p, owner))
        })
        .collect();
    for (p, _) in &found {
        sigkill(p.pid);
    }
    found.sort_by_key(|(p, _)| p.pid);
    found
        .into_iter()
        .map(|(p, owner)| {
            let pid = owner.split(':').next().unwrap_or("?");
            format!("{} left by rigor {pid}", p.name())
        })
        .collect()
}

/// Removes `rigor-PID-*` cgroups under `parents` whose rigor PID no longer runs (after killing
/// what is left in them); returns the removed folders.
pub fn stale_cgroups(parents: &[PathBuf]) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for parent in parents {
        let Ok(entries) = std::fs::read_dir(parent) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(owner) = name
                .strip_prefix("rigor-")
                .and_then(|r| r.split('-').next())
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            if procs::read(owner).is_some_and(|p| !p.zombie) {
                continue;
            }
            if remove_cgroup_dir(&e.path()) {
                removed.push(e.path());
            }
        }
    }
    removed
}

/// Kills the processes of one cgroup folder and removes it (retrying while they exit).
pub fn remove_cgroup_dir(dir: &Path) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let pids: Vec<i32> = std::fs::read_to_string(dir.join("cgroup.procs"))
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default();
        for pid in &pids {
            sigkill(*pid);
        }
        match std::fs::remove_dir(dir) {
            Ok(()) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => return false,
        }
    }
}

/// SIGKILLs one process of ours (or a dead rigor's); one already gone needs no killing.
pub fn sigkill(pid: i32) {
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
}
