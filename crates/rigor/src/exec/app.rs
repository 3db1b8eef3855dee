//! The application process of one iteration: spawned fresh in its own process group (and cgroup
//! when one can be made), watched until ready, and stopped so that nothing of it survives.

use super::logtail::tail;
use crate::config::{AppJob, Ready};
use crate::result::OutsideWindow;
use nix::sched::sched_setaffinity;
use nix::sys::prctl::set_pdeathsig;
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use rigor_probe::Cgroup;
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How long an application may take to stop on SIGTERM once the user interrupted the run.
const INTERRUPTED_GRACE: Duration = Duration::from_secs(2);

/// Stops a container within the grace it is given; says whether it had to be killed.
pub(super) type ContainerStop = Box<dyn FnOnce(Duration) -> bool + Send>;

/// A running application and what is needed to stop it.
pub struct AppProcess {
    child: Child,
    /// The measured process: the child, or a container's first process.
    pub pid: i32,
    /// The child's process group, which is signalled and swept.
    pgid: i32,
    /// What stops a container before its client's group is signalled, given the grace.
    on_stop: Option<ContainerStop>,
    pub spawned_at: Instant,
    pub log: PathBuf,
    exit: Option<ExitStatus>,
    /// Why the application is not in the cgroup made for it, when it could not join.
    pub cgroup_error: Option<String>,
    /// Its stdout and stderr being copied to their capped logs, when it was started with a
    /// stdout of its own (a command job).
    pub output: Option<super::capped_log::Piped>,
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
/// direct child (its PID is the one measured and signalled). `exec` goes after the command's
/// leading `NAME=value` assignments (`exec FOO=1 prog` runs a program named `FOO=1`), and not
/// at all when the command already says `exec` or starts with what only the shell can run
/// (`exit 3`, `: `, `! prog`: `exec exit 3` fails with "exit: not found", status 127).
fn shell_line(command: &str) -> String {
    let compound = command.contains([';', '|', '&', '\n', '(', '`', '$', '>', '<']);
    if compound {
        return command.to_string();
    }
    let at = program_at(command);
    let rest = &command[at..];
    let word = rest.split([' ', '\t']).next().unwrap_or_default();
    if word == "exec" || SHELL_ONLY.contains(&word) {
        return command.to_string();
    }
    format!("{}exec {rest}", &command[..at])
}

/// Words `exec` cannot run, as they are no program: the shell's reserved words and the
/// builtins that have no executable of the same name.
const SHELL_ONLY: &[&str] = &[
    "!", "{", "if", "while", "until", "for", "case", ":", ".", "source", "eval", "exit", "return",
    "break", "continue", "export", "readonly", "local", "set", "unset", "shift", "trap", "cd",
    "ulimit", "umask", "wait", "read", "alias", "unalias", "command", "type", "hash", "times",
    "getopts", "jobs", "fg", "bg",
];

/// Where the program's word starts in a plain command: after blanks and `NAME=value` words
/// (values may be quoted).
fn program_at(command: &str) -> usize {
    let mut at = 0;
    loop {
        let word_start = at + command[at..].len() - command[at..].trim_start().len();
        let word = &command[word_start..];
        let name_len = word
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(word.len());
        let assignment = name_len > 0
            && !word.starts_with(|c: char| c.is_ascii_digit())
            && word[name_len..].starts_with('=');
        if !assignment {
            return word_start;
        }
        // The word ends at the first blank outside quotes.
        let mut quote = None;
        let mut end = word.len();
        for (i, c) in word.char_indices() {
            match (quote, c) {
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        at = word_start + end;
    }
}

impl AppProcess {
    /// Spawns the application with its env, folder, CPU set, cgroup and a combined log. A
    /// cgroup it could not join is said in `cgroup_error`; the application runs all the same.
    /// Its stdout goes to a file of its own when `stdout` is given (a command's figures are
    /// read from it).
    pub fn spawn(
        job: &AppJob,
        log: &Path,
        stdout: Option<&Path>,
        cgroup: Option<&Cgroup>,
    ) -> anyhow::Result<AppProcess> {
        Self::spawn_line(job, &shell_line(&job.command), log, stdout, cgroup)
    }

    /// [`AppProcess::spawn`] of a prepared shell line (a container engine's `run`).
    pub(super) fn spawn_line(
        job: &AppJob,
        line: &str,
        log: &Path,
        stdout: Option<&Path>,
        cgroup: Option<&Cgroup>,
    ) -> anyhow::Result<AppProcess> {
        let what = format!("`{}`", job.name);
        let line = line.to_string();
        // A command's output goes through rigor, which caps its logs; an application's goes
        // straight to its log.
        let (mut cmd, files) = match stdout {
            Some(out) => {
                let (cmd, o, e) = super::shell::marked_shell_piped(job, &line, log, out, &what)?;
                (cmd, Some((o, e, out)))
            }
            None => (
                super::shell::marked_shell_split(job, &line, log, None, &what)?,
                None,
            ),
        };
        // Everything the child does before exec is prepared here: no allocation after fork.
        let (joiner, mut cgroup_error) = match cgroup.map(Cgroup::joiner) {
            Some(Ok(j)) => (Some(j), None),
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, None),
        };
        for p in cgroup.map(|c| c.procs_path()).unwrap_or_default() {
            if let Some(dir) = p.parent() {
                super::sentinel::watch_cgroup(dir);
            }
        }
        let cpuset = job
            .cpus
            .as_deref()
            .map(|c| rigor_load::cpu_set(c).map_err(|e| anyhow::anyhow!("cannot pin: {e}")))
            .transpose()?;
        let base_nice = rigor_probe::priority::base_nice();
        // SAFETY: the closure only makes async-signal-safe system calls on prepared data.
        unsafe {
            cmd.pre_exec(move || {
                // A failed join is seen from the parent (the child is not in the cgroup).
                if let Some(j) = &joiner {
                    let _ = j.join_self();
                }
                if let Some(set) = &cpuset {
                    sched_setaffinity(Pid::from_raw(0), set)?;
                }
                if let Some(nice) = base_nice {
                    // Best effort, as before: the child keeps rigor's raised priority otherwise.
                    let _ = rigor_probe::priority::set_nice(nice);
                }
                set_pdeathsig(Signal::SIGKILL)?;
                Ok(())
            });
        }
        let spawned_at = Instant::now();
        let mut child = cmd
            .spawn()
            .map_err(|e| anyhow::anyhow!("`{}`: cannot start `{}`: {e}", job.name, job.command))?;
        drop(cmd);
        let pid = child.id() as i32;
        let output = match files {
            Some((o, e, out)) => {
                match super::capped_log::Piped::start(&mut child, (o, out), (e, log)) {
                    Ok(p) => Some(p),
                    Err(why) => {
                        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                        let _ = child.wait();
                        return Err(anyhow::anyhow!("`{}`: {why}", job.name));
                    }
                }
            }
            None => None,
        };
        crate::interrupt::register_group(pid);
        if let (Some(c), None) = (cgroup, &cgroup_error) {
            // Only a child still running can be looked for.
            let running = matches!(child.try_wait(), Ok(None));
            if running && !c.pids().contains(&pid) {
                cgroup_error = Some(format!("PID {pid} is not in {}", c.describe()));
            }
        }
        Ok(AppProcess {
            child,
            pid,
            pgid: pid,
            on_stop: None,
            spawned_at,
            log: log.to_path_buf(),
            exit: None,
            cgroup_error,
            output,
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
    ) -> anyhow::Result<Duration> {
        self.wait_ready_watching(ready, timeout, outside, &mut || {})
    }

    /// `wait_ready`, calling `before_answer` before each poll until the application first
    /// answers HTTP (any status) or holds a request past the poll's timeout: its last call saw
    /// the tree just before the server that actually serves was first asked something,
    /// whatever front accepted connections earlier.
    pub fn wait_ready_watching(
        &mut self,
        ready: &Ready,
        timeout: Duration,
        outside: &mut OutsideWindow,
        before_answer: &mut dyn FnMut(),
    ) -> anyhow::Result<Duration> {
        let deadline = self.spawned_at + timeout;
        let mut scan = super::logtail::Scan::default();
        let mut http = HttpReadiness::default();
        loop {
            if let Some(status) = self.exited() {
                return Err(anyhow::anyhow!(
                    "the application exited ({status}) before it was ready\n{}",
                    self.log_tail()
                ));
            }
            if crate::interrupt::interrupted() {
                anyhow::bail!("interrupted while waiting for the application");
            }
            let ok = match ready {
                Ready::Http(url) => {
                    if !http.answered {
                        before_answer();
                    }
                    http.check(url, outside)
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
                return Err(anyhow::anyhow!(
                    "the application was not ready after {:.1}s ({}{})\n{}",
                    timeout.as_secs_f64(),
                    describe(ready),
                    http.last
                        .as_deref()
                        .map(|l| format!("; last: {l}"))
                        .unwrap_or_default(),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Measures `pid` in place of the child from now on, and calls `on_stop` (with the grace
    /// the stop gives) before the child's group is signalled: a container's first process,
    /// and its engine's stop.
    pub(super) fn measure_instead(&mut self, pid: i32, on_stop: ContainerStop) {
        self.pid = pid;
        self.on_stop = Some(on_stop);
    }

    /// SIGTERM to the group, a grace period, then SIGKILL; then checks nothing remains.
    pub fn stop(mut self, grace: Duration, cgroup: Option<&Cgroup>) -> StopOutcome {
        let mut outcome = StopOutcome::default();
        let pgid = self.pgid;
        if let Some(status) = self.exited() {
            outcome.exited_early = Some(status.to_string());
        }
        if let Some(stop) = self.on_stop.take() {
            let grace = if crate::interrupt::hurry() {
                Duration::ZERO
            } else if crate::interrupt::interrupted() {
                grace.min(INTERRUPTED_GRACE)
            } else {
                grace
            };
            let asked = Instant::now();
            if stop(grace) && outcome.exited_early.is_none() {
                outcome.forced = true;
                outcome.grace_given = asked.elapsed().min(grace);
                outcome.grace_cut_short = crate::interrupt::interrupted();
            }
        }
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGTERM);
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
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
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
                // Reaping our own (sub-reaped) descendants only.
                let _ = waitpid(Pid::from_raw(*p), Some(WaitPidFlag::WNOHANG));
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

/// The state of an HTTP readiness check across its polls: the protocol the server was found to
/// speak, and what the last poll saw (for the error when readiness never comes).
#[derive(Default)]
struct HttpReadiness {
    /// The server answered HTTP/2 where HTTP/1.1 failed (an h2c-only or h2-only server): every
    /// later poll speaks HTTP/2.
    http2: bool,
    /// Some poll got an HTTP answer (any status), or its request was held past the poll's
    /// timeout: the server behind the port took a request.
    answered: bool,
    last: Option<String>,
}

impl HttpReadiness {
    /// One poll: whether `url` answered 2xx. A server that fails HTTP/1.1 once it is reachable
    /// (an answer that is not HTTP/1.x, ALPN without `http/1.1`, a close) is asked over HTTP/2.
    fn check(&mut self, url: &str, outside: &mut OutsideWindow) -> bool {
        let poll = Duration::from_secs(1);
        let h2 =
            |url: &str| rigor_load::probe_request_http2(url, "GET", &[], None, poll, None, true);
        let mut got = if self.http2 {
            h2(url)
        } else {
            rigor_load::probe_request(url, "GET", &[], None, poll)
        };
        if !self.http2 && got.as_ref().is_err_and(may_speak_http2_only) {
            if let Ok(r) = h2(url) {
                self.http2 = true;
                got = Ok(r);
            }
        }
        match got {
            Ok(r) => {
                self.answered = true;
                outside.requests += 1;
                outside.bytes += r.bytes_sent;
                let proto = if self.http2 { " over HTTP/2" } else { "" };
                self.last = Some(format!("status {}{proto}", r.status));
                (200..300).contains(&r.status)
            }
            Err(e) => {
                // A server that holds the request past the poll's timeout, or answers what is
                // not HTTP, took it: a front that cannot reach its server only closes.
                use rigor_load::LoadError as E;
                self.answered |= matches!(e, E::Timeout { .. } | E::Protocol { .. });
                self.last = Some(e.to_string());
                false
            }
        }
    }
}

/// Whether an HTTP/1.1 failure came from a reachable server that may speak only HTTP/2: not
/// a refused connect, an unresolved name or silence.
fn may_speak_http2_only(e: &rigor_load::LoadError) -> bool {
    use rigor_load::LoadError as E;
    matches!(
        e,
        E::Protocol { .. } | E::Closed { .. } | E::Tls { .. } | E::Io { .. }
    )
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
    // No signal: only checks for existence.
    killpg(Pid::from_raw(pgid), None).is_ok()
}

/// Reaps exited members of the group that were reparented to rigor (it is a subreaper).
fn reap_group(pgid: i32) {
    // Waits only on children in our own process group `pgid`.
    while let Ok(status) = waitpid(Pid::from_raw(-pgid), Some(WaitPidFlag::WNOHANG)) {
        if status == WaitStatus::StillAlive {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shell_line;

    /// What `sh -c` prints running `command` as the application's line.
    fn sh(command: &str) -> (bool, String) {
        let out = std::process::Command::new("sh")
            .args(["-c", &shell_line(command)])
            .output()
            .unwrap();
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    }

    #[test]
    fn a_plain_command_is_execed_after_its_assignments_and_once() {
        assert_eq!(shell_line("prog --x 1"), "exec prog --x 1");
        assert_eq!(shell_line("exec prog"), "exec prog");
        assert_eq!(shell_line("A=1 B='x y' prog"), "A=1 B='x y' exec prog");
        assert_eq!(shell_line("A=1 exec prog"), "A=1 exec prog");
        assert_eq!(shell_line("echo a; prog"), "echo a; prog");
        // Run as the shell runs them: each reaches the program, with its environment.
        let (ok, text) = sh("exec echo hi");
        assert!(ok && text == "hi\n", "{text}");
        let (ok, text) = sh("RIGOR_T='a b' env");
        assert!(ok && text.contains("RIGOR_T=a b\n"), "{text}");
        let (ok, text) = sh("RIGOR_T=1 exec env");
        assert!(ok && text.contains("RIGOR_T=1\n"), "{text}");
        // `=` inside the program's own arguments is not an assignment.
        assert_eq!(shell_line("prog --opt=1"), "exec prog --opt=1");
        assert_eq!(shell_line("./prog a=1"), "exec ./prog a=1");
    }

    /// A command the shell alone can run keeps its own status and meaning: `exec exit 3` would
    /// end 127 with "exit: not found".
    #[test]
    fn a_shell_builtin_is_run_by_the_shell_not_execed() {
        let status = |command: &str| {
            std::process::Command::new("sh")
                .args(["-c", &shell_line(command)])
                .output()
                .unwrap()
                .status
                .code()
        };
        assert_eq!(status("exit 3"), Some(3));
        assert_eq!(status("RIGOR_T=1 exit 4"), Some(4));
        assert_eq!(status(":"), Some(0));
        assert_eq!(status("! false"), Some(0));
        assert_eq!(status("eval exit 5"), Some(5));
        assert_eq!(status("exit"), Some(0));
        // A program whose name merely starts like a builtin is still exec'ed.
        assert_eq!(shell_line("exiter 1"), "exec exiter 1");
    }
}
