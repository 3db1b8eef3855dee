//! A load tool's process. Started straight from its argv (no shell) in a process group of its
//! own, pinned to the load's CPUs, carrying rigor's owner mark; registered with the interrupt
//! handler and the sentinel, and given a parent-death signal, so it never outlives rigor (Ctrl-C
//! and a killed rigor included). Reaped with wait4, so its CPU is the kernel's account of the
//! tool and everything it waited for; while it runs, the probe reads its process tree.

use crate::tools::report::MAX_OUTPUT;
use crate::tools::{Invocation, Tool};
use nix::sys::prctl::set_pdeathsig;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// CPU (ns) of every tool process reaped so far: added to rigor's own CPU in the machine's
/// account, so a tool that exited inside a span is not counted as foreign work.
static FINISHED_CPU_NS: AtomicU64 = AtomicU64::new(0);

/// CPU of the tools rigor ran, ns: those reaped, plus the live trees of those still running
/// (they are spared, so the machine readings add their trees already).
pub fn finished_cpu_ns() -> u64 {
    FINISHED_CPU_NS.load(Ordering::SeqCst)
}

/// A running (or reaped) tool.
pub struct ToolProcess {
    pub pid: i32,
    pub started: Instant,
    stdout: PathBuf,
    stderr: PathBuf,
    ended: Option<(ExitStatus, Duration)>,
    cpu_ns: Option<u64>,
    /// The probe's last reading of the tree's CPU, for a tool whose rusage cannot be had.
    tree_ns: Option<u64>,
    /// How long it may run before [`ToolProcess::wait`] stops it as hung.
    limit: Duration,
    /// Whether it was stopped for running past `limit`.
    overran: bool,
}

