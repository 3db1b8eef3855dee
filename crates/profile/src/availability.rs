//! Whether `perf` can profile here, found by trying it once: a missing binary, a kernel
//! version Debian's wrapper has no perf for, and `perf_event_paranoid` are all answered the
//! same way the real recording would meet them.

use std::process::{Command, Stdio};

/// Why profiles cannot be taken here, and what would fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// What went wrong, in a sentence.
    pub reason: String,
    /// The command or change that would make profiling work.
    pub fix: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.reason)
    }
}

/// Records `true` for an instant with `perf` (the program, or a path): `Ok` when a real
/// recording would work, else why not and the fix.
pub fn check(perf: &str) -> Result<(), Unavailable> {
    let out = std::env::temp_dir().join(format!("rigor-perf-check-{}.data", std::process::id()));
    let run = Command::new(perf)
        .args(["record", "-q", "-e", "cpu-clock", "-F", "99", "-g", "-o"])
        .arg(&out)
        .args(["--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(out.with_extension("data.old"));
    let output = match run {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Unavailable {
                reason: format!("`{perf}` is not installed"),
                fix: "install perf (Debian: apt-get install linux-perf; Ubuntu: apt-get install \
                      linux-tools-$(uname -r))"
                    .into(),
            })
        }
        Err(e) => {
            return Err(Unavailable {
                reason: format!("`{perf}` cannot be started: {e}"),
                fix: "check that perf is installed and executable".into(),
            })
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(explain(perf, &stderr, paranoid()))
}

/// The kernel's `perf_event_paranoid`, when readable.
fn paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// What a failed trial said, as a reason and a fix.
fn explain(perf: &str, stderr: &str, paranoid: Option<i32>) -> Unavailable {
    let said = first_lines(stderr);
    let forbidden = stderr.contains("perf_event_paranoid")
        || stderr.contains("Permission denied")
        || stderr.contains("Access to performance monitoring");
    if forbidden {
        let level = paranoid.map_or("set".to_string(), |p| format!("{p}"));
        return Unavailable {
            reason: format!(
                "perf may not sample processes here: kernel.perf_event_paranoid is {level} ({said})"
            ),
            fix: "run `sysctl kernel.perf_event_paranoid=1` (or run rigor as root)".into(),
        };
    }
    Unavailable {
        reason: format!("`{perf} record` does not work here: {said}"),
        fix: "run `perf record -e cpu-clock -g -- true` to see why (Debian: the linux-perf \
              package must match the running kernel)"
            .into(),
    }
}

/// The first few non-empty lines of what perf said, on one line.
fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    if lines.is_empty() {
        "it said nothing".into()
    } else {
        lines.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_perf_says_how_to_install_it() {
        let e = check("/nonexistent/perf").unwrap_err();
        assert!(e.reason.contains("not installed"), "{e:?}");
        assert!(e.fix.contains("linux-perf"), "{e:?}");
    }

    #[test]
    fn paranoia_names_the_sysctl_and_its_level() {
        let e = explain(
            "perf",
            "Error:\nAccess to performance monitoring and observability operations is limited.\n\
             Consider adjusting /proc/sys/kernel/perf_event_paranoid setting",
            Some(3),
        );
        assert!(e.reason.contains("perf_event_paranoid is 3"), "{e:?}");
        assert!(
            e.fix.contains("sysctl kernel.perf_event_paranoid=1"),
            "{e:?}"
        );
    }

    #[test]
    fn another_failure_repeats_what_perf_said() {
        let e = explain(
            "perf",
            "WARNING: perf not found for kernel 6.1.0-99\n",
            Some(2),
        );
        assert!(e.reason.contains("perf not found for kernel"), "{e:?}");
    }
}
