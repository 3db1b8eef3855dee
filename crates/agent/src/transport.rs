//! How rigor reaches a load host: a command that gives a remote shell on stdio. Either the
//! user's own OpenSSH client (with their `~/.ssh/config`, keys and agent as they are), or any
//! command line (`kubectl exec -i POD --`, `docker exec -i CONTAINER`) followed by `sh -c CMD`.
//! Nothing listens on a port: every byte goes over the transport's stdin and stdout.

use super::error::AgentError;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a transport's command learns of the user's interrupt and hands its process group to
/// whoever kills groups on a second signal or rigor's death (this module knows neither).
pub struct Hooks {
    pub interrupted: fn() -> bool,
    pub register_group: fn(i32),
    pub unregister_group: fn(i32),
}

static HOOKS: std::sync::OnceLock<Hooks> = std::sync::OnceLock::new();

/// Sets the [`Hooks`] once, when rigor's signal handling is installed.
pub fn set_hooks(hooks: Hooks) {
    let _ = HOOKS.set(hooks);
}

/// How long, after the transport exited, its output is awaited from a process it left behind
/// with its pipes open.
const LEFT_OPEN: Duration = Duration::from_secs(2);

/// Everything `pipe` gives until it closes, read on a thread of its own (empty when there is
/// no pipe or no thread).
fn read_all(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        let _ = std::thread::Builder::new()
            .name("rigor-transport-read".into())
            .spawn(move || {
                let mut s = String::new();
                let _ = pipe.read_to_string(&mut s);
                let _ = tx.send(s);
            });
    }
    rx
}

/// A load host and how to reach it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostSpec {
    /// The name errors and reports use (`host load1: …`).
    pub name: String,
    /// `user@host` (or a `Host` alias of the ssh config) to reach over ssh.
    pub ssh: Option<String>,
    /// ssh's `-p`.
    pub port: Option<u16>,
    /// ssh's `-i`.
    pub identity: Option<PathBuf>,
    /// More ssh arguments, passed as they are (`-o`, `ConnectTimeout=5`, `-J`, `bastion`).
    pub options: Vec<String>,
    /// Instead of ssh, a command line split the way sh splits words (quotes and backslashes,
    /// no expansion); the remote command follows it as `sh -c CMD`. `env` runs it on this
    /// machine.
    pub transport: Option<String>,
    /// The addresses this host's share of a load comes from, in place of the load's own
    /// (empty: the load's): each host has addresses of its own, and one process's open-file
    /// limit caps its connections, so a big load is spread over hosts and their addresses.
    pub source_addrs: Vec<std::net::IpAddr>,
}

/// The OpenSSH exit status that means ssh itself failed (unreachable, auth refused, bad config).
pub const SSH_FAILED: i32 = 255;

impl HostSpec {
    /// Whether the transport is ssh, whose exit status 255 is its own failure.
    pub fn is_ssh(&self) -> bool {
        self.transport.is_none()
    }

    /// `host NAME`, the start of every error about this host.
    pub fn label(&self) -> String {
        format!("host {}", self.name)
    }

    /// The argv that runs the sh command line `cmd` on the host.
    pub fn argv(&self, cmd: &str) -> Result<Vec<String>, AgentError> {
        match (&self.ssh, &self.transport) {
            (Some(dest), None) => {
                let mut argv = vec!["ssh".to_string()];
                if let Some(p) = self.port {
                    argv.extend(["-p".into(), p.to_string()]);
                }
                if let Some(i) = &self.identity {
                    argv.extend(["-i".into(), i.display().to_string()]);
                }
                argv.extend(self.options.iter().cloned());
                // Never a password or host-key prompt: there is no terminal to answer it.
                argv.extend([
                    "-o".into(),
                    "BatchMode=yes".into(),
                    dest.clone(),
                    "--".into(),
                ]);
                // ssh hands its command to the user's login shell, whatever it is: `sh -c` with
                // one quoted word reads the same in sh, bash, zsh, fish and csh.
                argv.push(format!("sh -c {}", sh_quote(cmd)));
                Ok(argv)
            }
            (None, Some(t)) => {
                let mut argv = shlex::split(t).ok_or_else(|| {
                    self.settings(format!(
                        "the transport {t:?} has an unclosed quote or a trailing backslash"
                    ))
                })?;
                if argv.is_empty() {
                    return Err(self.settings("the transport command is empty".into()));
                }
                argv.extend(["sh".into(), "-c".into(), cmd.into()]);
                Ok(argv)
            }
            (Some(_), Some(_)) => {
                Err(self.settings("give either ssh or transport, not both".into()))
            }
            (None, None) => {
                Err(self.settings("give ssh (user@host) or a transport command".into()))
            }
        }
    }

