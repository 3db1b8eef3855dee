//! The application process of one iteration: spawned fresh in its own process group (and cgroup
//! when one can be made), watched until ready, and stopped so that nothing of it survives.

use super::logtail::tail;
use crate::config::{AppJob, Ready};
use crate::result::OutsideWindow;
use rigor_probe::Cgroup;
use std::fs::File;
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How long an application may take to stop on SIGTERM once the user interrupted the run.
const INTERRUPTED_GRACE: Duration = Duration::from_secs(2);

/// A running application and what is needed to stop it.
pub struct AppProcess {
    child: Child,
    pub pid: i32,
    pub spawned_at: Instant,
    pub log: PathBuf,
    exit: Option<ExitStatus>,
}

/// How the application ended.
#[derive(Debug, Default)]
pub struct StopOutcome {
    /// It ignored SIGTERM for the whole grace period and was killed.
    pub forced: bool,
    /// How long it actually had between SIGTERM and SIGKILL when `forced`: what a warning must
    /// state, since an interrupt shortens `stop_timeout`.
    pub grace_given: Duration,
    /// An interrupt (or a second signal) cut the grace short of `stop_timeout`, so raising
    /// `stop_timeout` would not have helped.
    pub grace_cut_short: bool,
    /// It had already exited before we asked (crash), with this status.
    pub exited_early: Option<String>,
    /// Processes still alive after SIGKILL (should never happen; reported if it does).
    pub survivors: Vec<i32>,
    /// Processes that outlived the application (daemonised, `setsid`) and had to be killed.
    pub left_behind: Vec<super::procs::Proc>,
}

/// Commands with shell syntax run as they are; a plain command is `exec`ed so the app is the
/// direct child (its PID is the one measured and signalled).
fn shell_line(command: &str) -> String {
    let compound = command.contains([';', '|', '&', '\n', '(', '`', '$', '>', '<']);
    if compound {
        command.to_string()
    } else {
        format!("exec {command}")
    }
}

