// Shared helpers for the integration tests (included with `mod common;`).
#![allow(dead_code)]

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A spawned child in its own process group; the whole group is killed and reaped on drop, so a
/// failing assertion leaves no orphan behind.
pub struct Spawned {
    pub child: Child,
}

impl Spawned {
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Reads one line of the child's stdout (the child prints when it is ready).
    pub fn wait_line(&mut self) -> String {
        let out = self.child.stdout.as_mut().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(out)
            .read_line(&mut line)
            .expect("read child stdout");
        line
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // Our own child's process group.
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

pub fn spawn(cmd: &mut Command) -> Spawned {
    let child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn test child");
    Spawned { child }
}

pub fn sh(script: &str) -> Spawned {
    spawn(Command::new("sh").arg("-c").arg(script))
}

pub fn python(code: &str) -> Spawned {
    spawn(Command::new("python3").arg("-c").arg(code))
}

/// Polls `f` until it returns Some or `timeout` passes.
pub fn wait_for<T>(timeout: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// VmRSS of a process in bytes, from /proc/PID/status.
pub fn vm_rss(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

/// A scratch directory under the temp dir, removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("rigor-probe-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// CPU time of all live threads of `pid` in ns from /proc/PID/task/*/schedstat: the scheduler's
/// own clock, independent of the tick counts in /proc/PID/stat that the probe uses.
pub fn schedstat_ns(pid: i32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| {
            let s = std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok()?;
            s.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum()
}

/// Serialises the CPU-hungry tests of one binary so they don't starve each other on a
/// small machine.
pub static CPU_HOG: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// utime + stime + cutime + cstime of `pid` in seconds, from /proc/PID/stat: the process and
/// every child it has reaped, as the kernel accounts them.
pub fn tree_cpu_secs_from_stat(pid: i32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    // Fields 14..=17 of proc(5); `after` starts at field 3.
    let f: Vec<u64> = after
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|v| v.parse().unwrap())
        .collect();
    let hz = rigor_probe::clock_ticks_per_second() as f64;
    f.iter().sum::<u64>() as f64 / hz
}

/// A shell that sleeps `delay`, then runs `n` short-lived busy subshells one after another
/// (each lives a few ms: far less than a sampling interval), prints `done` and idles.
pub fn short_lived_children_script(n: u32, delay: &str) -> String {
    format!(
        "sleep {delay}; k=0; while [ $k -lt {n} ]; do \
           (i=0; while [ $i -lt 4000 ]; do i=$((i+1)); done); k=$((k+1)); \
         done; echo done; exec sleep 30"
    )
}

/// CPU seconds the figures give for the measured window: the mean over the window times its
/// length, in cores.
pub fn window_cpu_secs(samples: &rigor_probe::Samples) -> f64 {
    let w = samples.window();
    let secs = w.last().unwrap().at.duration_since(w[0].at).as_secs_f64();
    let f = samples.figures();
    f.cpu_mean_pct.unwrap() / 100.0 * samples.cpus_for_normalising() as f64 * secs
}

/// Runs the short-lived-children workload under a sampler (with `cgroup` when given) and
/// returns (CPU seconds the figures give for the window, the kernel's count for the shell and
/// every child it reaped over the same window).
pub fn measure_short_lived_children(cgroup: Option<rigor_probe::Cgroup>) -> (f64, f64) {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg(short_lived_children_script(80, "0.4"));
    if let Some(cg) = &cgroup {
        let joiner = cg.joiner().unwrap();
        // SAFETY: join_self only calls write(2) on already-open descriptors.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || joiner.join_self())
        };
    }
    let mut p = spawn(&mut cmd);
    let pid = p.pid();
    let sampler = rigor_probe::Sampler::start(pid, cgroup, Duration::from_millis(250)).unwrap();
    sampler.mark(rigor_probe::Mark::WindowStart);
    let before = tree_cpu_secs_from_stat(pid);
    assert_eq!(p.wait_line().trim(), "done");
    sampler.mark(rigor_probe::Mark::WindowEnd);
    let truth = tree_cpu_secs_from_stat(pid) - before;
    let samples = sampler.stop();
    (window_cpu_secs(&samples), truth)
}
