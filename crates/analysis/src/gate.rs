//! The one gate between a finished comparison and the exit code CI branches on: failure first,
//! then `--fail-on-regression` (exit 3), then a failed limit (exit 6), then `--strict` (exit 4),
//! then `rigor compare --fail-on-inconclusive` (exit 5). `rigor run` and `rigor compare` both
//! decide here, so the two commands can never gate differently.

use rigor_model::format::{self, visible};
use rigor_model::result::{Comparison, RowKey, RunResult, Verdict, WarningKind};
use std::collections::BTreeMap;

/// Which warnings `--strict` turns into exit 4: none, every kind (plain `--strict`), or only
/// the kinds `--strict=KIND,…` names, so a shared machine's noise warnings need not fail a gate
/// meant for the traps.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Strictness {
    /// No `--strict`: warnings are said, never fatal.
    #[default]
    Off,
    /// `--strict` (or `--strict=all`): any warning fails.
    All,
    /// `--strict=KIND,…`: only warnings of these kinds fail.
    Kinds(Vec<WarningKind>),
}

/// A `--strict` value naming a warning kind this version does not know.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StrictnessError {
    /// The kind `name` does not exist; the message lists the known ones.
    #[error(
        "--strict={name}: no warning kind `{name}`; the kinds are all, {}",
        WarningKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
    )]
    UnknownKind { name: String },
    /// `--strict=` with nothing after `=` (or only commas): it names no kind.
    #[error(
        "--strict={given}: names no warning kind; give plain --strict for every kind, or \
         --strict=KIND,… with kinds among all, {}",
        WarningKind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ")
    )]
    NoKind { given: String },
}

impl Strictness {
    /// Reads `--strict`'s value: absent, given bare (`all`), or a list of warning kinds. A kind
    /// this version does not know is an error naming it and the known ones (a typo would
    /// otherwise gate on nothing), and so is an empty list (`--strict=`), which reads as "none"
    /// as easily as "all".
    pub fn parse(given: Option<&[String]>) -> Result<Strictness, StrictnessError> {
        let Some(list) = given else {
            return Ok(Strictness::Off);
        };
        let names: Vec<&str> = list
            .iter()
            .map(|k| k.trim())
            .filter(|k| !k.is_empty())
            .collect();
        if names.is_empty() {
            return Err(StrictnessError::NoKind {
                given: list.join(","),
            });
        }
        if names.contains(&"all") {
            return Ok(Strictness::All);
        }
        let mut kinds = Vec::new();
        for name in names {
            match WarningKind::from_code(name) {
                WarningKind::Other(_) => {
                    return Err(StrictnessError::UnknownKind {
                        name: name.to_string(),
                    });
                }
                k if !kinds.contains(&k) => kinds.push(k),
                _ => {}
            }
        }
        Ok(Strictness::Kinds(kinds))
    }

    /// Whether a warning of `kind` fails the command.
    pub fn fails_on(&self, kind: &WarningKind) -> bool {
        match self {
            Strictness::Off => false,
            Strictness::All => true,
            Strictness::Kinds(kinds) => kinds.contains(kind),
        }
    }

    /// How the flag was given, for messages: `--strict` or `--strict=proxy,debug_build`.
    fn flag(&self) -> String {
        match self {
            Strictness::Kinds(kinds) => {
                let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
                format!("--strict={}", names.join(","))
            }
            _ => "--strict".into(),
        }
    }
}

/// What the command line asked the gate to watch.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// `--fail-on-regression`: a regression among `watched` fails the command.
    pub fail_on_regression: bool,
    /// The measurements `--fail-on-regression` watches; empty watches every one.
    pub watched: &'a [String],
    /// `--strict`: which warnings fail the command.
    pub strict: &'a Strictness,
}

/// What a finished command's gate decided, weightiest first: a failure, a watched regression,
/// a limit not met, warnings `--strict` names, a watched comparison left inconclusive under
/// `--fail-on-inconclusive`, or a pass. Each is one exit code, which the binary picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Nothing gated the result.
    Success,
    /// Something did not run, or the run was interrupted.
    Failed,
    /// `--fail-on-regression`: a watched measurement regressed.
    Regression,
    /// `--strict`: warnings of the kinds it names were raised.
    Strict,
    /// A limit was not met.
    Limit,
    /// `--fail-on-inconclusive`: a watched comparison is inconclusive.
    Inconclusive,
}

