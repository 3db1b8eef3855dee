//! Saved results side by side (`rigor compare A.json B.json [C.json…]`): rows matched by their
//! [`RowKey`] across files, the first file the baseline and each other a candidate column, every
//! matched pair compared like variants of one run, with the caveats of results recorded apart.

use super::comparison;
use super::saved::{self, FileInfo, Saved};
use super::CONFIDENCE;
use super::{caveats, merge, sufficiency};
use crate::error::CompareError;
use rigor_model::declarations::{Better, Declarations};
use rigor_model::result::{Comparison, Row, RowKey, RunResult, Warning, WarningKind};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Schema tag of `rigor compare --json`.
pub const COMPARE_SCHEMA: &str = "rigor.compare.v1";

/// What `rigor compare` found, before rendering: also the `--json` document.
#[derive(Debug, Clone, Serialize)]
pub struct CompareReport {
    /// Always [`COMPARE_SCHEMA`], so readers can refuse what they do not understand.
    pub schema: String,
    /// The practical threshold the verdicts used, in %.
    pub threshold_pct: f64,
    /// The confidence of every interval (0.95).
    pub confidence: f64,
    /// The inputs in order: the first is the baseline.
    pub files: Vec<FileInfo>,
    /// Caveats: not interleaved, environment differences, unmatched rows, inputs' own warnings.
    pub warnings: Vec<Warning>,
    /// One entry per (row, measurement, candidate file).
    pub comparisons: Vec<Comparison>,
    /// The declarations the verdicts used: the files' `measurements`, then `--measure`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub measurements: Declarations,
    /// With CPU profiles on both sides: each compared pair's stacks diffed again, as `rigor
    /// run` diffs its own variants (filled by the command, which reads the profiles' files).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<rigor_model::result::ProfileComparison>,
}

/// How saved results are compared: what `rigor compare`'s flags asked for.
pub struct Request<'a> {
    /// Ids compared even when they are bookkeeping ids that
    /// [`comparison::default_measurements`] leaves out (`--measurements`).
    pub extra: &'a [String],
    /// The practical threshold, in %.
    pub threshold_pct: f64,
    /// Directions given with `--measure`; they override the files' declarations.
    pub flags: &'a [(String, Better)],
    /// `--threshold ID=PCT`: thresholds of single measurements, over the files' declarations.
    pub thresholds: &'a [(String, f64)],
}

/// Compares saved results: rows matched by (scenario, matrix values, variant), the first input is
/// the baseline and each other a candidate. Every comparison carries its scenario, and its `row`
/// carries `scenario` (and `variant` when the row has one) next to the matrix values, so entries
/// from different files and scenarios stay distinguishable. Directions come from the files'
/// declarations and `--measure`; ids with none get no verdict. No matched row at all is an error.
pub fn compare_results(inputs: &[Saved], request: &Request) -> Result<CompareReport, CompareError> {
    if inputs.len() == 1 {
        return super::reanalysis::reanalyse(inputs, request);
    }
    if inputs.is_empty() {
        return Err(CompareError::NoInput);
    }
    let names = saved::column_names(inputs);
    let mut warnings = vec![caveats::not_interleaved(inputs, &names)];
    let mut decl = merge::merge_declarations(inputs, &names, request.flags, &mut warnings);
    rigor_model::declarations::set_thresholds(&mut decl, request.thresholds);
    warnings.extend(caveats::as_recorded(inputs, &names));

    let mut matched = Matched::default();
    for (ci, (_, cand)) in inputs.iter().enumerate().skip(1) {
        let sides = Columns {
            base: &inputs[0].1,
            cand,
            base_name: &names[0],
            cand_name: &names[ci],
        };
        matched.add(&sides, request, &decl);
    }
    if !matched.any {
        return Err(CompareError::NoMatch {
            candidates: names[1..].join(", "),
            baseline: names[0].clone(),
        });
    }
    warnings.append(&mut matched.warnings);
    warnings.extend(sufficiency::too_few_rows(&matched.too_few));
    warnings.extend(merge::explain_undeclared(
        inputs,
        &mut matched.comparisons,
        &decl,
    ));
    Ok(CompareReport {
        schema: COMPARE_SCHEMA.into(),
        threshold_pct: request.threshold_pct,
        confidence: CONFIDENCE,
        files: saved::file_infos(inputs, &names),
        warnings,
        comparisons: matched.comparisons,
        measurements: decl,
        profiles: Vec::new(),
    })
}

