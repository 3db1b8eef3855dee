//! `rigor compare A.json B.json [C.json…]`: the comparison table across saved results, like seed
//! 001's net5.0 / net6.0 / this PR columns, but with intervals and verdicts, an honest warning that
//! separately recorded runs were not interleaved, and exit code 3 for CI (`--fail-on-regression`).

use crate::comparison::{self, CONFIDENCE};
use crate::declarations::{self, Better, Declarations};
use crate::exit::Exit;
use crate::report::{self, environment, format, Block, Cell, Document, Style};
use crate::result::{Comparison, Row, RunResult, Warning, SCHEMA};
use anyhow::{anyhow, bail, Context};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Schema tag of `rigor compare --json`.
pub const COMPARE_SCHEMA: &str = "rigor.compare.v1";

/// Measurement `--fail-on-regression` watches when `--measurements` is not given.
pub const PRIMARY: &str = "load.rps";

/// Options of `rigor compare`.
#[derive(clap::Args, Debug, Clone)]
pub struct CompareArgs {
    /// Result files written by `rigor run --json`; the first is the baseline, each other a
    /// candidate column.
    #[arg(required = true, num_args = 2.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    /// Practical threshold: changes whose whole 95% interval stays within ±this are "no change"
    /// (`2` or `2%`).
    #[arg(long, default_value = "2%", value_parser = parse_threshold, value_name = "PCT")]
    pub threshold: f64,
    /// Also write the comparison as JSON (`rigor.compare.v1`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the comparison as GitHub markdown (ready for a PR comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Measurement ids `--fail-on-regression` watches, comma-separated (default: load.rps).
    /// The table always shows every measurement the files have in common.
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub measurements: Vec<String>,
    /// Exit with code 3 when a watched measurement regressed.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Which direction is better for a measurement id rigor does not know (`ID=higher` or
    /// `ID=lower`; repeat or comma-separate). Overrides the `[measurements.ID]` declarations the
    /// result files carry; ids with neither get no verdict.
    #[arg(long = "measure", value_delimiter = ',', value_name = "ID=higher|lower",
          value_parser = declarations::parse_flag)]
    pub measure: Vec<(String, Better)>,
}

/// Accepts `2`, `2%` or `2.5 %`: how people write a threshold.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim();
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a threshold: expected a non-negative percentage such as 2 or 2%"
        )),
    }
}

/// One input file as the JSON output names it.
#[derive(Debug, Clone, Serialize)]
pub struct FileInfo {
    /// The path as given on the command line.
    pub path: String,
    /// The column name: the result's `description`, else the file stem.
    pub name: String,
    /// The result's scenario(s), so a reader sees what was compared.
    pub scenario: String,
    /// The result's `--description`, if any.
    pub description: Option<String>,
    /// When the run started: separately recorded runs may be days apart.
    pub started_at: String,
    /// The rigor that wrote the result (measurement methods can change between versions).
    pub rigor_version: String,
    /// `complete`, `interrupted`, `failed`…
    pub status: String,
}

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
}

