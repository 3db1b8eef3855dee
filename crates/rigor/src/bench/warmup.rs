//! `--warmup N`: each command run N times before the measured iterations, unrecorded, so the
//! first measured runs do not pay for a cold page cache. A command that fails here stops the
//! bench before anything is measured.

use super::setup::Bench;
use std::process::{Command, Stdio};

/// Runs every command `times` times, in order; the first failure is said with its command.
pub fn run(bench: &Bench, times: usize) -> Result<(), String> {
    if times == 0 {
        return Ok(());
    }
    crate::console::err(&format!(
        "warmup: {times} unmeasured run(s) of each command"
    ));
    for _ in 0..times {
        for (name, command) in bench.names.iter().zip(&bench.commands) {
            let status = Command::new("sh")
                .arg("-c")
                .arg(command)
                .current_dir(&bench.dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map_err(|e| format!("warmup of {name} (`{command}`): cannot start sh: {e}"))?;
            if !status.success() {
                return Err(format!(
                    "warmup of {name} (`{command}`) failed: {status}; nothing was measured"
                ));
            }
        }
    }
    Ok(())
}
