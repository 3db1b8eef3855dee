//! The one gate between a finished comparison and the exit code CI branches on: failure first,
//! then `--fail-on-regression` (exit 3), then `--strict` (exit 4), then `rigor compare
//! --fail-on-inconclusive` (exit 5). `rigor run` and `rigor compare` both decide here, so the
//! two commands can never gate differently.

use crate::exit::Exit;
use crate::report::{format, terminal::visible};
use crate::result::{Comparison, RowKey, RunResult, Verdict};
use std::collections::BTreeMap;

/// What the command line asked the gate to watch.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// `--fail-on-regression`: a regression among `watched` fails the command.
    pub fail_on_regression: bool,
    /// The measurements `--fail-on-regression` watches; empty watches every one.
    pub watched: &'a [String],
    /// `--strict`: any warning fails the command.
    pub strict: bool,
}

/// The gate's answer, with the comparisons it is based on so the command can say why.
#[derive(Debug)]
pub struct Decision<'a> {
    /// The exit code.
    pub exit: Exit,
    /// Watched comparisons that regressed (collected only under `--fail-on-regression`).
    pub regressions: Vec<&'a Comparison>,
    /// Watched comparisons still inconclusive (under `--fail-on-regression` or
    /// `--fail-on-inconclusive`): said, since a gate that passes on "not yet" should say so;
    /// only `--fail-on-inconclusive` fails on them.
    pub inconclusive: Vec<&'a Comparison>,
}

/// Decides the exit code of a finished command: `failed` (something did not run, or the run was
/// interrupted) wins, then a watched regression, then warnings (`warned`) under `--strict`.
pub fn decide<'a>(
    comparisons: &'a [Comparison],
    failed: bool,
    warned: bool,
    rules: &Rules,
) -> Decision<'a> {
    let mut decision = Decision {
        exit: Exit::Success,
        regressions: Vec::new(),
        inconclusive: Vec::new(),
    };
    if failed {
        decision.exit = Exit::Failed;
        return decision;
    }
    if rules.fail_on_regression {
        decision.regressions = with_verdict(comparisons, rules.watched, Verdict::Regression);
        decision.inconclusive = with_verdict(comparisons, rules.watched, Verdict::Inconclusive);
    }
    decision.exit = if !decision.regressions.is_empty() {
        Exit::Regression
    } else if rules.strict && warned {
        Exit::Strict
    } else {
        Exit::Success
    };
    decision
}

/// The comparisons among `ids` (all of them when `ids` is empty) with `verdict`.
fn with_verdict<'a>(
    cmp: &'a [Comparison],
    ids: &[String],
    verdict: Verdict,
) -> Vec<&'a Comparison> {
    cmp.iter()
        .filter(|c| c.verdict == verdict)
        .filter(|c| ids.is_empty() || ids.contains(&c.measurement))
        .collect()
}

impl<'a> Decision<'a> {
    /// `--fail-on-inconclusive`, for scripts driving `git bisect run` (which reads exit 0 as
    /// "good"): a watched comparison (`watched` as in [`Rules`]) left inconclusive turns a
    /// passing gate into exit 5. A failure, a regression or `--strict` keep their own code.
    pub fn fail_on_inconclusive(
        mut self,
        comparisons: &'a [Comparison],
        watched: &[String],
    ) -> Self {
        if self.exit == Exit::Failed {
            return self;
        }
        self.inconclusive = with_verdict(comparisons, watched, Verdict::Inconclusive);
        if self.exit == Exit::Success && !self.inconclusive.is_empty() {
            self.exit = Exit::Inconclusive;
        }
        self
    }