/// The gate's answer, with the comparisons it is based on so the command can say why.
#[derive(Debug)]
pub struct Decision<'a> {
    /// What the gate decided (the binary maps it to the exit code).
    pub gate: Gate,
    /// Watched comparisons that regressed (collected only under `--fail-on-regression`).
    pub regressions: Vec<&'a Comparison>,
    /// Watched comparisons still inconclusive (under `--fail-on-regression` or
    /// `--fail-on-inconclusive`): said, since a gate that passes on "not yet" should say so;
    /// only `--fail-on-inconclusive` fails on them.
    pub inconclusive: Vec<&'a Comparison>,
    /// The warning kinds that failed the command under `--strict`, and how the flag was given.
    pub strict: Option<(String, Vec<WarningKind>)>,
    /// How many limits were not met (exit 6 unless something weightier decided).
    pub limits_failed: usize,
}

/// Decides the exit code of a finished command: `failed` (something did not run, or the run was
/// interrupted) wins, then a watched regression, then warnings of the kinds raised (`warned`)
/// that `--strict` names.
pub fn decide<'a>(
    comparisons: &'a [Comparison],
    failed: bool,
    warned: &[WarningKind],
    rules: &Rules,
) -> Decision<'a> {
    let mut decision = Decision {
        gate: Gate::Success,
        regressions: Vec::new(),
        inconclusive: Vec::new(),
        strict: None,
        limits_failed: 0,
    };
    if failed {
        decision.gate = Gate::Failed;
        return decision;
    }
    if rules.fail_on_regression {
        decision.regressions = with_verdict(comparisons, rules.watched, Verdict::Regression);
        decision.inconclusive = with_verdict(comparisons, rules.watched, Verdict::Inconclusive);
    }
    let mut fatal: Vec<WarningKind> = Vec::new();
    for kind in warned.iter().filter(|k| rules.strict.fails_on(k)) {
        if !fatal.contains(kind) {
            fatal.push(kind.clone());
        }
    }
    decision.gate = if !decision.regressions.is_empty() {
        Gate::Regression
    } else if !fatal.is_empty() {
        decision.strict = Some((rules.strict.flag(), fatal));
        Gate::Strict
    } else {
        Gate::Success
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
    /// Limits not met (`failed` of them) turn a passing gate, or one only `--strict` failed,
    /// into exit 6: a limit is a pass/fail the user wrote down, weightier than a warning. A
    /// failure or a regression keep their own code.
    pub fn limits(mut self, failed: usize) -> Self {
        self.limits_failed = failed;
        if failed > 0 && matches!(self.gate, Gate::Success | Gate::Strict) {
            self.gate = Gate::Limit;
        }
        self
    }

    /// `--fail-on-inconclusive`, for scripts driving `git bisect run` (which reads exit 0 as
    /// "good"): a watched comparison (`watched` as in [`Rules`]) left inconclusive turns a
    /// passing gate into exit 5. A failure, a regression or `--strict` keep their own code.
    pub fn fail_on_inconclusive(
        mut self,
        comparisons: &'a [Comparison],
        watched: &[String],
    ) -> Self {
        if self.gate == Gate::Failed {
            return self;
        }
        self.inconclusive = with_verdict(comparisons, watched, Verdict::Inconclusive);
        if self.gate == Gate::Success && !self.inconclusive.is_empty() {
            self.gate = Gate::Inconclusive;
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
        if let (Gate::Strict, Some((flag, kinds))) = (self.gate, &self.strict) {
            out.push(match flag.as_str() {
                "--strict" => "rigor: --strict: warnings were raised (see above)".into(),
                _ => {
                    let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
                    format!(
                        "rigor: {flag}: {} warnings were raised (see above)",
                        names.join(", ")
                    )
                }
            });
        }
        if self.gate == Gate::Limit {
            out.push(format!(
                "rigor: {} limit(s) not met (see ✗ above)",
                self.limits_failed
            ));
        }
        if self.gate == Gate::Inconclusive {
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

/// The kinds of every warning a result carries, of the run, a row or an iteration: what
/// `--strict` fails on.
pub fn warning_kinds(r: &RunResult) -> Vec<WarningKind> {
    let rows = r.rows.iter().flat_map(|row| {
        row.warnings
            .iter()
            .chain(row.iterations.iter().flat_map(|i| &i.warnings))
    });
    let mut kinds: Vec<WarningKind> = Vec::new();
    for w in r.warnings.iter().chain(rows) {
        if !kinds.contains(&w.kind) {
            kinds.push(w.kind.clone());
        }
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigor_model::result::WarningKind;

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
        static ALL: Strictness = Strictness::All;
        static OFF: Strictness = Strictness::Off;
        Rules {
            fail_on_regression,
            watched,
            strict: if strict { &ALL } else { &OFF },
        }
    }

    /// A warning of some kind was raised.
    const WARNED: &[WarningKind] = &[WarningKind::ForeignCpu];

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
        let d = decide(&all, false, &[], &rules(true, &watched, false));
        assert_eq!(d.gate, Gate::Regression);
        assert_eq!(d.regressions.len(), 1);
        assert_eq!(
            d.messages(),
            vec!["rigor: regression in load.rps (slow vs base, connections=64): -10.0%"]
        );
        // Watching only memory (unchanged): the gate passes.
        let memory = ids(&["app.rss"]);
        let d = decide(&all, false, &[], &rules(true, &memory, false));
        assert_eq!(d.gate, Gate::Success);
        assert!(d.messages().is_empty());
        // Without the flag a regression is reported, not gated.
        let d = decide(&all, false, &[], &rules(false, &watched, false));
        assert_eq!(d.gate, Gate::Success);
        assert!(d.regressions.is_empty());
    }

    #[test]
    fn an_empty_watch_list_watches_every_measurement() {
        let all = vec![cmp("app.rss", "regression", 12.0)];
        let d = decide(&all, false, &[], &rules(true, &[], false));
        assert_eq!(d.gate, Gate::Regression);
    }

    #[test]
    fn inconclusive_watched_comparisons_are_said_but_do_not_fail() {
        let all = vec![cmp("load.rps", "inconclusive", -1.0)];
        let watched = ids(&["load.rps"]);
        let d = decide(&all, false, &[], &rules(true, &watched, false));
        assert_eq!(d.gate, Gate::Success);
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
            decide(&regressed, true, WARNED, &everything).gate,
            Gate::Failed
        );
        assert_eq!(
            decide(&regressed, false, WARNED, &everything).gate,
            Gate::Regression
        );
        let d = decide(&[], false, WARNED, &everything);
        assert_eq!(d.gate, Gate::Strict);
        assert_eq!(
            d.messages(),
            vec!["rigor: --strict: warnings were raised (see above)"]
        );
        assert_eq!(decide(&[], false, &[], &everything).gate, Gate::Success);
        assert_eq!(
            decide(&[], false, WARNED, &rules(false, &[], false)).gate,
            Gate::Success
        );
    }

    #[test]
    fn fail_on_inconclusive_exits_5_unless_something_weightier_decided() {
        let watched = ids(&["load.rps"]);
        let unsure = vec![
            cmp("load.rps", "inconclusive", -1.0),
            cmp("app.rss", "no change", 0.1),
        ];
        let d = decide(&unsure, false, &[], &rules(false, &watched, false))
            .fail_on_inconclusive(&unsure, &watched);
        assert_eq!(d.gate, Gate::Inconclusive);
        assert_eq!(
            d.messages(),
            vec![
                "rigor: load.rps is inconclusive (slow vs base, connections=64): run more iterations",
                "rigor: --fail-on-inconclusive: a watched measurement is inconclusive (see above)",
            ]
        );
        // Inconclusive where nobody watches: the gate passes.
        let memory = ids(&["app.rss"]);
        let d = decide(&unsure, false, &[], &rules(false, &memory, false))
            .fail_on_inconclusive(&unsure, &memory);
        assert_eq!(d.gate, Gate::Success);
        assert!(d.messages().is_empty());
        // A regression beside it keeps exit 3 (and both are said); a failure keeps exit 1.
        let mixed = vec![
            cmp("load.rps", "regression", -10.0),
            cmp("app.rss", "inconclusive", 3.0),
        ];
        let both = ids(&["load.rps", "app.rss"]);
        let d = decide(&mixed, false, &[], &rules(true, &both, false))
            .fail_on_inconclusive(&mixed, &both);
        assert_eq!(d.gate, Gate::Regression);
        assert_eq!((d.regressions.len(), d.inconclusive.len()), (1, 1));
        let d = decide(&mixed, true, &[], &rules(true, &both, false))
            .fail_on_inconclusive(&mixed, &both);
        assert_eq!(d.gate, Gate::Failed);
        // Settled verdicts pass.
        let settled = vec![cmp("load.rps", "improvement", 5.0)];
        let d = decide(&settled, false, &[], &rules(false, &watched, false))
            .fail_on_inconclusive(&settled, &watched);
        assert_eq!(d.gate, Gate::Success);
    }

    #[test]
    fn names_from_result_files_cannot_drive_the_terminal() {
        let mut c = cmp("load.rps", "regression", -10.0);
        c.candidate = "evil\u{1b}[2J".into();
        let all = vec![c];
        let d = decide(&all, false, &[], &rules(true, &[], false));
        let text = d.messages().join("\n");
        assert!(!text.contains('\u{1b}'), "{text:?}");
    }

    #[test]
    fn warnings_anywhere_in_a_result_count_for_strict() {
        use crate::summary::tests::row_with;
        use rigor_model::result::Warning;
        let mut r: RunResult = serde_json::from_value(serde_json::json!({
            "schema": rigor_model::result::SCHEMA, "rigor_version": "0", "scenario": "s",
            "profile": "local", "started_at": "", "status": "complete",
            "environment": {}, "warnings": [], "builds": [], "rows": [], "comparisons": []
        }))
        .unwrap();
        assert!(warning_kinds(&r).is_empty());
        r.rows.push(row_with(&[], None, "load.rps", &[1.0]));
        assert!(warning_kinds(&r).is_empty());
        r.rows[0].iterations[0]
            .warnings
            .push(Warning::new(WarningKind::NoisyRow, "m", "a"));
        r.rows[0]
            .warnings
            .push(Warning::new(WarningKind::NoisyRow, "m", "a"));
        r.warnings.push(Warning::new(WarningKind::Proxy, "m", "a"));
        assert_eq!(
            warning_kinds(&r),
            vec![WarningKind::Proxy, WarningKind::NoisyRow]
        );
    }

    #[test]
    fn strict_kinds_fail_only_on_their_own_warnings() {
        let list = |s: &[&str]| s.iter().map(|k| k.to_string()).collect::<Vec<_>>();
        assert_eq!(Strictness::parse(None), Ok(Strictness::Off));
        // `--strict=` (and `--strict=,`) names nothing: an error, not every kind.
        for empty in [&[][..], &[""], &["", " "]] {
            let e = Strictness::parse(Some(&list(empty)))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(
                    "names no warning kind; give plain --strict for every kind, or \
                     --strict=KIND,… with kinds among all, bad_responses"
                ),
                "{e}"
            );
        }
        assert_eq!(
            Strictness::parse(Some(&list(&["all"]))),
            Ok(Strictness::All)
        );
        let proxy = Strictness::parse(Some(&list(&["proxy", " debug_build", "proxy"]))).unwrap();
        assert_eq!(
            proxy,
            Strictness::Kinds(vec![WarningKind::Proxy, WarningKind::DebugBuild])
        );
        let e = Strictness::parse(Some(&list(&["proxy", "prox"])))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "--strict=prox: no warning kind `prox`; the kinds are all, bad_responses"
            ),
            "{e}"
        );
        let noise = [WarningKind::ForeignCpu, WarningKind::NoisyRow];
        let r = Rules {
            fail_on_regression: false,
            watched: &[],
            strict: &proxy,
        };
        assert_eq!(decide(&[], false, &noise, &r).gate, Gate::Success);
        let d = decide(
            &[],
            false,
            &[WarningKind::ForeignCpu, WarningKind::Proxy],
            &r,
        );
        assert_eq!(d.gate, Gate::Strict);
        assert_eq!(
            d.messages(),
            vec!["rigor: --strict=proxy,debug_build: proxy warnings were raised (see above)"]
        );
    }

    #[test]
    fn a_failed_limit_exits_6_over_strict_but_under_a_regression() {
        let watched = ids(&["load.rps"]);
        let d = decide(&[], false, &[], &rules(true, &watched, false)).limits(2);
        assert_eq!(d.gate, Gate::Limit);
        assert_eq!(
            d.messages(),
            vec!["rigor: 2 limit(s) not met (see ✗ above)"]
        );
        let d = decide(&[], false, WARNED, &rules(true, &watched, true)).limits(1);
        assert_eq!(d.gate, Gate::Limit);
        let regressed = vec![cmp("load.rps", "regression", -10.0)];
        let d = decide(&regressed, false, &[], &rules(true, &watched, false)).limits(1);
        assert_eq!(d.gate, Gate::Regression);
        assert_eq!(
            decide(&[], true, &[], &rules(true, &watched, false))
                .limits(1)
                .gate,
            Gate::Failed
        );
        assert_eq!(
            decide(&[], false, &[], &rules(true, &watched, false))
                .limits(0)
                .gate,
            Gate::Success
        );
    }
}