/// Runs `rigor compare`; returns the process exit code (0, or 3 for a watched regression with
/// `--fail-on-regression`). Errors (unreadable file, not a result, nothing to compare) are `Err`.
pub fn execute(args: &CompareArgs) -> anyhow::Result<Exit> {
    if let Err(e) = declarations::flag_conflicts(&args.measure) {
        crate::console::err(&format!("error: {e}"));
        return Ok(Exit::Usage);
    }
    let mut inputs = Vec::new();
    for path in &args.files {
        inputs.push((path.clone(), load(path)?));
    }
    let watched: Vec<String> = if args.measurements.is_empty() {
        vec![PRIMARY.to_string()]
    } else {
        args.measurements
            .iter()
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .collect()
    };
    let report = compare_results(&inputs, &args.measurements, args.threshold, &args.measure)?;
    if !args.measurements.is_empty() {
        for id in &watched {
            if !report.comparisons.iter().any(|c| &c.measurement == id) {
                bail!(
                    "--measurements: `{id}` was not measured in both the baseline and a candidate; \
                     measured: {}",
                    measured_ids(&report).join(", ")
                );
            }
        }
    }
    if args.fail_on_regression {
        if let Some(e) = unjudgeable(&inputs, &report, &watched) {
            crate::console::err(&format!("error: {e}"));
            return Ok(Exit::Usage);
        }
    }

    let doc = document(&report);
    crate::console::out(&report::terminal::render_document(
        &doc,
        report::terminal::use_color(),
    ));

    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let markdown = report::markdown::render_document(&doc);
    if let Some(path) = &args.markdown {
        std::fs::write(path, &markdown)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .and_then(|mut f| writeln!(f, "{markdown}"));
        if let Err(e) = appended {
            crate::console::err(&format!(
                "rigor: cannot append to $GITHUB_STEP_SUMMARY ({}): {e}",
                Path::new(&summary).display()
            ));
        }
    }

    if args.fail_on_regression {
        let found = comparison::regressions(&report.comparisons, &watched);
        let shown = report::terminal::visible;
        for c in &found {
            crate::console::err(&format!(
                "rigor: regression in {} ({} vs {}{}): {}",
                shown(&c.measurement),
                shown(&c.candidate),
                shown(&c.baseline),
                shown(&row_suffix(&c.row)),
                c.change_pct.map(format::signed_pct).unwrap_or_default()
            ));
        }
        for c in report
            .comparisons
            .iter()
            .filter(|c| watched.contains(&c.measurement) && c.verdict == "inconclusive")
        {
            crate::console::err(&format!(
                "rigor: {} is inconclusive ({} vs {}{}){}",
                shown(&c.measurement),
                shown(&c.candidate),
                shown(&c.baseline),
                shown(&row_suffix(&c.row)),
                c.note
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            ));
        }
        if !found.is_empty() {
            return Ok(Exit::Regression);
        }
    }
    Ok(Exit::Success)
}

fn row_suffix(row: &BTreeMap<String, String>) -> String {
    if row.is_empty() {
        String::new()
    } else {
        format!(", {}", report::comparison_row_label("", row))
    }
}

fn measured_ids(report: &CompareReport) -> Vec<String> {
    crate::measurements::order(report.comparisons.iter().map(|c| c.measurement.clone()))
}

/// Reads one saved result, with an error that names the file and says what is wrong with it.
pub fn load(path: &Path) -> anyhow::Result<RunResult> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => anyhow!("{shown}: no such file"),
        _ => anyhow!("{shown}: cannot read: {e}"),
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow!("{shown} is not JSON ({e}); expected a `rigor run --json` result"))?;
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(SCHEMA) => {}
        Some(COMPARE_SCHEMA) => bail!(
            "{shown} is a `rigor compare` output ({COMPARE_SCHEMA}); compare the `rigor run --json` \
             results it was made from"
        ),
        Some(other) => bail!("{shown} has schema `{other}`; this rigor reads `{SCHEMA}`"),
        None => bail!("{shown} is not a rigor result: no \"schema\" field (expected `{SCHEMA}`)"),
    }
    serde_json::from_value(value)
        .map_err(|e| anyhow!("{shown} does not match the `{SCHEMA}` schema: {e}"))
}

/// Column names: each result's description, else its file stem; made unique.
fn column_names(inputs: &[(PathBuf, RunResult)]) -> Vec<String> {
    let stem = |p: &Path| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string())
    };
    let mut names: Vec<String> = inputs
        .iter()
        .map(|(p, r)| {
            r.description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| stem(p))
        })
        .collect();
    // Two files with the same description: fall back to their stems, then number them.
    for i in 0..names.len() {
        if names.iter().filter(|n| **n == names[i]).count() > 1 {
            let dup = names[i].clone();
            for (j, n) in names.iter_mut().enumerate() {
                if *n == dup {
                    *n = stem(&inputs[j].0);
                }
            }
        }
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for n in names.iter_mut() {
        let count = seen.entry(n.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            *n = format!("{n} ({count})");
        }
    }
    names
}

