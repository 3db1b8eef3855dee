//! The sentinel: a copy of rigor forked before anything starts, that outlives it by a moment.
//! It holds the read end of a pipe only rigor can write to; when rigor ends in any way —
//! SIGKILL and crashes included — the pipe closes and the sentinel kills every process group,
//! cgroup and marked process rigor started, so no application (nor its grandchildren, which no
//! parent-death signal reaches) survives it.

use super::procs;
use super::reaper;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};

static WRITE_FD: AtomicI32 = AtomicI32::new(-1);
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
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills the two-element array; O_CLOEXEC keeps both ends out of applications.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let [read_fd, write_fd] = fds;
    // SAFETY: rigor has a single thread here, so the child may run ordinary code after fork.
    match unsafe { libc::fork() } {
        0 => {
            // SAFETY: closing our copy of the write end; the read end sees EOF once rigor is gone.
            unsafe { libc::close(write_fd) };
            guard(read_fd, rigor, &mark);
        }
        child if child > 0 => {
            // SAFETY: rigor keeps only the write end.
            unsafe { libc::close(read_fd) };
            WRITE_FD.store(write_fd, Ordering::SeqCst);
            PID.store(child, Ordering::SeqCst);
        }
        _ => {
            // SAFETY: fork failed; both ends are ours to close.
            unsafe {
                libc::close(read_fd);
                libc::close(write_fd);
            }
        }
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

fn send(line: &str) {
    let fd = WRITE_FD.load(Ordering::SeqCst);
    if fd >= 0 && line.len() < 4096 {
        // SAFETY: one write(2) under PIPE_BUF is atomic; a dead sentinel gives EPIPE (ignored).
        unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
    }
}

/// How often the sentinel notes rigor's descendants while an application or build runs.
const TRACK_EVERY_MS: i32 = 1000;

/// The sentinel's life: collect what rigor reports (and, while something runs, rigor's
/// descendants — so even one that left its group and cleared its environment is known), then
/// clean up once the pipe closes.
fn guard(read_fd: i32, rigor: i32, mark: &str) -> ! {
    // SAFETY: only this process's own signal dispositions, name and standard streams change.
    unsafe {
        for sig in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
        libc::prctl(libc::PR_SET_NAME, c"rigor-sentinel".as_ptr());
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
    let mut groups: Vec<i32> = Vec::new();
    let mut cgroups: Vec<PathBuf> = Vec::new();
    let mut pending = Vec::new();
    let mut tracked: Vec<procs::Proc> = Vec::new();
    loop {
        let mut pfd = libc::pollfd {
            fd: read_fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let timeout = if groups.is_empty() {
            -1
        } else {
            TRACK_EVERY_MS
        };
        // SAFETY: polls one descriptor described by a local pollfd.
        if unsafe { libc::poll(&mut pfd, 1, timeout) } == 0 {
            track(rigor, &mut tracked);
            continue;
        }
        let mut buf = [0u8; 4096];
        // SAFETY: reads into a local buffer of the given length.
        let n = unsafe { libc::read(read_fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            break;
        }
        pending.extend_from_slice(&buf[..n as usize]);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line).trim().to_string();
            match line.split_once(' ') {
                Some(("g", p)) => groups.extend(p.parse::<i32>().ok()),
                Some(("u", p)) => groups.retain(|g| Some(*g) != p.parse().ok()),
                Some(("c", d)) => cgroups.push(PathBuf::from(d)),
                _ => {}
            }
        }
    }
    let mut killed = clean_up(&groups, &cgroups, mark);
    for p in tracked {
        // Only the very process seen (same start time), not a reused PID.
        if procs::read(p.pid).is_some_and(|now| now.start == p.start && !now.zombie) {
            // SAFETY: kill only sends a signal, to a process that descended from rigor.
            unsafe { libc::kill(p.pid, libc::SIGKILL) };
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
    unsafe { libc::_exit(0) }
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
            // SAFETY: killpg only sends a signal, to a group rigor registered and not released.
            unsafe { libc::killpg(*g, libc::SIGKILL) };
        }
        for p in &found {
            // SAFETY: as above, to a process rigor started.
            unsafe { libc::kill(p.pid, libc::SIGKILL) };
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
