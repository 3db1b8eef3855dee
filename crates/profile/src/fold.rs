//! A recording's samples as folded stacks: `perf script` turns them into text (resolving
//! symbols, with `/tmp/perf-PID.map` files for JIT code when they exist), `inferno` folds it.

use crate::{Folded, ProfileError};
use inferno::collapse::perf::{Folder, Options};
use inferno::collapse::Collapse;
use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};

/// Folds the samples of `data` (`perf` being the perf program). An empty recording (nothing
/// ran while it sampled) is an empty profile.
pub fn fold_perf_data(perf: &str, data: &Path) -> Result<Folded, ProfileError> {
    // Inline frames resolved through addr2line make perf script minutes slower; the symbol of
    // each frame is what the profile names.
    // No `period` field: each sample counts once, whatever its period (cpu-clock's is the
    // nanoseconds between samples).
    let args = [
        "script",
        "--no-inline",
        "-F",
        "comm,pid,tid,time,event,ip,sym,dso",
        "-i",
    ];
    let command = format!("{perf} {} {}", args.join(" "), data.display());
    let mut child = Command::new(perf)
        .args(args)
        .arg(data)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ProfileError::Spawn {
            command: command.clone(),
            source,
        })?;
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let said = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut options = Options::default();
    options.nthreads = 1;
    let mut folded = Vec::new();
    let collapsed = Folder::from(options).collapse(BufReader::new(stdout), &mut folded);
    let status = child.wait().map_err(|source| ProfileError::Spawn {
        command: command.clone(),
        source,
    })?;
    let stderr = said.join().unwrap_or_default();
    if !status.success() {
        // perf script refuses a file with no samples; that is an empty profile.
        if stderr.contains("has no samples") {
            return Ok(Folded::default());
        }
        return Err(ProfileError::Failed {
            command,
            status: status.to_string(),
            stderr: stderr.trim().lines().take(5).collect::<Vec<_>>().join(" "),
        });
    }
    collapsed.map_err(|source| ProfileError::Render {
        what: "folding perf script's output",
        source,
    })?;
    Folded::parse(&String::from_utf8_lossy(&folded))
}
