//! The one way rigor starts a job's shell line, for builds and applications alike: in the job's
//! folder, with its env and rigor's owner mark (so no descendant escapes the sweeps), its output
//! into the log file, and in a process group of its own (so the whole tree can be signalled).

use crate::config::AppJob;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// A `sh -c LINE` command for `job`, ready to spawn; `what` names it in errors.
pub fn marked_shell(job: &AppJob, line: &str, log: &Path, what: &str) -> anyhow::Result<Command> {
    marked_shell_split(job, line, log, None, what)
}

/// Like [`marked_shell`], with stdout in a file of its own when `stdout` is given (a command
/// job's figures are read from it; its errors stay in the log).
pub fn marked_shell_split(
    job: &AppJob,
    line: &str,
    log: &Path,
    stdout: Option<&Path>,
    what: &str,
) -> anyhow::Result<Command> {
    folder_exists(job, what)?;
    let err = create(log)?;
    let out = match stdout {
        Some(p) => create(p)?,
        None => err.try_clone()?,
    };
    Ok(shell(job, line, out.into(), err.into()))
}

/// Like [`marked_shell_split`], with stdout and stderr piped to rigor, which copies them to
/// `stdout` and `log` (returned, created empty) up to a limit: a program printing without end
/// cannot fill the disk.
pub fn marked_shell_piped(
    job: &AppJob,
    line: &str,
    log: &Path,
    stdout: &Path,
    what: &str,
) -> anyhow::Result<(Command, File, File)> {
    folder_exists(job, what)?;
    let err = create(log)?;
    let out = create(stdout)?;
    Ok((shell(job, line, Stdio::piped(), Stdio::piped()), out, err))
}

fn folder_exists(job: &AppJob, what: &str) -> anyhow::Result<()> {
    if job.dir.is_dir() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "{what}: folder {} does not exist",
            job.dir.display()
        ))
    }
}

fn create(p: &Path) -> anyhow::Result<File> {
    File::create(p).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", p.display()))
}

/// `sh -c LINE` in the job's folder, with its env and rigor's mark, in a group of its own.
fn shell(job: &AppJob, line: &str, out: Stdio, err: Stdio) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(line)
        .current_dir(&job.dir)
        .envs(job.env.iter().map(|(k, v)| (k, v)))
        .env(super::procs::MARK, super::reaper::mark())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    cmd
}
