//! Running the engine's client for a short answer: bounded in time, its whole process group
//! killed when it does not answer, its error output in the error.

use super::engine::Engine;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Why the engine's client gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The client could not be started (not installed, not on PATH).
    #[error("cannot run `{program}`: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    /// It gave no answer in time and was killed.
    #[error("`{line}` gave no answer in {}s", .after.as_secs())]
    Timeout { line: String, after: Duration },
    /// It answered with a failure.
    #[error("`{line}` failed ({status}): {stderr}")]
    Failed {
        line: String,
        status: String,
        stderr: String,
    },
}

/// Runs `engine`'s client with `args`; its standard output, trimmed, when it succeeds.
pub fn call(engine: &Engine, args: &[String], timeout: Duration) -> Result<String, ClientError> {
    let line = format!("{} {}", engine.program(), args.join(" "));
    let child = Command::new(engine.program())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|source| ClientError::Start {
            program: engine.program().into(),
            source,
        })?;
    let pgid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(timeout) {
        Ok(Ok(out)) => out,
        Ok(Err(source)) => {
            return Err(ClientError::Start {
                program: engine.program().into(),
                source,
            })
        }
        Err(_) => {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            return Err(ClientError::Timeout {
                line,
                after: timeout,
            });
        }
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stderr = stderr.trim();
        return Err(ClientError::Failed {
            line,
            status: out.status.to_string(),
            stderr: stderr.lines().last().unwrap_or_default().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
