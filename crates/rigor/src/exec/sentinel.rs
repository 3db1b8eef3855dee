//! The sentinel: a copy of rigor forked before anything starts, that outlives it by a moment.
//! It holds the read end of a pipe only rigor can write to; when rigor ends in any way —
//! SIGKILL and crashes included — the pipe closes and the sentinel kills every process group,
//! cgroup and marked process rigor started, so no application (nor its grandchildren, which no
//! parent-death signal reaches) survives it.

use super::procs;
use super::reaper::{self, sigkill};
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{killpg, signal, SigHandler, Signal};
use nix::unistd::{dup2_stdin, dup2_stdout, fork, pipe2, ForkResult, Pid};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

/// rigor's end of the pipe: the sentinel's read end closes when the last copy of it does.
static WRITE_END: OnceLock<File> = OnceLock::new();
static PID: AtomicI32 = AtomicI32::new(-1);

/// The sentinel's PID, so sweeps of rigor's own children leave it alone.
pub fn pid() -> Option<i32> {
    Some(PID.load(Ordering::SeqCst)).filter(|p| *p > 0)
}

/// Forks the sentinel. Must run while rigor is still single-threaded (first thing in a command);
/// later calls are no-ops. Without it (fork failed) rigor still cleans up on every normal path.
pub fn start() {
    if pid().is_some() {
        return;
    }
    let mark = reaper::mark().to_string();
    let rigor = std::process::id() as i32;
    // O_CLOEXEC keeps both ends out of applications.
    let Ok((read_end, write_end)) = pipe2(OFlag::O_CLOEXEC) else {
        return;
    };
    // SAFETY: rigor has a single thread here, so the child may run ordinary code after fork.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            // Our copy of the write end goes, so the read end sees EOF once rigor is gone.
            drop(write_end);
            guard(File::from(read_end), rigor, &mark);
        }
        Ok(ForkResult::Parent { child }) => {
            // rigor keeps only the write end.
            drop(read_end);
            let _ = WRITE_END.set(File::from(write_end));
            PID.store(child.as_raw(), Ordering::SeqCst);
        }
        // Both ends close as they go out of scope.
        Err(_) => {}
    }
}

/// Tells the sentinel about a process group to kill if rigor dies.
pub fn watch_group(pgid: i32) {
    send(&format!("g {pgid}\n"));
}

/// Tells the sentinel a process group is gone (so a reused number is never killed).
pub fn forget_group(pgid: i32) {
    send(&format!("u {pgid}\n"));
}

/// Tells the sentinel about a cgroup folder to empty and remove if rigor dies.
pub fn watch_cgroup(dir: &std::path::Path) {
    send(&format!("c {}\n", dir.display()));
}

/// Tells the sentinel about a container to remove (with `PROGRAM rm -f NAME`) if rigor dies.
pub fn watch_container(program: &str, name: &str) {
    send(&format!("k {program} {name}\n"));
}

/// Tells the sentinel a container is removed.
pub fn forget_container(name: &str) {
    send(&format!("f {name}\n"));
}

fn send(line: &str) {
    if let Some(mut pipe) = WRITE_END.get().filter(|_| line.len() < 4096) {
        // One write(2) under PIPE_BUF is atomic; a dead sentinel gives EPIPE (ignored).
        let _ = pipe.write(line.as_bytes());
    }
}

/// How often the sentinel notes rigor's descendants while an application or build runs.
const TRACK_EVERY_MS: u16 = 1000;

/// What rigor reported to the sentinel, and what the sentinel saw itself.
#[derive(Default)]
struct Watched {
    groups: Vec<i32>,
    cgroups: Vec<PathBuf>,
    tracked: Vec<procs::Proc>,
    /// `(engine program, container name)` to remove.
    containers: Vec<(String, String)>,
}

/// The sentinel's life: collect what rigor reports (and, while something runs, rigor's
/// descendants — so even one that left its group and cleared its environment is known), then
/// clean up once the pipe closes.
fn guard(pipe: File, rigor: i32, mark: &str) -> ! {
    detach();
    let watched = listen(pipe, rigor);
    let mut killed = clean_up(&watched.groups, &watched.cgroups, mark);
    for (program, name) in &watched.containers {
        // The engine stops and removes it; its processes are not rigor's descendants.
        let _ = std::process::Command::new(program)
            .args(["rm", "-f", name])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
    for p in watched.tracked {
        // Only the very process seen (same start time), not a reused PID.
        if procs::read(p.pid).is_some_and(|now| now.start == p.start && !now.zombie) {
            sigkill(p.pid);
            if !killed.iter().any(|k| k.pid == p.pid) {
                killed.push(p);
            }
        }
    }
    if !killed.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "rigor: ended while its processes still ran; killed {}",
            procs::names(&killed)
        );
    }
    // SAFETY: leaves without running rigor's destructors or atexit handlers (a forked copy).
    // Raw libc: nix has no `_exit`.
    unsafe { libc::_exit(0) }
}