/// The baseline and one candidate, with their column names.
struct Columns<'a> {
    base: &'a RunResult,
    cand: &'a RunResult,
    base_name: &'a str,
    cand_name: &'a str,
}

/// What matching the candidates' rows to the baseline's found so far.
#[derive(Default)]
struct Matched {
    comparisons: Vec<Comparison>,
    /// `unmatched_row` warnings, both ways.
    warnings: Vec<Warning>,
    /// Matched rows whose kept iterations can never reach a verdict, named for the warning.
    too_few: Vec<String>,
    /// Whether any row matched at all.
    any: bool,
}

impl Matched {
    /// Matches one candidate's rows to the baseline's and compares every matched pair.
    fn add(&mut self, sides: &Columns, request: &Request, decl: &Declarations) {
        let (base, cand) = (sides.base, sides.cand);
        // Each side's rows by key (the first row of a key, as a search in order finds it), so
        // matching is linear in the rows, not their square.
        let keyed = |r: &'_ RunResult| {
            let mut by_key: HashMap<RowKey, usize> = HashMap::with_capacity(r.rows.len());
            for (i, row) in r.rows.iter().enumerate() {
                by_key.entry(row.key_in(&r.scenario)).or_insert(i);
            }
            by_key
        };
        let (base_keys, cand_keys) = (keyed(base), keyed(cand));
        for brow in &base.rows {
            let key = brow.key_in(&base.scenario);
            let Some(crow) = cand_keys.get(&key).map(|&i| &cand.rows[i]) else {
                self.warnings
                    .push(unmatched(sides.base_name, &key, sides.cand_name));
                continue;
            };
            self.any = true;
            let (nb, nc) = (brow.kept(), crow.kept());
            if !sufficiency::can_reach(nb, nc) {
                self.too_few.push(format!(
                    "`{}` ({nb} in {} vs {nc} in {})",
                    key.label(),
                    sides.base_name,
                    sides.cand_name
                ));
            }
            self.comparisons
                .extend(compare_pair(brow, crow, &key, sides, request, decl));
        }
        for crow in &cand.rows {
            let key = crow.key_in(&cand.scenario);
            if !base_keys.contains_key(&key) {
                self.warnings
                    .push(unmatched(sides.cand_name, &key, sides.base_name));
            }
        }
    }
}

/// `unmatched_row`: a row of the file named `here` that the file named `there` does not have.
fn unmatched(here: &str, key: &RowKey, there: &str) -> Warning {
    Warning::of(
        WarningKind::UnmatchedRow,
        format!("{here}: row `{}` has no match in {there}", key.label()),
    )
}

/// Compares one matched pair of rows on the measurements both have (plus `--measurements` ids
/// both have), named by their files' columns and labelled with the row's key.
fn compare_pair(
    brow: &Row,
    crow: &Row,
    key: &RowKey,
    sides: &Columns,
    request: &Request,
    decl: &Declarations,
) -> Vec<Comparison> {
    let mut ids = common_measurements(brow, crow);
    for id in request.extra {
        if !ids.contains(id) && !brow.values(id).is_empty() && !crow.values(id).is_empty() {
            ids.push(id.clone());
        }
    }
    let ids = rigor_model::measurements::order(ids);
    let mut out = comparison::compare_rows(
        brow,
        crow,
        &ids,
        request.threshold_pct,
        decl,
        comparison::Design::UNPAIRED,
    );
    for c in &mut out {
        c.scenario = key.scenario.clone();
        c.baseline = sides.base_name.to_string();
        c.candidate = sides.cand_name.to_string();
        c.row = brow.variables.clone();
        c.row.insert("scenario".into(), key.scenario.clone());
        if let Some(v) = &key.variant {
            c.row.insert("variant".into(), v.to_string());
        }
    }
    out
}

/// Measurements both rows reported, bookkeeping ids aside.
fn common_measurements(a: &Row, b: &Row) -> Vec<String> {
    let theirs = comparison::default_measurements(std::slice::from_ref(b));
    comparison::default_measurements(std::slice::from_ref(a))
        .into_iter()
        .filter(|id| theirs.contains(id))
        .collect()
}

