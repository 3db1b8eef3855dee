//! What a bisection found, for people (stdout) and for scripts (`--json`, `rigor.bisect.v1`):
//! the first bad commit with its comparison against its parent, or why there is none, and every
//! step with its decision, iterations and changes against both ends.

use super::decide::Side;
use super::git::Commit;
use super::position::Position;
use crate::git::short;
use serde::Serialize;
use std::path::Path;

/// The JSON schema name of `--json`.
pub const SCHEMA: &str = "rigor.bisect.v1";

/// One commit measured (or skipped) and what it was judged.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub commit: String,
    pub subject: String,
    /// `good`, `bad`, `unknown`, `skipped`; step 0 (the ends) is `differ` or `same`/`unknown`.
    pub decision: String,
    pub iterations: usize,
    /// The tested commit against the good end (for step 0: bad against good).
    pub vs_good: Option<Side>,
    /// The tested commit against the bad end.
    pub vs_bad: Option<Side>,
    /// Where the tested commit lies from good (0) to bad (1), with its interval at the last
    /// look; what decided it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// Why a commit was skipped, or what else is worth saying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The step's result file (a `rigor.run.v1` result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// A named commit in the report.
#[derive(Debug, Clone, Serialize)]
pub struct Named {
    pub commit: String,
    pub subject: String,
}

impl From<&Commit> for Named {
    fn from(c: &Commit) -> Named {
        Named {
            commit: c.sha.clone(),
            subject: c.subject.clone(),
        }
    }
}

/// The whole bisection.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    /// The variable whose values were searched (`--var`); absent for commits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub var: Option<String>,
    /// The first bad commit (or value), or null.
    pub culprit: Option<String>,
    /// `culprit`, `inconclusive`, `no difference` or `interrupted`.
    pub verdict: String,
    /// One sentence saying what was found.
    pub message: String,
    pub subject: Option<String>,
    /// The culprit against its parent, from a run of the two interleaved.
    pub culprit_vs_parent: Option<Side>,
    pub parent: Option<String>,
    pub measurement: String,
    pub threshold_pct: f64,
    pub good: Named,
    pub bad: Named,
    /// The commits after good up to bad that could be the first bad one at the start.
    pub candidates: usize,
    /// When the search ended undecided: the last commit like good and the first like bad.
    pub between: Option<[String; 2]>,
    /// When skipped commits hide the culprit: every commit it may be.
    pub among: Vec<Named>,
    pub steps: Vec<Step>,
    /// Iterations run in all (every step, the ends, the culprit's own run).
    pub iterations: usize,
    pub runs: usize,
    pub seconds: f64,
    /// The folder of the steps' result files and logs.
    pub folder: String,
}

impl Report {
    /// The report for the terminal.
    pub fn text(&self) -> String {
        let short = |id: &str| name(self.var.is_some(), id);
        let mut out = match &self.var {
            Some(var) => format!(
                "rigor bisect: {} over {var} from good {} to bad {} ({} values)\n\n",
                self.measurement, self.good.commit, self.bad.commit, self.candidates
            ),
            None => format!(
                "rigor bisect: {} from good {} to bad {} ({} commits, first-parent)\n\n",
                self.measurement,
                short(&self.good.commit),
                short(&self.bad.commit),
                self.candidates
            ),
        };
        out.push_str(&steps_table(&self.steps, self.var.is_some()));
        out.push('\n');
        out.push_str(&self.message);
        out.push('\n');
        if let (Some(side), Some(parent)) = (&self.culprit_vs_parent, &self.parent) {
            out.push_str(&format!(
                "  against its parent {}: {} {}\n",
                short(parent),
                self.measurement,
                side.text()
            ));
        }
        for c in &self.among {
            out.push_str(&format!("  {} {}\n", short(&c.commit), c.subject));
        }
        out.push_str(&format!(
            "{} iterations in {} runs, {}; results in {}\n",
            self.iterations,
            self.runs,
            elapsed(self.seconds),
            self.folder
        ));
        out
    }

    /// Writes the report as JSON to `path`.
    pub fn write_json(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text + "\n").map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }
}

/// How the report names a candidate: a short hash, or a value as it is.
fn name(values: bool, id: &str) -> String {
    if values {
        id.to_string()
    } else {
        short(id).to_string()
    }
}

/// One line per step: commit (or value), decision, iterations, position and the changes
/// against both ends.
fn steps_table(steps: &[Step], values: bool) -> String {
    let side = |s: &Option<Side>| s.as_ref().map(Side::text).unwrap_or_else(|| "-".into());
    let mut rows = vec![[
        "step".to_string(),
        if values { "value" } else { "commit" }.into(),
        "decision".into(),
        "iterations".into(),
        "position".into(),
        "vs good".into(),
        "vs bad".into(),
    ]];
    for (i, s) in steps.iter().enumerate() {
        let mut subject: String = s.subject.chars().take(32).collect();
        if s.subject.chars().count() > 32 {
            subject = subject.trim_end().to_string();
            subject.push('…');
        }
        rows.push([
            i.to_string(),
            if values {
                s.commit.clone()
            } else {
                format!("{} {subject}", short(&s.commit))
            },
            match &s.note {
                Some(n) if s.decision == "skipped" => format!("skipped: {n}"),
                _ => s.decision.clone(),
            },
            s.iterations.to_string(),
            s.position
                .as_ref()
                .map(Position::text)
                .unwrap_or_else(|| "-".into()),
            side(&s.vs_good),
            side(&s.vs_bad),
        ]);
    }
    let widths: Vec<usize> = (0..7)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// `2m13s`, `41s`.
pub fn elapsed(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Verdict;

    #[test]
    fn steps_line_up_with_their_decisions() {
        let step = |sha: &str, decision: &str, note: Option<&str>| Step {
            commit: sha.into(),
            subject: "a subject that is rather longer than the column allows".into(),
            decision: decision.into(),
            iterations: 12,
            vs_good: Some(Side {
                verdict: Verdict::NoChange,
                change_pct: Some(0.4),
                ci_low_pct: Some(-0.5),
                ci_high_pct: Some(1.0),
            }),
            vs_bad: None,
            position: Some(Position {
                estimate: 0.03,
                low: -0.02,
                high: 0.08,
                confidence: 0.99,
            }),
            note: note.map(Into::into),
            result: None,
        };
        let text = steps_table(
            &[
                step("0123456789", "good", None),
                step("abcdef0123", "skipped", Some("build failed")),
            ],
            false,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("step  commit"), "{text}");
        assert!(
            lines[1].contains("0123456 a subject that is rather longer…"),
            "{text}"
        );
        assert!(
            lines[1].contains("+0.4% [-0.5%, +1.0%] no change"),
            "{text}"
        );
        assert!(lines[2].contains("skipped: build failed"), "{text}");
        assert!(lines[1].contains("0.03 [-0.02, 0.08]"), "{text}");
        assert_eq!(elapsed(133.0), "2m13s");
        assert_eq!(elapsed(41.4), "41s");
    }
}