    /// The error for settings that give no command line.
    fn settings(&self, why: String) -> AgentError {
        AgentError::Settings {
            host: self.label(),
            why,
        }
    }

    /// The error for a transport that failed as `why` says.
    fn transport_error(&self, why: String) -> AgentError {
        AgentError::Transport {
            host: self.label(),
            why,
        }
    }

    /// A `Command` for `cmd` on the host.
    pub fn command(&self, cmd: &str) -> Result<Command, AgentError> {
        let argv = self.argv(cmd)?;
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]);
        Ok(c)
    }

    /// Runs `cmd` on the host to completion, with `input` (a file) streamed to its stdin. A
    /// transport that does not finish within `limit` (a host that never answers), or a Ctrl-C
    /// meanwhile, is stopped with its whole process group and is an error saying `what` was
    /// being done.
    pub fn run(
        &self,
        cmd: &str,
        input: Option<&Path>,
        what: &str,
        limit: Duration,
    ) -> Result<Remote, AgentError> {
        let mut c = self.command(cmd)?;
        c.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
        let mut child = c.spawn().map_err(|e| self.spawn_error(&e))?;
        let pgid = child.id() as i32;
        // A second signal kills it with the applications; rigor's death kills it too.
        let hooks = HOOKS.get();
        if let Some(h) = hooks {
            (h.register_group)(pgid);
        }
        let outcome = self.finish(&mut child, input, what, limit);
        if let Some(h) = hooks {
            (h.unregister_group)(pgid);
        }
        outcome
    }

    fn finish(
        &self,
        child: &mut std::process::Child,
        input: Option<&Path>,
        what: &str,
        limit: Duration,
    ) -> Result<Remote, AgentError> {
        let feeder = match (input, child.stdin.take()) {
            (Some(path), Some(mut stdin)) => {
                let path = path.to_path_buf();
                Some(std::thread::spawn(move || -> std::io::Result<u64> {
                    let mut f = std::fs::File::open(&path)?;
                    let n = std::io::copy(&mut f, &mut stdin)?;
                    stdin.flush()?;
                    Ok(n)
                }))
            }
            _ => None,
        };
        let stdout = read_all(child.stdout.take());
        let stderr = read_all(child.stderr.take());
        let deadline = Instant::now() + limit;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => {
                    return Err(self.transport_error(format!("waiting for the transport: {e}")))
                }
            }
            let why = if HOOKS.get().is_some_and(|h| (h.interrupted)()) {
                Some("interrupted".to_string())
            } else if Instant::now() >= deadline {
                Some(format!(
                    "no answer through the transport within {} s",
                    limit.as_secs_f64()
                ))
            } else {
                None
            };
            if let Some(why) = why {
                let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
                let _ = child.wait();
                return Err(
                    self.transport_error(format!("{what}: {why} (the transport was stopped)"))
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // What the transport printed; a process it left behind holding its pipes is not waited
        // for.
        let stdout = stdout.recv_timeout(LEFT_OPEN).unwrap_or_default();
        let stderr = stderr.recv_timeout(LEFT_OPEN).unwrap_or_default();
        let sent = feeder.map(|f| f.join().unwrap_or(Ok(0)));
        Ok(Remote {
            status,
            stdout,
            stderr,
            input_error: match sent {
                Some(Err(e)) => Some(e.to_string()),
                _ => None,
            },
        })
    }

    /// Why the transport could not even start.
    pub fn spawn_error(&self, e: &std::io::Error) -> AgentError {
        let program = self
            .argv("true")
            .ok()
            .and_then(|a| a.into_iter().next())
            .unwrap_or_default();
        self.transport_error(format!("cannot start the transport {program:?}: {e}"))
    }

    /// What a transport's failure means, with the tail of its stderr: for ssh, status 255 is
    /// ssh's own failure (unreachable, authentication refused, bad configuration).
    pub fn failure(&self, what: &str, status: ExitStatus, stderr: &str) -> AgentError {
        let tail = stderr_tail(stderr);
        let said = if tail.is_empty() {
            String::new()
        } else {
            format!(": {tail}")
        };
        self.transport_error(if self.is_ssh() && status.code() == Some(SSH_FAILED) {
            format!("ssh could not reach the host or was refused (exit 255){said}")
        } else {
            format!("{what} failed ({}){said}", describe(status))
        })
    }
}

/// A finished remote command.
#[derive(Debug)]
pub struct Remote {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Streaming the input failed (the remote side stopped reading).
    pub input_error: Option<String>,
}

/// `exit 3` or `killed by signal 9`.
pub fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => status.to_string(),
    }
}

