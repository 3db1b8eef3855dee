//! The last lines of a log, shown whenever a build or an application fails.

use std::path::Path;

/// The last `lines` lines of a file (lossy UTF-8), indented for an error message.
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::from("    (no log)");
    };
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    if all.is_empty() {
        return String::from("    (log is empty)");
    }
    let start = all.len().saturating_sub(lines);
    let mut out = format!(
        "    --- last {} lines of {} ---",
        all.len() - start,
        path.display()
    );
    for l in &all[start..] {
        out.push_str("\n    ");
        out.push_str(l);
    }
    out
}