/// The declarations of every input merged, then `flags` on top. Files that disagree on an id's
/// direction leave it undeclared (with a warning) unless a flag settles it.
fn merge_declarations(
    inputs: &[(PathBuf, RunResult)],
    names: &[String],
    flags: &[(String, Better)],
    warnings: &mut Vec<Warning>,
) -> Declarations {
    let mut merged = Declarations::new();
    let mut conflicts: Vec<String> = Vec::new();
    for (_, r) in inputs {
        for (id, d) in &r.measurements {
            let entry = merged.entry(id.clone()).or_insert_with(|| d.clone());
            if entry.direction.is_some()
                && d.direction.is_some()
                && entry.direction != d.direction
                && !conflicts.contains(id)
            {
                conflicts.push(id.clone());
            }
            entry.direction = entry.direction.or(d.direction);
            entry.unit = entry.unit.clone().or_else(|| d.unit.clone());
            entry.label = entry.label.clone().or_else(|| d.label.clone());
        }
    }
    for id in &conflicts {
        if flags.iter().any(|(f, _)| f == id) {
            continue;
        }
        if let Some(d) = merged.get_mut(id) {
            d.direction = None;
        }
        let said: Vec<String> = inputs
            .iter()
            .zip(names)
            .filter_map(|((_, r), name)| {
                r.measurements
                    .get(id)
                    .and_then(|d| d.direction)
                    .map(|b| format!("{name}: {}", b.as_str()))
            })
            .collect();
        warnings.push(Warning::new(
            "conflicting_declarations",
            format!(
                "the results declare {id} differently ({}): no verdict for it",
                said.join(", ")
            ),
            format!("settle it with --measure {id}=higher or --measure {id}=lower"),
        ));
    }
    for (id, better) in flags {
        merged.entry(id.clone()).or_default().direction = Some(*better);
    }
    merged
}

/// Why `--fail-on-regression` cannot gate on a watched id: it was compared but has no direction
/// (never declared, or declared both ways by the files), so it could never be a regression and
/// the gate would pass whatever happened. Names the id and how to settle it.
fn unjudgeable(
    inputs: &[(PathBuf, RunResult)],
    report: &CompareReport,
    watched: &[String],
) -> Option<String> {
    let shown = report::terminal::visible;
    let id = watched.iter().find(|id| {
        report.comparisons.iter().any(|c| &c.measurement == *id)
            && declarations::direction(id, &report.measurements).is_none()
    })?;
    let declared = inputs
        .iter()
        .any(|(_, r)| r.measurements.get(id).and_then(|d| d.direction).is_some());
    Some(declarations::cannot_gate(&shown(id), declared))
}