/// `--measurements` ids the comparison has no entry for: gating on them would pass silently.
/// The error names the first and lists what was measured.
pub fn missing_watched(report: &CompareReport, watched: &[String]) -> Option<String> {
    let id = watched
        .iter()
        .find(|id| !report.comparisons.iter().any(|c| &c.measurement == *id))?;
    let measured =
        rigor_model::measurements::order(report.comparisons.iter().map(|c| c.measurement.clone()));
    Some(format!(
        "--measurements: `{id}` was not measured in both the baseline and a candidate; \
         measured: {}",
        measured.join(", ")
    ))
}

/// Saved results built in code: this crate's tests, and (with the `fixtures` feature) the
/// tests of the reports and the command line that read them.
#[cfg(any(test, feature = "fixtures"))]
#[cfg_attr(not(test), allow(dead_code, unused_imports))]
pub mod tests {
    use super::*;
    use crate::summary::tests::row_with;
    use rigor_model::result::SCHEMA;
    use std::path::PathBuf;

    pub fn compare(
        inputs: &[Saved],
        flags: &[(String, Better)],
    ) -> Result<CompareReport, CompareError> {
        compare_results(
            inputs,
            &Request {
                extra: &[],
                threshold_pct: 2.0,
                flags,
                thresholds: &[],
            },
        )
    }

    /// A saved result of one row (`connections=64`) with `load.rps` and `app.rss`.
    pub fn result(description: Option<&str>, rps: &[f64], kernel: &str) -> RunResult {
        let mut row = row_with(&[("connections", "64")], None, "load.rps", rps);
        for it in row.iterations.iter_mut() {
            it.measurements.insert("app.rss".into(), 61.0);
        }
        RunResult {
            schema: SCHEMA.into(),
            rigor_version: "0.1.0".into(),
            scenario: "plaintext".into(),
            profile: "local".into(),
            description: description.map(str::to_string),
            started_at: "2026-11-30T02:00:00Z".into(),
            finished_at: None,
            status: rigor_model::result::RunStatus::Complete,
            seed: None,
            environment: serde_json::json!({"kernel": kernel, "load_avg_1m": 0.3}),
            warnings: vec![],
            builds: vec![],
            rows: vec![row],
            comparisons: vec![],
            measurements: Default::default(),
            sequential: None,
            noise_floor: Vec::new(),
            cross_check: None,
            limits: Vec::new(),
            profiles: Vec::new(),
        }
    }