    /// What the gate says on stderr: each regression, each inconclusive watched comparison, and
    /// why `--strict` or `--fail-on-inconclusive` failed. Text from the result files is made visible (no terminal escapes).
    pub fn messages(&self) -> Vec<String> {
        let which = |c: &Comparison| {
            format!(
                "{} vs {}{}",
                visible(&c.candidate),
                visible(&c.baseline),
                visible(&row_suffix(&c.row))
            )
        };
        let mut out: Vec<String> = self
            .regressions
            .iter()
            .map(|c| {
                format!(
                    "rigor: regression in {} ({}): {}",
                    visible(&c.measurement),
                    which(c),
                    c.change_pct.map(format::signed_pct).unwrap_or_default()
                )
            })
            .collect();
        out.extend(self.inconclusive.iter().map(|c| {
            format!(
                "rigor: {} is inconclusive ({}){}",
                visible(&c.measurement),
                which(c),
                c.note
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            )
        }));
        if self.exit == Exit::Strict {
            out.push("rigor: --strict: warnings were raised (see above)".into());
        }
        if self.exit == Exit::Inconclusive {
            out.push(
                "rigor: --fail-on-inconclusive: a watched measurement is inconclusive (see above)"
                    .into(),
            );
        }
        out
    }
}

/// `, connections=64` after the names of a comparison's sides; nothing for a row without values.
fn row_suffix(row: &BTreeMap<String, String>) -> String {
    if row.is_empty() {
        String::new()
    } else {
        format!(", {}", RowKey::of_map("", row).label())
    }
}