/// The last few non-empty lines of a stderr, joined, at most a few hundred characters.
pub fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
    let chars: Vec<char> = tail.chars().collect();
    if chars.len() > 400 {
        format!("…{}", chars[chars.len() - 400..].iter().collect::<String>())
    } else {
        tail
    }
}

/// `s` as one sh word: single-quoted, each `'` written as `'\''`.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> HostSpec {
        HostSpec {
            name: "load1".into(),
            ..HostSpec::default()
        }
    }

    #[test]
    fn ssh_argv_uses_the_users_client_in_batch_mode() {
        let h = HostSpec {
            ssh: Some("bench@10.0.0.7".into()),
            port: Some(2222),
            identity: Some("/home/me/.ssh/bench".into()),
            options: vec!["-o".into(), "ConnectTimeout=5".into()],
            ..host()
        };
        assert_eq!(
            h.argv("echo 'hi'").unwrap(),
            [
                "ssh",
                "-p",
                "2222",
                "-i",
                "/home/me/.ssh/bench",
                "-o",
                "ConnectTimeout=5",
                "-o",
                "BatchMode=yes",
                "bench@10.0.0.7",
                "--",
                r"sh -c 'echo '\''hi'\'''",
            ]
        );
        let plain = HostSpec {
            ssh: Some("h".into()),
            ..host()
        };
        assert_eq!(
            plain.argv("true").unwrap(),
            ["ssh", "-o", "BatchMode=yes", "h", "--", "sh -c 'true'"]
        );
    }

    #[test]
    fn a_transport_is_split_like_sh_and_followed_by_sh_c() {
        let h = HostSpec {
            transport: Some(r#"kubectl exec -i "my pod" -- "#.into()),
            ..host()
        };
        assert_eq!(
            h.argv("echo $HOME").unwrap(),
            [
                "kubectl",
                "exec",
                "-i",
                "my pod",
                "--",
                "sh",
                "-c",
                "echo $HOME"
            ]
        );
        let bad = HostSpec {
            transport: Some("docker exec -i 'c".into()),
            ..host()
        };
        let e = bad.argv("true").unwrap_err();
        assert!(matches!(e, AgentError::Settings { .. }), "{e:?}");
        assert!(e.to_string().starts_with("host load1: "));
        let both = HostSpec {
            ssh: Some("h".into()),
            transport: Some("env".into()),
            ..host()
        };
        assert!(both
            .argv("true")
            .unwrap_err()
            .to_string()
            .contains("not both"));
        assert!(host().argv("true").is_err());
    }

    #[test]
    fn quoting_survives_sh() {
        let h = HostSpec {
            transport: Some("env".into()),
            ..host()
        };
        let word = r#"it's "quoted" $HOME `x` \n"#;
        let r = h
            .run(
                &format!("printf %s {}", sh_quote(word)),
                None,
                "quoting",
                Duration::from_secs(30),
            )
            .unwrap();
        assert!(r.status.success());
        assert_eq!(r.stdout, word);
    }

    #[test]
    fn a_transport_that_never_answers_is_stopped_at_its_limit() {
        let h = HostSpec {
            transport: Some("env".into()),
            ..host()
        };
        // A marker unique to this test, to find what the transport left running.
        let marker = format!("rigor_never_answers_{}", std::process::id());
        let e = h
            .run(
                &format!("{marker}=1 exec sleep 300"),
                None,
                "checking the installed rigor",
                Duration::from_millis(300),
            )
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "host load1: checking the installed rigor: no answer through the \
                 transport within 0.3 s"
            ),
            "{e}"
        );
        let left: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|p| std::fs::read(p.path().join("environ")).ok())
            .map(|env| String::from_utf8_lossy(&env).into_owned())
            .filter(|env| env.contains(&marker))
            .collect();
        assert!(left.is_empty(), "{} left running", left.len());
    }

    #[test]
    fn a_failure_names_the_host_and_ssh_exit_255() {
        use std::os::unix::process::ExitStatusExt;
        let ssh = HostSpec {
            ssh: Some("h".into()),
            ..host()
        };
        let e = ssh.failure(
            "the check",
            ExitStatus::from_raw(255 << 8),
            "debug\nbench@h: Permission denied (publickey).\n",
        );
        assert!(matches!(e, AgentError::Transport { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "host load1: ssh could not reach the host or was refused (exit 255): debug / \
             bench@h: Permission denied (publickey)."
        );
        let e = host().failure("the check", ExitStatus::from_raw(9), "");
        assert_eq!(
            e.to_string(),
            "host load1: the check failed (killed by signal 9)"
        );
    }
}