    /// `n` values within ±0.4% of `center`.
    pub fn noisy(center: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| center * (1.0 + 0.002 * ((i * 7 % 5) as f64 - 2.0)))
            .collect()
    }

    #[test]
    fn three_files_give_candidate_columns_and_a_drift_warning() {
        let inputs = vec![
            (
                PathBuf::from("/tmp/net5.json"),
                result(None, &noisy(243_000.0, 10), "6.8"),
            ),
            (
                PathBuf::from("/tmp/net6.json"),
                result(None, &noisy(260_928.0, 10), "6.8"),
            ),
            (
                PathBuf::from("/tmp/pr.json"),
                result(Some("this PR"), &noisy(200_000.0, 10), "6.9"),
            ),
        ];
        let report = compare(&inputs, &[]).unwrap();
        let names: Vec<&str> = report.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, vec!["net5", "net6", "this PR"]);
        let rps: Vec<(&str, &str)> = report
            .comparisons
            .iter()
            .filter(|c| c.measurement == "load.rps")
            .map(|c| (c.candidate.as_str(), c.verdict.as_str()))
            .collect();
        assert_eq!(
            rps,
            vec![("net6", "improvement"), ("this PR", "regression")]
        );
        let c = &report.comparisons[0];
        assert_eq!(c.baseline, "net5");
        assert_eq!(c.row["scenario"], "plaintext");
        assert_eq!(c.row["connections"], "64");
        let w = &report.warnings[0];
        assert_eq!(w.kind, "not_interleaved");
        assert!(
            w.message.contains("kernel (6.8 / 6.8 / 6.9)"),
            "{}",
            w.message
        );
        assert!(!w.message.contains("load_avg"), "{}", w.message);

        let json: serde_json::Value = serde_json::to_value(&report).unwrap();
        assert_eq!(json["schema"], "rigor.compare.v1");
        assert_eq!(json["comparisons"][1]["verdict"], "improvement");
    }

    #[test]
    fn files_that_declare_an_id_differently_leave_it_without_a_verdict() {
        use rigor_model::declarations::Declaration;
        let with = |center: f64, better: Better| {
            let mut r = result(None, &noisy(center, 10), "6.8");
            for it in r.rows[0].iterations.iter_mut() {
                let v = it.measurements["load.rps"] / 1000.0;
                it.measurements.insert("cmd.mps".into(), v);
            }
            r.measurements.insert(
                "cmd.mps".into(),
                Declaration {
                    direction: Some(better),
                    ..Default::default()
                },
            );
            r
        };
        let inputs = vec![
            (PathBuf::from("a.json"), with(1000.0, Better::Higher)),
            (PathBuf::from("b.json"), with(900.0, Better::Lower)),
        ];
        let verdict = |report: &CompareReport| {
            report
                .comparisons
                .iter()
                .find(|c| c.measurement == "cmd.mps")
                .map(|c| c.verdict)
                .unwrap()
        };
        let report = compare(&inputs, &[]).unwrap();
        assert_eq!(verdict(&report), "inconclusive");
        let w = report
            .warnings
            .iter()
            .find(|w| w.kind == "conflicting_declarations")
            .expect("conflict warning");
        assert!(
            w.message
                .contains("cmd.mps differently (a: higher, b: lower)"),
            "{}",
            w.message
        );
        // A flag settles it.
        let report = compare(&inputs, &[("cmd.mps".into(), Better::Higher)]).unwrap();
        assert_eq!(verdict(&report), "regression");
        assert!(!report
            .warnings
            .iter()
            .any(|w| w.kind == "conflicting_declarations"));
    }

    #[test]
    fn too_few_kept_iterations_are_said_before_the_tables() {
        // 6 recorded, 3 excluded (as -i 6 --exclude 2:1 leaves them): 3 vs 3 can never reach 95%.
        let mk = |center: f64| {
            let mut r = result(None, &noisy(center, 6), "6.8");
            for it in r.rows[0].iterations.iter_mut().take(3) {
                it.excluded = rigor_model::result::Exclusion::Order;
            }
            r
        };
        let inputs = vec![
            (PathBuf::from("a.json"), mk(1000.0)),
            (PathBuf::from("b.json"), mk(900.0)),
        ];
        let report = compare(&inputs, &[]).unwrap();
        let w = report
            .warnings
            .iter()
            .find(|w| w.kind == "too_few_iterations")
            .expect("too few warning");
        assert!(
            w.message
                .contains("`plaintext connections=64` (3 in a vs 3 in b)"),
            "{}",
            w.message
        );
    }

    #[test]
    fn unmatched_rows_are_warned_and_no_match_is_an_error() {
        let a = result(None, &noisy(100.0, 5), "6.8");
        let mut b = result(None, &noisy(100.0, 5), "6.8");
        b.rows[0]
            .variables
            .insert("connections".into(), "16".into());
        let inputs = vec![(PathBuf::from("a.json"), a), (PathBuf::from("b.json"), b)];
        let err = compare(&inputs, &[]).unwrap_err().to_string();
        assert!(err.contains("no row of b matches a row of a"), "{err}");
    }

    #[test]
    fn watched_ids_must_have_been_compared() {
        let inputs = vec![
            (
                PathBuf::from("a.json"),
                result(None, &noisy(1000.0, 10), "6.8"),
            ),
            (
                PathBuf::from("b.json"),
                result(None, &noisy(900.0, 10), "6.8"),
            ),
        ];
        let report = compare(&inputs, &[]).unwrap();
        assert!(missing_watched(&report, &["load.rps".into(), "app.rss".into()]).is_none());
        let err = missing_watched(&report, &["load.rpz".into()]).unwrap();
        assert_eq!(
            err,
            "--measurements: `load.rpz` was not measured in both the baseline and a candidate; \
             measured: app.rss, load.rps"
        );
    }
}