/// Compares saved results: rows matched by (scenario, matrix values, variant), the first input is
/// the baseline and each other a candidate. Every comparison carries its scenario, and its `row`
/// carries `scenario` (and `variant` when the row has one) next to the matrix values, so entries
/// from different files and scenarios stay distinguishable. `extra` ids are compared even when
/// they are bookkeeping ids that [`comparison::default_measurements`] leaves out. Directions come
/// from the files' declarations and `flags` (`--measure`); ids with none get no verdict.
pub fn compare_results(
    inputs: &[(PathBuf, RunResult)],
    extra: &[String],
    threshold_pct: f64,
    flags: &[(String, Better)],
) -> anyhow::Result<CompareReport> {
    if inputs.len() < 2 {
        bail!("rigor compare needs at least two result files");
    }
    let names = column_names(inputs);
    let files: Vec<FileInfo> = inputs
        .iter()
        .zip(&names)
        .map(|((p, r), name)| FileInfo {
            path: p.display().to_string(),
            name: name.clone(),
            scenario: r.scenario.clone(),
            description: r.description.clone(),
            started_at: r.started_at.clone(),
            rigor_version: r.rigor_version.clone(),
            status: r.status.clone(),
        })
        .collect();
    let mut warnings = vec![not_interleaved(inputs, &names)];
    let decl = merge_declarations(inputs, &names, flags, &mut warnings);
    for ((_, r), name) in inputs.iter().zip(&names) {
        if !r.status.is_empty() && r.status != "complete" {
            warnings.push(Warning::new(
                "incomplete_result",
                format!("{name} is `{}`, not complete", r.status),
                "its rows may have fewer iterations than planned",
            ));
        }
        let mut kinds: Vec<&str> = r
            .warnings
            .iter()
            .chain(r.rows.iter().flat_map(|row| row.warnings.iter()))
            .chain(
                r.rows
                    .iter()
                    .flat_map(|row| row.iterations.iter().flat_map(|it| it.warnings.iter())),
            )
            .map(|w| w.kind.as_str())
            .collect();
        kinds.sort();
        kinds.dedup();
        if !kinds.is_empty() {
            warnings.push(Warning::new(
                "result_warnings",
                format!("{name} was recorded with warnings: {}", kinds.join(", ")),
                "see that run's report; its numbers may not be comparable",
            ));
        }
    }

    let base = &inputs[0].1;
    let mut comparisons = Vec::new();
    let mut matched_any = false;
    let mut too_few: Vec<String> = Vec::new();
    for (ci, (_, cand)) in inputs.iter().enumerate().skip(1) {
        for brow in &base.rows {
            let bkey = brow.key_in(&base.scenario);
            let Some(crow) = cand.rows.iter().find(|r| r.key_in(&cand.scenario) == bkey) else {
                warnings.push(Warning::new(
                    "unmatched_row",
                    format!(
                        "{}: row `{}` has no match in {}",
                        names[0],
                        bkey.label(),
                        names[ci]
                    ),
                    "rows match by scenario, matrix values and variant",
                ));
                continue;
            };
            matched_any = true;
            let kept = |r: &Row| {
                r.iterations
                    .iter()
                    .filter(|it| !it.excluded && it.error.is_none())
                    .count()
            };
            let (nb, nc) = (kept(brow), kept(crow));
            if !rigor_stats::can_ever_be_significant(nb, nc, CONFIDENCE) {
                too_few.push(format!(
                    "`{}` ({nb} in {} vs {nc} in {})",
                    bkey.label(),
                    names[0],
                    names[ci]
                ));
            }
            let mut ids = common_measurements(brow, crow);
            for id in extra {
                if !ids.contains(id) && !brow.values(id).is_empty() && !crow.values(id).is_empty() {
                    ids.push(id.clone());
                }
            }
            let ids = crate::measurements::order(ids);
            for mut c in comparison::compare_rows(brow, crow, &ids, threshold_pct, &decl) {
                c.scenario = bkey.scenario.clone();
                c.baseline = names[0].clone();
                c.candidate = names[ci].clone();
                c.row = brow.variables.clone();
                c.row.insert("scenario".into(), bkey.scenario.clone());
                if let Some(v) = &bkey.variant {
                    c.row.insert("variant".into(), v.to_string());
                }
                comparisons.push(c);
            }
        }
        for crow in &cand.rows {
            let ckey = crow.key_in(&cand.scenario);
            if !base.rows.iter().any(|r| r.key_in(&base.scenario) == ckey) {
                warnings.push(Warning::new(
                    "unmatched_row",
                    format!(
                        "{}: row `{}` has no match in {}",
                        names[ci],
                        ckey.label(),
                        names[0]
                    ),
                    "rows match by scenario, matrix values and variant",
                ));
            }
        }
    }
    if !matched_any {
        bail!(
            "no row of {} matches a row of {} (rows match by scenario, matrix values and variant)",
            names[1..].join(", "),
            names[0]
        );
    }
    if !too_few.is_empty() {
        warnings.push(Warning::new(
            "too_few_iterations",
            format!(
                "kept iterations per side can never reach {}% confidence for {}: their \
                 comparisons cannot reach a verdict",
                (CONFIDENCE * 100.0).round(),
                too_few.join(", ")
            ),
            "record more iterations per side (what --exclude drops does not count)",
        ));
    }
    // Ids the files declared both ways have their `conflicting_declarations` warning: they are
    // not "undeclared", and their notes say why they have no verdict.
    let declared_by_a_file = |id: &String| {
        inputs
            .iter()
            .any(|(_, r)| r.measurements.get(id).and_then(|d| d.direction).is_some())
    };
    let mut undeclared =
        declarations::undeclared(comparisons.iter().map(|c| &c.measurement), &decl);
    for c in comparisons.iter_mut() {
        if undeclared.contains(&c.measurement) && declared_by_a_file(&c.measurement) {
            c.note = Some(format!(
                "no verdict: the results declare {} differently",
                c.measurement
            ));
        }
    }
    undeclared.retain(|id| !declared_by_a_file(id));
    warnings.extend(declarations::undeclared_warning(&undeclared));
    Ok(CompareReport {
        schema: COMPARE_SCHEMA.into(),
        threshold_pct,
        confidence: CONFIDENCE,
        files,
        warnings,
        comparisons,
        measurements: decl,
    })
}

