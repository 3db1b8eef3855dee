//! `perf record` over an application for as long as the caller wants: started on a set of
//! processes or a cgroup (ahead of time with its events off, since perf takes a while to
//! start), switched on and off through its control FIFO at the window's edges, stopped with
//! SIGINT (perf then writes its file and exits), killed if it does not, and never left running
//! when the recorder is dropped.

use crate::ProfileError;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long perf gets to write its file after SIGINT before it is killed.
const STOP_PATIENCE: Duration = Duration::from_secs(20);

/// How long perf gets to start (or to answer a command on its control FIFO).
const START_PATIENCE: Duration = Duration::from_secs(30);

/// How call stacks are walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGraph {
    /// Frame pointers (`-g`): cheap, needs code built with frame pointers.
    FramePointer,
    /// DWARF unwinding (`--call-graph dwarf`): works without frame pointers, costs far more
    /// (perf copies a slice of stack with every sample).
    Dwarf,
}

/// How to record.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The perf program (a name on the PATH or a path).
    pub perf: String,
    /// Samples per second per CPU.
    pub hz: u32,
    pub call_graph: CallGraph,
}

/// What is sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Everything in a cgroup, on every CPU (`-a -G NAME`): threads and children started later
    /// included.
    Cgroup(String),
    /// These processes' threads as they are when the recording starts (`-p`).
    Pids(Vec<i32>),
}

/// A running `perf record`.
#[derive(Debug)]
pub struct Recorder {
    child: Option<Child>,
    data: PathBuf,
    log: PathBuf,
    command: String,
    /// perf's control FIFO (commands in) and its acknowledgements (out), both held open
    /// read-write so that neither open blocks.
    ctl: File,
    ack: File,
}

impl Settings {
    /// The arguments of `perf record` for `target`, writing to `data`.
    pub fn record_args(&self, target: &Target, data: &Path, enabled: bool) -> Vec<String> {
        let mut args: Vec<String> = ["record", "-e", "cpu-clock", "-F"]
            .map(String::from)
            .to_vec();
        args.push(self.hz.to_string());
        match self.call_graph {
            CallGraph::FramePointer => args.push("-g".into()),
            CallGraph::Dwarf => args.extend(["--call-graph".into(), "dwarf".into()]),
        }
        // No build-id bookkeeping at the end: stopping stays quick, and the binaries are still
        // there when the samples are read back.
        args.extend(["--no-buildid".into(), "--no-buildid-cache".into()]);
        match target {
            Target::Cgroup(name) => args.extend(["-a".into(), "-G".into(), name.clone()]),
            Target::Pids(pids) => {
                let list: Vec<String> = pids.iter().map(i32::to_string).collect();
                args.extend(["-p".into(), list.join(",")]);
            }
        }
        if !enabled {
            // Events off until `enable` arrives on the control FIFO.
            args.push("--delay=-1".into());
        }
        let (ctl, ack) = fifo_paths(data);
        args.push(format!(
            "--control=fifo:{},{}",
            ctl.display(),
            ack.display()
        ));
        args.push("-o".into());
        args.push(data.display().to_string());
        args
    }
}

