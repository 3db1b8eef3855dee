//! `--warmup N`: each command run N times before the measured iterations, unrecorded, so the
//! first measured runs do not pay for a cold page cache. A command that fails here stops the
//! bench before anything is measured. Each run is a process group of its own, known to the
//! signal handlers and the sentinel: Ctrl-C, SIGTERM or rigor's death kill it with all its
//! processes, so no warmup command outlives rigor.

use super::setup::Bench;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// Runs every command `times` times, in order; the first failure is said with its command.
pub fn run(bench: &Bench, times: usize) -> anyhow::Result<()> {
    if times == 0 {
        return Ok(());
    }
    crate::console::err(&format!(
        "warmup: {times} unmeasured run(s) of each command"
    ));
    for _ in 0..times {
        for (name, command) in bench.names.iter().zip(&bench.commands) {
            let status = run_one(bench, name, command)?;
            if !status.success() {
                anyhow::bail!(
                    "warmup of {name} (`{command}`) failed: {status}; nothing was measured"
                );
            }
        }
    }
    Ok(())
}

/// One warmup run of `command`, in a process group of its own that an interruption kills.
fn run_one(bench: &Bench, name: &str, command: &str) -> anyhow::Result<ExitStatus> {
    let interrupted =
        || anyhow::anyhow!("warmup of {name} (`{command}`) interrupted; nothing was measured");
    if crate::interrupt::interrupted() {
        return Err(interrupted());
    }
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(&bench.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| anyhow::anyhow!("warmup of {name} (`{command}`): cannot start sh: {e}"))?;
    let pgid = child.id() as i32;
    crate::interrupt::register_group(pgid);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Ok(s),
            Ok(None) if crate::interrupt::interrupted() => {
                crate::exec::kill_tree(&mut child);
                break Err(interrupted());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => break Err(anyhow::anyhow!("warmup of {name} (`{command}`): {e}")),
        }
    };
    crate::interrupt::unregister_group(pgid);
    status
}