/// Measurements both rows reported, bookkeeping ids aside.
fn common_measurements(a: &Row, b: &Row) -> Vec<String> {
    let theirs = comparison::default_measurements(std::slice::from_ref(b));
    comparison::default_measurements(std::slice::from_ref(a))
        .into_iter()
        .filter(|id| theirs.contains(id))
        .collect()
}

/// The honest caveat of comparing saved results, with the machine differences that make it worse.
fn not_interleaved(inputs: &[(PathBuf, RunResult)], names: &[String]) -> Warning {
    let envs: Vec<&serde_json::Value> = inputs.iter().map(|(_, r)| &r.environment).collect();
    let diffs = environment::differences(&envs);
    let mut message = "these results were recorded separately, not interleaved: drift of the \
                       machine between the runs (heat, other load, updates) counts as part of \
                       each change"
        .to_string();
    if !diffs.is_empty() {
        const SHOWN: usize = 12;
        let listed: Vec<String> = diffs
            .iter()
            .take(SHOWN)
            .map(|(k, values)| {
                let vs: Vec<String> = values
                    .iter()
                    .map(|v| v.clone().unwrap_or_else(|| "—".into()))
                    .collect();
                format!("{k} ({})", vs.join(" / "))
            })
            .collect();
        message.push_str(&format!(
            "; the environment differs ({} order): {}",
            names.join(" / "),
            listed.join(", ")
        ));
        if diffs.len() > SHOWN {
            message.push_str(&format!(" and {} more", diffs.len() - SHOWN));
        }
    }
    Warning::new(
        "not_interleaved",
        message,
        "for a fair A/B, make the sides variants of one `rigor run` so their iterations interleave",
    )
}