/// Whether a result carries any warning, of the run, a row or an iteration: what `--strict`
/// fails on.
pub fn has_warnings(r: &RunResult) -> bool {
    !r.warnings.is_empty()
        || r.rows.iter().any(|row| {
            !row.warnings.is_empty() || row.iterations.iter().any(|i| !i.warnings.is_empty())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::WarningKind;

    fn cmp(measurement: &str, verdict: &str, change: f64) -> Comparison {
        Comparison {
            scenario: "plaintext".into(),
            row: [("connections".to_string(), "64".to_string())].into(),
            measurement: measurement.into(),
            baseline: "base".into(),
            candidate: "slow".into(),
            baseline_median: Some(100.0),
            candidate_median: Some(100.0 + change),
            change_pct: Some(change),
            ci_low_pct: None,
            ci_high_pct: None,
            shift_pct: None,
            p_value: None,
            direction: Some("higher".into()),
            verdict: verdict.parse().unwrap(),
            note: (verdict == "inconclusive").then(|| "run more iterations".into()),
            method: None,
            pairs: None,
            confidence: None,
            adjusted: None,
            floor: None,
        }
    }

    fn rules(fail_on_regression: bool, watched: &[String], strict: bool) -> Rules<'_> {
        Rules {
            fail_on_regression,
            watched,
            strict,
        }
    }

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_watched_regression_exits_3_and_says_which() {
        let all = vec![
            cmp("load.rps", "regression", -10.0),
            cmp("app.rss", "no change", 0.1),
        ];
        let watched = ids(&["load.rps"]);
        let d = decide(&all, false, false, &rules(true, &watched, false));
        assert_eq!(d.exit, Exit::Regression);
        assert_eq!(d.regressions.len(), 1);
        assert_eq!(
            d.messages(),
            vec!["rigor: regression in load.rps (slow vs base, connections=64): -10.0%"]
        );
        // Watching only memory (unchanged): the gate passes.
        let memory = ids(&["app.rss"]);
        let d = decide(&all, false, false, &rules(true, &memory, false));
        assert_eq!(d.exit, Exit::Success);
        assert!(d.messages().is_empty());
        // Without the flag a regression is reported, not gated.
        let d = decide(&all, false, false, &rules(false, &watched, false));
        assert_eq!(d.exit, Exit::Success);
        assert!(d.regressions.is_empty());
    }

    #[test]
    fn an_empty_watch_list_watches_every_measurement() {
        let all = vec![cmp("app.rss", "regression", 12.0)];
        let d = decide(&all, false, false, &rules(true, &[], false));
        assert_eq!(d.exit, Exit::Regression);
    }

    #[test]
    fn inconclusive_watched_comparisons_are_said_but_do_not_fail() {
        let all = vec![cmp("load.rps", "inconclusive", -1.0)];
        let watched = ids(&["load.rps"]);
        let d = decide(&all, false, false, &rules(true, &watched, false));
        assert_eq!(d.exit, Exit::Success);
        assert_eq!(
            d.messages(),
            vec!["rigor: load.rps is inconclusive (slow vs base, connections=64): run more iterations"]
        );
    }

    #[test]
    fn failure_wins_then_regression_then_strict() {
        let regressed = vec![cmp("load.rps", "regression", -10.0)];
        let watched = ids(&["load.rps"]);
        let everything = rules(true, &watched, true);
        assert_eq!(
            decide(&regressed, true, true, &everything).exit,
            Exit::Failed
        );
        assert_eq!(
            decide(&regressed, false, true, &everything).exit,
            Exit::Regression
        );
        let d = decide(&[], false, true, &everything);
        assert_eq!(d.exit, Exit::Strict);
        assert_eq!(
            d.messages(),
            vec!["rigor: --strict: warnings were raised (see above)"]
        );
        assert_eq!(decide(&[], false, false, &everything).exit, Exit::Success);
        assert_eq!(
            decide(&[], false, true, &rules(false, &[], false)).exit,
            Exit::Success
        );
    }

    #[test]
    fn fail_on_inconclusive_exits_5_unless_something_weightier_decided() {
        let watched = ids(&["load.rps"]);
        let unsure = vec![
            cmp("load.rps", "inconclusive", -1.0),
            cmp("app.rss", "no change", 0.1),
        ];
        let d = decide(&unsure, false, false, &rules(false, &watched, false))
            .fail_on_inconclusive(&unsure, &watched);
        assert_eq!(d.exit, Exit::Inconclusive);
        assert_eq!(
            d.messages(),
            vec![
                "rigor: load.rps is inconclusive (slow vs base, connections=64): run more iterations",
                "rigor: --fail-on-inconclusive: a watched measurement is inconclusive (see above)",
            ]
        );
        // Inconclusive where nobody watches: the gate passes.
        let memory = ids(&["app.rss"]);
        let d = decide(&unsure, false, false, &rules(false, &memory, false))
            .fail_on_inconclusive(&unsure, &memory);
        assert_eq!(d.exit, Exit::Success);
        assert!(d.messages().is_empty());
        // A regression beside it keeps exit 3 (and both are said); a failure keeps exit 1.
        let mixed = vec![
            cmp("load.rps", "regression", -10.0),
            cmp("app.rss", "inconclusive", 3.0),
        ];
        let both = ids(&["load.rps", "app.rss"]);
        let d = decide(&mixed, false, false, &rules(true, &both, false))
            .fail_on_inconclusive(&mixed, &both);
        assert_eq!(d.exit, Exit::Regression);
        assert_eq!((d.regressions.len(), d.inconclusive.len()), (1, 1));
        let d = decide(&mixed, true, false, &rules(true, &both, false))
            .fail_on_inconclusive(&mixed, &both);
        assert_eq!(d.exit, Exit::Failed);
        // Settled verdicts pass.
        let settled = vec![cmp("load.rps", "improvement", 5.0)];
        let d = decide(&settled, false, false, &rules(false, &watched, false))
            .fail_on_inconclusive(&settled, &watched);
        assert_eq!(d.exit, Exit::Success);
    }

    #[test]
    fn names_from_result_files_cannot_drive_the_terminal() {
        let mut c = cmp("load.rps", "regression", -10.0);
        c.candidate = "evil\u{1b}[2J".into();
        let all = vec![c];
        let d = decide(&all, false, false, &rules(true, &[], false));
        let text = d.messages().join("\n");
        assert!(!text.contains('\u{1b}'), "{text:?}");
    }

    #[test]
    fn warnings_anywhere_in_a_result_count_for_strict() {
        use crate::analysis::summary::tests::row_with;
        use crate::result::Warning;
        let mut r: RunResult = serde_json::from_value(serde_json::json!({
            "schema": crate::result::SCHEMA, "rigor_version": "0", "scenario": "s",
            "profile": "local", "started_at": "", "status": "complete",
            "environment": {}, "warnings": [], "builds": [], "rows": [], "comparisons": []
        }))
        .unwrap();
        assert!(!has_warnings(&r));
        r.rows.push(row_with(&[], None, "load.rps", &[1.0]));
        assert!(!has_warnings(&r));
        r.rows[0].iterations[0]
            .warnings
            .push(Warning::new(WarningKind::NoisyRow, "m", "a"));
        assert!(has_warnings(&r));
    }
}
