//! What a result keeps of one tool run, so a reader can check rigor's reading of it: the tool
//! and its version, the exact command lines, the raw outputs, the exit status, the tool's own
//! CPU, and the figures read from it. Stored as the iteration's `tool` (and as `tool` in `rigor
//! load --json`).

use super::figures::ToolFigures;
use serde::{Deserialize, Serialize};

/// One measured run of a tool, and the unmeasured warmup run before it (if any).
/// Every field has a default when read back, so a report an older rigor wrote still reads.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolReport {
    /// `wrk`, `h2load`, …
    pub tool: String,
    /// The first line the program printed for its version flag (`None` when it printed none).
    pub version: Option<String>,
    /// The measured run's command line, program first.
    pub command: Vec<String>,
    /// Its standard output, as printed (at most [`MAX_OUTPUT`] bytes).
    pub output: String,
    /// Its standard error.
    pub stderr: String,
    /// How it ended (`exit status: 0`).
    pub exit: String,
    /// From spawn to exit, seconds.
    pub wall_secs: f64,
    /// CPU the tool's process tree used over its whole run (user + system), seconds.
    pub cpu_secs: Option<f64>,
    /// The cores `load.cpu` is a share of: the CPUs it may run on, and no more than its
    /// `threads` for the tools that take them.
    pub cores: usize,
    /// What was read from `output`.
    pub figures: ToolFigures,
    /// oha only: requests it cancelled when its duration ran out (not counted as errors).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted_at_deadline: Option<f64>,
    /// The warmup run, for tools that do not warm up themselves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupReport>,
}

/// The unmeasured run before the measured one.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct WarmupReport {
    pub command: Vec<String>,
    pub output: String,
    pub stderr: String,
    pub exit: String,
    /// Responses it completed, as its output says (these reach the application outside the
    /// window).
    pub requests: Option<f64>,
}

/// The most of a tool's stdout or stderr kept (and parsed): a summary is a few kilobytes.
pub const MAX_OUTPUT: u64 = 4 * 1024 * 1024;

impl ToolReport {
    /// `load.cpu`: the tool's CPU over its run on its cores, in % (100 = all of them busy).
    pub fn cpu_pct(&self) -> Option<f64> {
        let secs = self.cpu_secs?;
        (self.wall_secs > 0.0 && self.cores > 0)
            .then(|| 100.0 * secs / (self.wall_secs * self.cores as f64))
    }
}

impl ToolReport {
    /// Why the figures cannot be a record of this run, None when they can be: the tool says
    /// its measured run lasted longer than the process ran from spawn to exit (output replayed
    /// by a wrapper, a summary of another run); the process ended well before the `asked_secs`
    /// run it was given (when known); or its own figures disagree (requests ÷ duration is not
    /// the rate it printed).
    pub fn impossible_claim(&self, asked_secs: Option<f64>) -> Option<String> {
        let f = &self.figures;
        let claimed = f.measured_secs.filter(|s| s.is_finite());
        // The tool's own clock runs inside the process's life; the slack covers clock ticks.
        if let Some(claimed) = claimed.filter(|c| *c > self.wall_secs * 1.02 + 0.25) {
            return Some(format!(
                "{} says its run lasted {claimed:.2} s, but it ran {:.2} s from start to exit: \
                 its output is not a record of this run",
                self.tool, self.wall_secs
            ));
        }
        if let Some(asked) = asked_secs.filter(|a| self.wall_secs < a * 0.9 - 0.05) {
            return Some(format!(
                "{} ran {:.2} s from start to exit, short of the {asked:.2} s run it was given: \
                 its output is not a record of a whole run",
                self.tool, self.wall_secs
            ));
        }
        let (n, secs, rps) = (f.requests?, claimed?, f.rps.filter(|r| r.is_finite())?);
        // Printed durations are rounded (wrk: to 10 ms) and rates are computed over the tool's
        // exact clock (bombardier's over each second): 10% and a rounding step of slack.
        let fastest = match secs > ROUNDING_SECS {
            true => n / (secs - ROUNDING_SECS),
            false => f64::INFINITY,
        };
        let slowest = n / (secs + ROUNDING_SECS);
        (rps > fastest * 1.1 + 0.01 || rps < slowest * 0.9 - 0.01).then(|| {
            format!(
                "{} says {n:.0} requests in {secs:.2} s ({:.2}/s) but a rate of {rps:.2}/s: its \
                 figures disagree with each other, so none of them is recorded",
                self.tool,
                n / secs.max(ROUNDING_SECS)
            )
        })
    }
}

/// The rounding step of a printed duration (wrk prints `1.00s`).
const ROUNDING_SECS: f64 = 0.005;

/// The last `lines` lines of a tool's output, indented, for an error message: what it said
/// before it failed.
pub fn tail(output: &str, stderr: &str, lines: usize) -> String {
    let mut picked: Vec<&str> = Vec::new();
    for text in [stderr, output] {
        let mut l: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let keep = l.len().saturating_sub(lines);
        picked.extend(l.drain(keep..));
    }
    if picked.is_empty() {
        return "    (it printed nothing)".into();
    }
    picked
        .iter()
        .map(|l| {
            let l: String = l.chars().take(300).collect();
            format!("    {l}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_claimed_longer_than_the_process_lived_is_impossible() {
        let report = |claimed: Option<f64>, wall: f64| ToolReport {
            tool: "wrk".into(),
            version: None,
            command: vec![],
            output: String::new(),
            stderr: String::new(),
            exit: "exit status: 0".into(),
            wall_secs: wall,
            cpu_secs: None,
            cores: 1,
            figures: ToolFigures {
                measured_secs: claimed,
                ..ToolFigures::default()
            },
            aborted_at_deadline: None,
            warmup: None,
        };
        let why = report(Some(2.11), 0.05)
            .impossible_claim(None)
            .expect("impossible");
        assert!(why.contains("2.11 s") && why.contains("0.05 s"), "{why}");
        assert_eq!(report(Some(2.01), 2.04).impossible_claim(None), None);
        assert_eq!(
            report(Some(2.01), 1.99).impossible_claim(None),
            None,
            "a tick"
        );
        assert_eq!(report(None, 0.05).impossible_claim(None), None);
        assert_eq!(report(Some(f64::NAN), 0.05).impossible_claim(None), None);
        // Stopped 0.1 s into a 1 s run, whatever it printed.
        let why = report(Some(0.0), 0.1)
            .impossible_claim(Some(1.0))
            .expect("cut short");
        assert!(
            why.contains("ran 0.10 s") && why.contains("1.00 s run"),
            "{why}"
        );
        assert_eq!(report(Some(1.0), 1.02).impossible_claim(Some(1.0)), None);
    }

    #[test]
    fn the_tail_keeps_the_last_lines_of_each_stream() {
        let out = (1..=20)
            .map(|i| format!("out {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let t = tail(&out, "boom\n", 3);
        assert_eq!(t, "    boom\n    out 18\n    out 19\n    out 20");
        assert_eq!(tail("", "\n", 5), "    (it printed nothing)");
    }
}