impl ToolProcess {
    /// Writes the invocation's files, then starts it with stdout and stderr in
    /// `dir/STEM.stdout` and `dir/STEM.stderr`. A program that is not on PATH is an error
    /// saying so and how to install it.
    pub fn spawn(
        tool: Tool,
        inv: &Invocation,
        cpus: Option<&[usize]>,
        dir: &Path,
        stem: &str,
    ) -> anyhow::Result<ToolProcess> {
        for (path, bytes) in &inv.files {
            std::fs::write(path, bytes)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
        let stdout = dir.join(format!("{stem}.stdout"));
        let stderr = dir.join(format!("{stem}.stderr"));
        let create = |p: &Path| {
            std::fs::File::create(p)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", p.display()))
        };
        let (out, err) = (create(&stdout)?, create(&stderr)?);
        let cpuset = cpus
            .map(|c| {
                rigor_load::cpu_set(c)
                    .map_err(|e| anyhow::anyhow!("cannot pin {}: {e}", tool.name()))
            })
            .transpose()?;

        let mut cmd = Command::new(&inv.program);
        cmd.args(&inv.args)
            .env(super::procs::MARK, super::reaper::mark())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        // SAFETY: the closure only makes async-signal-safe system calls on prepared data.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(set) = &cpuset {
                    nix::sched::sched_setaffinity(Pid::from_raw(0), set)?;
                }
                set_pdeathsig(Signal::SIGKILL)?;
                Ok(())
            });
        }
        let started = Instant::now();
        let child = cmd.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => anyhow::anyhow!(
                "{} is not installed: `{}` is not on PATH ({})",
                tool.name(),
                inv.program,
                tool.install_hint()
            ),
            _ => anyhow::anyhow!("cannot start {} (`{}`): {e}", tool.name(), inv.program),
        })?;
        let pid = child.id() as i32;
        // Reaped here with wait4, never through `child`.
        drop(child);
        crate::interrupt::register_group(pid);
        super::reaper::spare(pid as u32);
        Ok(ToolProcess {
            pid,
            started,
            stdout,
            stderr,
            ended: None,
            cpu_ns: None,
            tree_ns: None,
            limit: inv.limit,
            overran: false,
        })
    }

    /// Its exit status once it has ended (reaping it then); reads its tree's CPU while it runs.
    pub fn poll(&mut self) -> Option<ExitStatus> {
        if let Some((status, _)) = self.ended {
            return Some(status);
        }
        let mut status = 0;
        // SAFETY: rusage is plain data, written by the kernel.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child's PID with out-parameters we own.
        let r = unsafe { libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == self.pid {
            let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
            let cpu = ns(usage.ru_utime) + ns(usage.ru_stime);
            // The tree reading can hold descendants the tool never waited for.
            let cpu = cpu.max(self.tree_ns.unwrap_or(0));
            self.cpu_ns = Some(cpu);
            FINISHED_CPU_NS.fetch_add(cpu, Ordering::SeqCst);
            self.finish(ExitStatus::from_raw(status));
        } else if r < 0 {
            // Not our child any more (reaped elsewhere): ended, CPU from the last reading.
            self.cpu_ns = self.tree_ns;
            self.finish(ExitStatus::from_raw(0));
        } else if let Some(ns) = rigor_probe::tree_cpu_ns(self.pid) {
            self.tree_ns = Some(ns);
        }
        self.ended.map(|(s, _)| s)
    }

    fn finish(&mut self, status: ExitStatus) {
        self.ended = Some((status, self.started.elapsed()));
        super::reaper::unspare(self.pid as u32);
        crate::interrupt::unregister_group(self.pid);
        // Whatever it started and left behind goes with it.
        let _ = killpg(Pid::from_raw(self.pid), Signal::SIGKILL);
    }

    /// Stops it: SIGINT to its group (wrk and oha print what they measured on it), `grace`,
    /// then SIGKILL; returns once it is reaped.
    pub fn stop(&mut self, grace: Duration) -> ExitStatus {
        if let Some(s) = self.poll() {
            return s;
        }
        let _ = killpg(Pid::from_raw(self.pid), Signal::SIGINT);
        let deadline = Instant::now() + grace;
        loop {
            if let Some(s) = self.poll() {
                return s;
            }
            if Instant::now() >= deadline || crate::interrupt::hurry() {
                let _ = killpg(Pid::from_raw(self.pid), Signal::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until it exits on its own, calling `tick` every 20 ms with the time since it
    /// started; `tick` returns false to stop it (an interrupt, a crashed application). A tool
    /// still running past its invocation's `limit` is stopped too, and [`Self::overrun`] says so.
    pub fn wait(&mut self, mut tick: impl FnMut(Duration) -> bool) -> ExitStatus {
        loop {
            if let Some(s) = self.poll() {
                return s;
            }
            if !tick(self.started.elapsed()) {
                return self.stop(Duration::from_secs(2));
            }
            if self.started.elapsed() > self.limit {
                self.overran = true;
                return self.stop(Duration::from_secs(2));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Why the run is no measurement when [`Self::wait`] stopped it for running past its limit
    /// (a hung tool): the error names the tool and the limit.
    pub fn overrun(&self, tool: Tool) -> Option<String> {
        self.overran.then(|| {
            format!(
                "{} was still running {:.0} s after it started (its run, a request timeout and \
                 {} s of grace): stopped it",
                tool.name(),
                self.limit.as_secs_f64(),
                crate::tools::OVERRUN_GRACE.as_secs()
            )
        })
    }

    /// From spawn to exit (to now while it runs).
    pub fn wall(&self) -> Duration {
        self.ended
            .map_or_else(|| self.started.elapsed(), |(_, d)| d)
    }

    /// CPU its tree used, ns, once it has ended.
    pub fn cpu_ns(&self) -> Option<u64> {
        self.cpu_ns
    }

    /// What it printed on stdout and stderr (each at most [`MAX_OUTPUT`] bytes, lossy UTF-8).
    pub fn output(&self) -> (String, String) {
        (read_bounded(&self.stdout), read_bounded(&self.stderr))
    }
}

impl Drop for ToolProcess {
    /// A tool never outlives the code that started it.
    fn drop(&mut self) {
        if self.ended.is_none() {
            self.stop(Duration::ZERO);
        }
    }
}

/// The file whole when it fits in [`MAX_OUTPUT`]; else its first and last halves around a line
/// saying how much was left out, so the summary a tool prints at its end is still read.
fn read_bounded(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let half = MAX_OUTPUT / 2;
    let mut bytes = Vec::new();
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map_or(0, |m| m.len());
    if len <= MAX_OUTPUT {
        let _ = f.take(MAX_OUTPUT).read_to_end(&mut bytes);
        return String::from_utf8_lossy(&bytes).into_owned();
    }
    let _ = (&mut f).take(half).read_to_end(&mut bytes);
    let mut end = Vec::new();
    if f.seek(SeekFrom::Start(len - half)).is_ok() {
        let _ = f.take(half).read_to_end(&mut end);
    }
    format!(
        "{}\n[… {} bytes of output left out …]\n{}",
        String::from_utf8_lossy(&bytes),
        len - bytes.len() as u64 - end.len() as u64,
        String::from_utf8_lossy(&end)
    )
}

/// For a rigor that runs tools and no application (`rigor load --tool`): makes it the reaper of
/// what a tool leaves behind, so a daemonising or `setsid` child stays in its tree.
pub fn adopt_orphans() {
    super::reaper::become_subreaper();
}

/// Kills what the tools left running after they exited (a daemonised or `setsid` child that
/// escaped the tool's group: it carries rigor's mark); names them (`4242 (sleep)`) for a
/// warning. Only for a rigor that runs no application: it sweeps every process of this rigor.
/// The tool's own group, killed as it was reaped, gets a moment to be gone first.
pub fn sweep_leftovers() -> Option<String> {
    let (killed, _) = super::reaper::sweep(Duration::from_millis(300));
    (!killed.is_empty()).then(|| super::procs::names(&killed))
}

/// Refuses a program that is on PATH under the tool's name but is not the tool (see
/// [`Tool::impostor`]); a program that is not on PATH at all is left to the start's own error.
pub fn check_identity(tool: Tool) -> anyhow::Result<()> {
    let on_path = std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| d.join(tool.program()).is_file())
    });
    if !on_path {
        return Ok(());
    }
    match tool.impostor(version(tool).as_deref()) {
        Some(why) => Err(anyhow::anyhow!(why)),

        None => Ok(()),
    }
}

/// The first line `tool` prints for its version flag, asked once per rigor process.
pub fn version(tool: Tool) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashMap<&'static str, Option<String>>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    seen.get_or_insert_with(HashMap::new)
        .entry(tool.name())
        .or_insert_with(|| first_line(tool.program(), tool.version_flag(), VERSION_WAIT))
        .clone()
}

/// How long a tool may take to print its version: a program of the same name that is not the
/// tool (one that waits on a terminal) must not hold the run.
const VERSION_WAIT: Duration = Duration::from_secs(5);

/// The first non-empty line `program flag` prints within `wait` (killed after that: `None`).
fn first_line(program: &str, flag: &str, wait: Duration) -> Option<String> {
    use std::io::Read;
    let mut child = Command::new(program)
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + wait;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut text = String::new();
    for pipe in [
        child.stdout.take().map(|p| Box::new(p) as Box<dyn Read>),
        child.stderr.take().map(|p| Box::new(p) as Box<dyn Read>),
    ]
    .into_iter()
    .flatten()
    {
        let mut bytes = Vec::new();
        let _ = pipe.take(64 * 1024).read_to_end(&mut bytes);
        text.push_str(&String::from_utf8_lossy(&bytes));
    }
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(program: &str, script: &str) -> Invocation {
        Invocation {
            program: program.into(),
            args: vec!["-c".into(), script.into()],
            files: vec![],
            limit: Duration::from_secs(60),
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("rigor-tool-child-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_finished_tool_has_its_output_exit_and_cpu() {
        let dir = scratch("done");
        let busy =
            "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo counted $i; echo oops >&2";
        let mut p = ToolProcess::spawn(Tool::Wrk, &inv("sh", busy), None, &dir, "t").unwrap();
        let exit = p.wait(|_| true);
        assert!(exit.success(), "{exit}");
        let (out, err) = p.output();
        assert_eq!((out.as_str(), err.as_str()), ("counted 300000\n", "oops\n"));
        let cpu = p.cpu_ns().expect("CPU of a reaped tool");
        assert!(cpu > 10_000_000, "a shell counting to 300000 used {cpu} ns");
        assert!(cpu as f64 <= p.wall().as_secs_f64() * 1e9 * 1.05 + 1e7);
        assert!(finished_cpu_ns() >= cpu);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_tool_told_to_stop_is_stopped_with_its_group() {
        let dir = scratch("stop");
        // A child of the tool that ignores SIGINT: the group's SIGKILL still ends it.
        let script = "trap '' INT; sleep 30 & wait";
        let mut p = ToolProcess::spawn(Tool::Oha, &inv("sh", script), None, &dir, "t").unwrap();
        let pid = p.pid;
        let t = Instant::now();
        let exit = p.wait(|ran| ran < Duration::from_millis(200));
        assert!(!exit.success());
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        // Zombies wait for a reaper this test process is not; living members would be a leak.
        // A SIGKILLed process dies when next scheduled: on a busy machine, a moment later.
        let living = || -> Vec<_> {
            super::super::procs::all()
                .into_iter()
                .filter(|p| p.pgrp == pid && !p.zombie)
                .collect()
        };
        let deadline = Instant::now() + Duration::from_secs(3);
        while !living().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            living().is_empty(),
            "the tool's group outlived it: {:?}",
            living()
        );
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_tool_running_past_its_limit_is_stopped_and_says_so() {
        let dir = scratch("overrun");
        let mut hung = inv("sh", "trap '' INT TERM; sleep 30 & wait");
        hung.limit = Duration::from_millis(300);
        let mut p = ToolProcess::spawn(Tool::Wrk, &hung, None, &dir, "t").unwrap();
        let t = Instant::now();
        let exit = p.wait(|_| true);
        assert!(!exit.success());
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        let why = p.overrun(Tool::Wrk).expect("an overrun");
        assert!(
            why.starts_with("wrk was still running 0 s after it started"),
            "{why}"
        );
        let mut quick = inv("sh", "true");
        quick.limit = Duration::from_secs(30);
        let mut p = ToolProcess::spawn(Tool::Wrk, &quick, None, &dir, "q").unwrap();
        assert!(p.wait(|_| true).success());
        assert_eq!(p.overrun(Tool::Wrk), None);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_output_past_the_bound_keeps_its_end_where_the_summary_is() {
        let dir = scratch("long");
        let path = dir.join("out");
        let line = "x".repeat(1023) + "\n";
        let mut text = line.repeat(6 * 1024);
        text.push_str("Requests/sec:  42.00\n");
        std::fs::write(&path, &text).unwrap();
        let kept = read_bounded(&path);
        assert!(kept.len() as u64 <= MAX_OUTPUT + 100, "{}", kept.len());
        assert!(kept.starts_with("xxx"), "the start is kept too");
        assert!(kept.ends_with("Requests/sec:  42.00\n"), "the end is lost");
        assert!(kept.contains("bytes of output left out"));
        std::fs::write(&path, "short\n").unwrap();
        assert_eq!(read_bounded(&path), "short\n");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_version_that_does_not_come_in_time_is_none() {
        let t = Instant::now();
        assert_eq!(first_line("sleep", "30", Duration::from_millis(200)), None);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        assert_eq!(
            first_line("echo", "tool 1.2", Duration::from_secs(5)).as_deref(),
            Some("tool 1.2")
        );
    }

    #[test]
    fn a_tool_that_is_not_installed_says_so_and_how_to_install_it() {
        let dir = scratch("missing");
        let e = ToolProcess::spawn(
            Tool::H2load,
            &inv("rigor-no-such-tool", ""),
            None,
            &dir,
            "t",
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "h2load is not installed: `rigor-no-such-tool` is not on PATH (Debian/Ubuntu: apt-get \
             install nghttp2-client)"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
