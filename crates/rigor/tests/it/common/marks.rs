//! Finding what a test's rigor left behind: processes carrying the test's own mark (an
//! environment variable in the job's `env`, inherited by every descendant), cgroups named after
//! a rigor PID; and a guard that kills all of it when a test ends, failing or not.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The environment variable tests put in a job's `env` to find its processes.
pub const MARK: &str = "RIGOR_TEST_MARK";

/// `rigor run` arguments for one iteration whose result and logs stay in the test's folder.
pub fn one_iteration() -> Vec<&'static str> {
    [super::RUN, &["-i", "1"]].concat()
}

/// A mark unique to this test process and `name`.
pub fn token(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{name}-{}-{nanos}", std::process::id())
}

/// Live (non-zombie) processes whose environment holds `MARK=token`, as `PID (comm)`.
pub fn marked(token: &str) -> Vec<(i32, String)> {
    let want = format!("{MARK}={token}");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        if stat[close + 1..].trim_start().starts_with(['Z', 'X']) {
            continue;
        }
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if env.split(|b| *b == 0).any(|kv| kv == want.as_bytes()) {
            out.push((pid, stat[open + 1..close].to_string()));
        }
    }
    out
}

/// Waits up to `timeout` for every marked process to be gone; returns what is left.
pub fn left_after(token: &str, timeout: Duration) -> Vec<(i32, String)> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = marked(token);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `cond` holds (polling), or panics naming `what` after `timeout`.
pub fn wait_for(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Cgroup folders (every hierarchy rigor could use) named `rigor-PID-…` for this rigor PID.
pub fn rigor_cgroups(rigor_pid: u32) -> Vec<PathBuf> {
    let prefix = format!("rigor-{rigor_pid}-");
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let paths: Vec<&str> = own
        .lines()
        .filter_map(|l| l.splitn(3, ':').nth(2))
        .collect();
    let mut mounts = vec![PathBuf::from("/sys/fs/cgroup")];
    if let Ok(rd) = std::fs::read_dir("/sys/fs/cgroup") {
        mounts.extend(rd.flatten().map(|e| e.path()));
    }
    let mut found = Vec::new();
    for m in &mounts {
        for p in &paths {
            let dir = m.join(p.trim_start_matches('/'));
            if let Ok(rd) = std::fs::read_dir(&dir) {
                for e in rd.flatten() {
                    if e.file_name().to_string_lossy().starts_with(&prefix) && e.path().is_dir() {
                        found.push(e.path());
                    }
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Starts rigor in `dir` with stdout and stderr in `stdout.txt` and `stderr.txt` there.
pub fn spawn_rigor(dir: &Path, args: &[&str]) -> Child {
    super::rigor_command(dir, args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(dir.join("stdout.txt")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .spawn()
        .expect("start rigor")
}

/// Waits up to `timeout` for a child to end; kills it (and fails) if it does not.
pub fn wait_exit(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rigor did not exit within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Kills, when dropped, a rigor still running and every process carrying the test's mark, so a
/// failing test leaves nothing behind.
pub struct Cleanup {
    pub token: String,
    pub pids: Vec<i32>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in &self.pids {
            // SAFETY: kill only sends a signal, to a process this test started.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        for (pid, _) in marked(&self.token) {
            // SAFETY: as above, to a process carrying this test's mark.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}