/// Makes the sentinel deaf to the signals meant for rigor, names it, and points its standard
/// input and output at /dev/null (stderr stays, for the final report).
fn detach() {
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGPIPE,
    ] {
        // SAFETY: ignoring a signal installs no handler code.
        let _ = unsafe { signal(sig, SigHandler::SigIgn) };
    }
    let _ = nix::sys::prctl::set_name(c"rigor-sentinel");
    if let Ok(null) = File::options().read(true).write(true).open("/dev/null") {
        let _ = dup2_stdin(&null);
        let _ = dup2_stdout(&null);
    }
}

/// Reads rigor's reports until the pipe closes (rigor is gone), noting rigor's descendants
/// every [`TRACK_EVERY_MS`] while a process group is watched.
fn listen(mut pipe: File, rigor: i32) -> Watched {
    let mut w = Watched::default();
    let mut pending = Vec::new();
    loop {
        let timeout = if w.groups.is_empty() {
            PollTimeout::NONE
        } else {
            PollTimeout::from(TRACK_EVERY_MS)
        };
        let mut pfd = [PollFd::new(pipe.as_fd(), PollFlags::POLLIN)];
        if poll(&mut pfd, timeout) == Ok(0) {
            track(rigor, &mut w.tracked);
            continue;
        }
        let mut buf = [0u8; 4096];
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        pending.extend_from_slice(&buf[..n]);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line).trim().to_string();
            match line.split_once(' ') {
                Some(("g", p)) => w.groups.extend(p.parse::<i32>().ok()),
                Some(("u", p)) => w.groups.retain(|g| Some(*g) != p.parse().ok()),
                Some(("c", d)) => w.cgroups.push(PathBuf::from(d)),
                Some(("k", c)) => w.containers.extend(
                    c.split_once(' ')
                        .map(|(p, n)| (p.to_string(), n.to_string())),
                ),
                Some(("f", n)) => w.containers.retain(|(_, name)| name != n),
                _ => {}
            }
        }
    }
    w
}

/// Notes rigor's descendants now alive (besides the sentinel), forgetting those gone.
fn track(rigor: i32, tracked: &mut Vec<procs::Proc>) {
    let me = std::process::id() as i32;
    let all = procs::all();
    tracked.retain(|t| all.iter().any(|p| p.pid == t.pid && p.start == t.start));
    let mut tree = vec![rigor];
    loop {
        let before = tree.len();
        for p in &all {
            if p.pid != me && tree.contains(&p.ppid) && !tree.contains(&p.pid) {
                tree.push(p.pid);
            }
        }
        if tree.len() == before {
            break;
        }
    }
    for p in all {
        if p.pid != rigor && tree.contains(&p.pid) && !tracked.iter().any(|t| t.pid == p.pid) {
            tracked.push(p);
        }
    }
}

/// Kills the groups, the marked processes and the cgroups' members; removes the cgroups.
fn clean_up(groups: &[i32], cgroups: &[PathBuf], mark: &str) -> Vec<procs::Proc> {
    let me = std::process::id() as i32;
    let mut killed: Vec<procs::Proc> = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    loop {
        let mut found: Vec<procs::Proc> = procs::all()
            .into_iter()
            .filter(|p| p.pid != me && !p.zombie)
            .filter(|p| {
                groups.contains(&p.pgrp)
                    || procs::env_value(p.pid, procs::MARK).as_deref() == Some(mark)
            })
            .collect();
        for g in groups {
            // A group rigor registered and did not release; one already gone needs no killing.
            let _ = killpg(Pid::from_raw(*g), Signal::SIGKILL);
        }
        for p in &found {
            sigkill(p.pid);
        }
        let done = found.is_empty();
        found.retain(|p| !killed.iter().any(|k| k.pid == p.pid));
        killed.extend(found);
        if done || std::time::Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for dir in cgroups {
        reaper::remove_cgroup_dir(dir);
    }
    killed
}
