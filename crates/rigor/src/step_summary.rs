//! `$GITHUB_STEP_SUMMARY`: GitHub Actions shows the Markdown appended to that file on the job's
//! page, so a report lands there without any CI configuration.

use std::io::Write;
use std::path::Path;

/// Appends `markdown` to the step summary when `$GITHUB_STEP_SUMMARY` names a file. Returns what
/// went wrong, for the caller to say: a summary that cannot be written must not fail the command.
pub fn append(markdown: &str) -> Option<String> {
    let path = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty())?;
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| writeln!(f, "{markdown}"));
    appended.err().map(|e| {
        format!(
            "rigor: cannot append to $GITHUB_STEP_SUMMARY ({}): {e}",
            Path::new(&path).display()
        )
    })
}