/// The compare report as a document, shared by the terminal, `--markdown` and the step summary.
pub fn document(report: &CompareReport) -> Document {
    let mut blocks = vec![Block::Heading(1, "rigor compare".into())];
    let names: Vec<String> = report
        .files
        .iter()
        .map(|f| {
            if f.path.contains(&f.name) {
                f.path.clone()
            } else {
                format!("{} ({})", f.name, f.path)
            }
        })
        .collect();
    blocks.push(Block::Text(format!(
        "baseline {} · candidate{} {} · threshold ±{}% · {}% confidence",
        names[0],
        if names.len() > 2 { "s" } else { "" },
        names[1..].join(", "),
        format::number(report.threshold_pct),
        format::number(report.confidence * 100.0)
    )));
    // Said before the tables: no figure in them can change it.
    let (up_front, rest): (Vec<&Warning>, Vec<&Warning>) = report
        .warnings
        .iter()
        .partition(|w| w.kind == "too_few_iterations");
    if !up_front.is_empty() {
        blocks.push(Block::List(
            up_front
                .iter()
                .map(|w| Cell::styled(report::warning_text(w), Style::Warning))
                .collect(),
        ));
    }
    blocks.extend(report::comparison_blocks(
        &report.comparisons,
        &report.measurements,
    ));
    if !rest.is_empty() {
        blocks.push(Block::Heading(2, "warnings".into()));
        blocks.push(Block::List(
            rest.iter()
                .map(|w| Cell::styled(report::warning_text(w), Style::Warning))
                .collect(),
        ));
    }
    Document { blocks }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize::tests::row_with;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CompareArgs,
    }

    fn result(description: Option<&str>, rps: &[f64], kernel: &str) -> RunResult {
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
            status: "complete".into(),
            seed: None,
            environment: serde_json::json!({"kernel": kernel, "load_avg_1m": 0.3}),
            warnings: vec![],
            builds: vec![],
            rows: vec![row],
            comparisons: vec![],
            measurements: Default::default(),
        }
    }

    fn noisy(center: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| center * (1.0 + 0.002 * ((i * 7 % 5) as f64 - 2.0)))
            .collect()
    }

    #[test]
    fn thresholds() {
        assert_eq!(parse_threshold("2%"), Ok(2.0));
        assert_eq!(parse_threshold("2.5"), Ok(2.5));
        assert_eq!(parse_threshold(" 1 % "), Ok(1.0));
        assert!(parse_threshold("-1").is_err());
        assert!(parse_threshold("two").is_err());
    }

    #[test]
    fn args_parse() {
        let cli = Cli::try_parse_from([
            "x",
            "a.json",
            "b.json",
            "--threshold",
            "5",
            "--measurements",
            "load.rps,app.rss",
        ])
        .unwrap();
        assert_eq!(cli.args.threshold, 5.0);
        assert_eq!(cli.args.measurements, vec!["load.rps", "app.rss"]);
        assert!(!cli.args.fail_on_regression);
        let cli = Cli::try_parse_from(["x", "a.json", "b.json"]).unwrap();
        assert_eq!(cli.args.threshold, 2.0);
        assert!(Cli::try_parse_from(["x", "a.json"]).is_err());
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
        let report = compare_results(&inputs, &[], 2.0, &[]).unwrap();
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

        let doc = document(&report);
        let table = doc.tables()[0].clone();
        assert_eq!(
            table.header,
            vec![
                "measurement",
                "net5",
                "net6",
                "Δ median",
                "95% CI",
                "p",
                "verdict",
                "this PR",
                "Δ median",
                "95% CI",
                "p",
                "verdict"
            ]
        );
        assert_eq!(table.rows[0][0].text, "Max Working Set (MiB)");
        assert_eq!(table.rows[1][0].text, "Requests/sec (1/s)");
        assert_eq!(table.rows[1][1].text, "243,000");
        let json: serde_json::Value = serde_json::to_value(&report).unwrap();
        assert_eq!(json["schema"], "rigor.compare.v1");
        assert_eq!(json["comparisons"][1]["verdict"], "improvement");
    }

    #[test]
    fn files_that_declare_an_id_differently_leave_it_without_a_verdict() {
        use crate::declarations::Declaration;
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
                .map(|c| c.verdict.clone())
                .unwrap()
        };
        let report = compare_results(&inputs, &[], 2.0, &[]).unwrap();
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
        let report =
            compare_results(&inputs, &[], 2.0, &[("cmd.mps".into(), Better::Higher)]).unwrap();
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
                it.excluded = true;
            }
            r
        };
        let inputs = vec![
            (PathBuf::from("a.json"), mk(1000.0)),
            (PathBuf::from("b.json"), mk(900.0)),
        ];
        let report = compare_results(&inputs, &[], 2.0, &[]).unwrap();
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
        let doc = document(&report);
        let first_table = doc
            .blocks
            .iter()
            .position(|b| matches!(b, Block::Table(_)))
            .unwrap();
        let said = doc
            .blocks
            .iter()
            .position(
                |b| matches!(b, Block::List(l) if l[0].text.starts_with("[too_few_iterations]")),
            )
            .unwrap();
        assert!(said < first_table);
    }

    #[test]
    fn unmatched_rows_are_warned_and_no_match_is_an_error() {
        let a = result(None, &noisy(100.0, 5), "6.8");
        let mut b = result(None, &noisy(100.0, 5), "6.8");
        b.rows[0]
            .variables
            .insert("connections".into(), "16".into());
        let inputs = vec![(PathBuf::from("a.json"), a), (PathBuf::from("b.json"), b)];
        let err = compare_results(&inputs, &[], 2.0, &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no row of b matches a row of a"), "{err}");
    }

    #[test]
    fn load_names_the_file_and_the_problem() {
        let dir = std::env::temp_dir().join(format!("rigor-cmp-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        let err = load(&missing).unwrap_err().to_string();
        assert!(err.contains("missing.json: no such file"), "{err}");
        let not_json = dir.join("bad.json");
        std::fs::write(&not_json, "hello").unwrap();
        let err = load(&not_json).unwrap_err().to_string();
        assert!(err.contains("bad.json is not JSON"), "{err}");
        let other = dir.join("other.json");
        std::fs::write(&other, r#"{"schema":"something.else"}"#).unwrap();
        let err = load(&other).unwrap_err().to_string();
        assert!(
            err.contains("other.json has schema `something.else`"),
            "{err}"
        );
        let no_schema = dir.join("noschema.json");
        std::fs::write(&no_schema, r#"{"rows":[]}"#).unwrap();
        let err = load(&no_schema).unwrap_err().to_string();
        assert!(err.contains("no \"schema\" field"), "{err}");
        let broken = dir.join("broken.json");
        std::fs::write(&broken, r#"{"schema":"rigor.run.v1"}"#).unwrap();
        let err = load(&broken).unwrap_err().to_string();
        assert!(
            err.contains("does not match the `rigor.run.v1` schema"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn execute_exits_3_on_a_watched_regression() {
        let dir = std::env::temp_dir().join(format!("rigor-cmp-exec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.json");
        let b = dir.join("b.json");
        std::fs::write(
            &a,
            serde_json::to_string(&result(None, &noisy(1000.0, 10), "6.8")).unwrap(),
        )
        .unwrap();
        std::fs::write(
            &b,
            serde_json::to_string(&result(None, &noisy(900.0, 10), "6.8")).unwrap(),
        )
        .unwrap();
        let out = dir.join("out.json");
        let args = |extra: &[&str]| {
            let mut v = vec![
                "x".to_string(),
                a.display().to_string(),
                b.display().to_string(),
            ];
            v.extend(extra.iter().map(|s| s.to_string()));
            Cli::try_parse_from(v).unwrap().args
        };
        let out_s = out.display().to_string();
        assert_eq!(
            execute(&args(&["--fail-on-regression", "--json", &out_s])).unwrap(),
            Exit::Regression
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(json["schema"], "rigor.compare.v1");
        assert_eq!(execute(&args(&[])).unwrap(), Exit::Success);
        // Watching only memory (unchanged): no failure.
        assert_eq!(
            execute(&args(&[
                "--fail-on-regression",
                "--measurements",
                "app.rss"
            ]))
            .unwrap(),
            Exit::Success
        );
        let err = execute(&args(&["--measurements", "load.rpz"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`load.rpz` was not measured"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