impl Recorder {
    /// Starts perf on `target`, recording into `data` (its messages in `data` + `.log`), and
    /// waits until it runs; sampling from the start when `enabled`, else from
    /// [`Recorder::enable`] on.
    pub fn start(
        settings: &Settings,
        target: &Target,
        data: &Path,
        enabled: bool,
    ) -> Result<Self, ProfileError> {
        let args = settings.record_args(target, data, enabled);
        let (ctl_path, ack_path) = fifo_paths(data);
        let ctl = fifo(&ctl_path)?;
        let ack = fifo(&ack_path)?;
        let command = format!("{} {}", settings.perf, args.join(" "));
        let log = log_path(data);
        let err = File::create(&log).map_err(|source| ProfileError::File {
            path: log.clone(),
            source,
        })?;
        let child = Command::new(&settings.perf)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|source| ProfileError::Spawn {
                command: command.clone(),
                source,
            })?;
        let mut recorder = Recorder {
            child: Some(child),
            data: data.to_path_buf(),
            log,
            command,
            ctl,
            ack,
        };
        recorder.send("ping")?;
        Ok(recorder)
    }

    /// perf's process id (for a caller that sweeps up its own children, to leave it alone).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Switches sampling on (the window opens).
    pub fn enable(&mut self) -> Result<(), ProfileError> {
        self.send("enable")
    }

    /// Switches sampling off (the window closed).
    pub fn disable(&mut self) -> Result<(), ProfileError> {
        self.send("disable")
    }

    /// Sends `command` on the control FIFO and waits for perf's `ack` (it answers from its
    /// main loop, so the first answer also says it has started).
    fn send(&mut self, command: &str) -> Result<(), ProfileError> {
        use std::io::{Read, Write};
        if let Err(e) = self.ctl.write_all(format!("{command}\n").as_bytes()) {
            return Err(self.failed(format!("control FIFO: {e}")));
        }
        let deadline = Instant::now() + START_PATIENCE;
        let mut got = Vec::new();
        loop {
            let mut fds = [nix::poll::PollFd::new(
                std::os::fd::AsFd::as_fd(&self.ack),
                nix::poll::PollFlags::POLLIN,
            )];
            let ready = nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(50u16)).unwrap_or(0);
            if ready > 0 {
                let mut buf = [0u8; 64];
                let n = match self.ack.read(&mut buf) {
                    Ok(n) => n,
                    Err(e) => return Err(self.failed(format!("control FIFO: {e}"))),
                };
                got.extend_from_slice(&buf[..n]);
                if got.windows(3).any(|w| w == b"ack") {
                    return Ok(());
                }
            }
            let ended = self
                .child
                .as_mut()
                .is_none_or(|c| c.try_wait().ok().flatten().is_some());
            if ended {
                return Err(self.failed(format!("ended before it answered `{command}`")));
            }
            if Instant::now() > deadline {
                return Err(self.failed(format!(
                    "did not answer `{command}` within {}s",
                    START_PATIENCE.as_secs()
                )));
            }
        }
    }

    /// Stops the recording (SIGINT, as Ctrl-C would) and waits for perf to write its file;
    /// returns the file. perf that already ended (its processes exited) is only reaped.
    pub fn stop(mut self) -> Result<PathBuf, ProfileError> {
        let mut child = self.child.take().expect("a recorder is stopped once");
        if child.try_wait().ok().flatten().is_none() {
            // A child not yet reaped: its PID cannot name another process.
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGINT);
        }
        let deadline = Instant::now() + STOP_PATIENCE;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(self.failed(format!(
                        "still writing {}s after SIGINT, killed",
                        STOP_PATIENCE.as_secs()
                    )));
                }
            }
        };
        use std::os::unix::process::ExitStatusExt;
        let by_sigint = status.signal() == Some(Signal::SIGINT as i32);
        // perf re-raises the SIGINT it handled, or exits 130 from its own handler.
        if !(status.success() || by_sigint || status.code() == Some(130)) {
            return Err(self.failed(status.to_string()));
        }
        if !self.data.is_file() {
            return Err(self.failed(format!("{status}, and wrote no {}", self.data.display())));
        }
        Ok(self.data.clone())
    }

    /// The error for a recording that failed, with what perf said.
    fn failed(&self, status: String) -> ProfileError {
        let said = std::fs::read_to_string(&self.log).unwrap_or_default();
        ProfileError::Failed {
            command: self.command.clone(),
            status,
            stderr: said.trim().lines().take(5).collect::<Vec<_>>().join(" "),
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let (ctl, ack) = fifo_paths(&self.data);
        let _ = std::fs::remove_file(ctl);
        let _ = std::fs::remove_file(ack);
    }
}

/// The control and acknowledgement FIFOs of a recording into `data`.
fn fifo_paths(data: &Path) -> (PathBuf, PathBuf) {
    let with = |ext: &str| {
        let mut s = data.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    (with(".ctl"), with(".ack"))
}

/// Makes a FIFO at `path` (anew) and opens it read-write: neither end's open waits for the
/// other.
fn fifo(path: &Path) -> Result<File, ProfileError> {
    let err = |source| ProfileError::File {
        path: path.to_path_buf(),
        source,
    };
    let _ = std::fs::remove_file(path);
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600))
        .map_err(|e| err(std::io::Error::from(e)))?;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(err)
}

/// Where perf's messages for `data` go.
pub(crate) fn log_path(data: &Path) -> PathBuf {
    let mut s = data.as_os_str().to_owned();
    s.push(".log");
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_name_the_event_rate_walk_and_target() {
        let s = Settings {
            perf: "perf".into(),
            hz: 49,
            call_graph: CallGraph::Dwarf,
        };
        let a = s
            .record_args(&Target::Pids(vec![3, 5]), Path::new("/x/p.data"), false)
            .join(" ");
        assert!(
            a.starts_with("record -e cpu-clock -F 49 --call-graph dwarf"),
            "{a}"
        );
        assert!(
            a.ends_with(
                "-p 3,5 --delay=-1 --control=fifo:/x/p.data.ctl,/x/p.data.ack -o /x/p.data"
            ),
            "{a}"
        );
        let s = Settings {
            call_graph: CallGraph::FramePointer,
            ..s
        };
        let a = s
            .record_args(&Target::Cgroup("a/b".into()), Path::new("p"), true)
            .join(" ");
        assert!(
            a.contains(" -g ") && a.contains("-a -G a/b --control"),
            "{a}"
        );
        assert!(!a.contains("--delay"), "{a}");
    }
}