impl AppProcess {
    /// Spawns the application with its env, folder, CPU set, cgroup and a combined log.
    pub fn spawn(job: &AppJob, log: &Path, cgroup: Option<&Cgroup>) -> Result<AppProcess, String> {
        let what = format!("`{}`", job.name);
        let mut cmd = super::shell::marked_shell(job, &shell_line(&job.command), log, &what)?;
        // Everything the child does before exec is prepared here: no allocation after fork.
        let procs: Vec<File> = cgroup
            .map(|c| {
                c.procs_path()
                    .iter()
                    .filter_map(|p| std::fs::OpenOptions::new().write(true).open(p).ok())
                    .collect()
            })
            .unwrap_or_default();
        let proc_fds: Vec<i32> = procs.iter().map(|f| f.as_raw_fd()).collect();
        for p in cgroup.map(|c| c.procs_path()).unwrap_or_default() {
            if let Some(dir) = p.parent() {
                super::sentinel::watch_cgroup(dir);
            }
        }
        // SAFETY: cpu_set_t is plain data; CPU_SET only writes bits within it.
        let cpuset = job.cpus.as_ref().map(|cpus| unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in cpus {
                libc::CPU_SET(*c, &mut set);
            }
            set
        });
        let base_nice = BASE_NICE.load(std::sync::atomic::Ordering::SeqCst);
        // SAFETY: the closure only makes async-signal-safe system calls on prepared data.
        unsafe {
            cmd.pre_exec(move || {
                let pid = libc::getpid();
                let mut buf = [0u8; 16];
                let mut n = pid as u32;
                let mut i = buf.len();
                loop {
                    i -= 1;
                    buf[i] = b'0' + (n % 10) as u8;
                    n /= 10;
                    if n == 0 {
                        break;
                    }
                }
                for fd in &proc_fds {
                    libc::write(*fd, buf[i..].as_ptr().cast(), buf.len() - i);
                }
                if let Some(set) = &cpuset {
                    if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                if base_nice != i32::MIN {
                    libc::setpriority(libc::PRIO_PROCESS, 0, base_nice);
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let spawned_at = Instant::now();
        let child = cmd
            .spawn()
            .map_err(|e| format!("`{}`: cannot start `{}`: {e}", job.name, job.command))?;
        drop(procs);
        let pid = child.id() as i32;
        crate::interrupt::register_group(pid);
        Ok(AppProcess {
            child,
            pid,
            spawned_at,
            log: log.to_path_buf(),
            exit: None,
        })
    }

    /// The exit status if the application has ended on its own.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        self.exit
    }

    /// The log tail, for error messages (bounded in lines and bytes).
    pub fn log_tail(&self) -> String {
        tail(&self.log, 15)
    }

    /// Polls the readiness check until it passes, the app exits, the timeout expires or the user
    /// interrupts. Requests the check sends are added to `outside`.
    pub fn wait_ready(
        &mut self,
        ready: &Ready,
        timeout: Duration,
        outside: &mut OutsideWindow,
    ) -> Result<Duration, String> {
        let deadline = self.spawned_at + timeout;
        let mut scan = super::logtail::Scan::default();
        loop {
            if let Some(status) = self.exited() {
                return Err(format!(
                    "the application exited ({status}) before it was ready\n{}",
                    self.log_tail()
                ));
            }
            if crate::interrupt::interrupted() {
                return Err("interrupted while waiting for the application".into());
            }
            let ok = match ready {
                Ready::Http(url) => {
                    match rigor_load::probe_request(url, "GET", &[], None, Duration::from_secs(1)) {
                        Ok(r) => {
                            outside.requests += 1;
                            outside.bytes += r.bytes_sent;
                            (200..300).contains(&r.status)
                        }
                        Err(_) => false,
                    }
                }
                Ready::Tcp(addr) => addr
                    .to_socket_addrs()
                    .ok()
                    .and_then(|mut a| a.next())
                    .map(|a| TcpStream::connect_timeout(&a, Duration::from_millis(250)).is_ok())
                    .unwrap_or(false),
                Ready::Stdout(text) | Ready::Stderr(text) => scan.finds(&self.log, text),
            };
            if ok {
                return Ok(self.spawned_at.elapsed());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the application was not ready after {:.1}s ({})\n{}",
                    timeout.as_secs_f64(),
                    describe(ready),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM to the group, a grace period, then SIGKILL; then checks nothing remains.
    pub fn stop(mut self, grace: Duration, cgroup: Option<&Cgroup>) -> StopOutcome {
        let mut outcome = StopOutcome::default();
        let pgid = self.pid;
        if let Some(status) = self.exited() {
            outcome.exited_early = Some(status.to_string());
        }
        // SAFETY: killpg only sends signals to the group we created.
        unsafe { libc::killpg(pgid, libc::SIGTERM) };
        let termed_at = Instant::now();
        let deadline = termed_at + grace;
        // Interrupted, the user is waiting: a short grace; a second signal: none.
        let interrupted_grace = Instant::now() + INTERRUPTED_GRACE;
        while Instant::now() < deadline
            && !crate::interrupt::hurry()
            && !(crate::interrupt::interrupted() && Instant::now() >= interrupted_grace)
        {
            if self.exited().is_some() {
                reap_group(pgid);
            }
            if self.exit.is_some() && !group_alive(pgid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.exit.is_none() || group_alive(pgid) {
            outcome.forced = self.exit.is_none();
            outcome.grace_given = termed_at.elapsed();
            outcome.grace_cut_short = Instant::now() < deadline;
            // SAFETY: as above.
            unsafe { libc::killpg(pgid, libc::SIGKILL) };
        }
        let _ = self.child.wait();
        reap_group(pgid);
        // What escaped the group (a daemonised or `setsid` child) is still ours: rigor is its
        // subreaper and it carries rigor's mark. Name it, then kill it.
        let (left, _) = super::reaper::sweep(Duration::from_millis(300));
        let mut in_cgroup: Vec<i32> = cgroup.map(|c| c.pids()).unwrap_or_default();
        in_cgroup.retain(|p| !left.iter().any(|l| l.pid == *p));
        outcome.left_behind = left;
        outcome
            .left_behind
            .extend(in_cgroup.into_iter().filter_map(super::procs::read));
        if let Some(c) = cgroup {
            c.kill_all();
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            reap_group(pgid);
            let mut left: Vec<i32> = cgroup.map(|c| c.pids()).unwrap_or_default();
            for p in &left {
                // SAFETY: reaping our own (sub-reaped) descendants only.
                unsafe { libc::waitpid(*p, std::ptr::null_mut(), libc::WNOHANG) };
            }
            if group_alive(pgid) {
                left.push(-pgid);
            }
            if left.is_empty() || Instant::now() >= deadline {
                outcome.survivors = left;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        crate::interrupt::unregister_group(pgid);
        outcome
    }
}

fn describe(ready: &Ready) -> String {
    match ready {
        Ready::Http(u) => format!("no 2xx from {u}"),
        Ready::Tcp(a) => format!("no TCP connect to {a}"),
        Ready::Stdout(t) => format!("`{t}` never appeared on stdout"),
        Ready::Stderr(t) => format!("`{t}` never appeared on stderr"),
    }
}

/// Whether any process of the group exists (zombies reaped first by the caller).
fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::killpg(pgid, 0) == 0 }
}

/// Reaps exited members of the group that were reparented to rigor (it is a subreaper).
fn reap_group(pgid: i32) {
    loop {
        // SAFETY: waits only on children in our own process group `pgid`.
        let r = unsafe { libc::waitpid(-pgid, std::ptr::null_mut(), libc::WNOHANG) };
        if r <= 0 {
            break;
        }
    }
}

/// rigor's nice value before it raised its own priority for the load; applications start with it.
static BASE_NICE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(i32::MIN);

/// Remembers the current nice value, so raising rigor's priority never leaks into applications.
pub fn remember_base_nice() {
    // SAFETY: getpriority only reads this process's nice value (errno ignored: -1 is a valid nice).
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    BASE_NICE.store(nice, std::sync::atomic::Ordering::SeqCst);
}
