//! Reports over a [`RunResult`]: one format-neutral [`Document`] (the tables crank users paste,
//! plus comparisons, warnings and the machine) rendered to the terminal, GitHub markdown, or CSV.
//!
//! Building the document once and rendering it twice keeps the terminal and `--markdown` outputs
//! identical in content; only the dress differs.

pub mod csv;
pub mod environment;
pub mod format;
pub mod html;
pub mod markdown;
pub mod terminal;

use crate::declarations::{self, Declarations};
use crate::measurements::{self, Group};
use crate::result::{Comparison, Iteration, Row, RunResult, Summary, Warning};
use std::collections::BTreeMap;

/// How a cell wants to be shown; terminals colour it, markdown emphasises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Most cells: figures and labels.
    Plain,
    /// A regression verdict or a failed iteration (red).
    Regression,
    /// An improvement verdict (green).
    Improvement,
    /// An inconclusive verdict or a note asking for more iterations (yellow).
    Inconclusive,
    /// A warning about the run (yellow).
    Warning,
}

impl Style {
    /// The style of a verdict string, so every renderer colours verdicts alike.
    pub fn of_verdict(verdict: &str) -> Style {
        match verdict {
            "regression" => Style::Regression,
            "improvement" => Style::Improvement,
            "inconclusive" => Style::Inconclusive,
            _ => Style::Plain,
        }
    }
}

/// Text plus how to show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// What is shown, already formatted.
    pub text: String,
    /// How it is shown.
    pub style: Style,
}

impl Cell {
    /// An unstyled cell (most cells are).
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            style: Style::Plain,
        }
    }

    /// A styled cell.
    pub fn styled(text: impl Into<String>, style: Style) -> Cell {
        Cell {
            text: text.into(),
            style,
        }
    }
}

/// A table whose first column holds labels and the others values.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column titles; the first names the table (`application`, `load`, `measurement`…).
    pub header: Vec<String>,
    /// One line per measurement (or field), as many cells as the header.
    pub rows: Vec<Vec<Cell>>,
    /// Values are figures (right-aligned, so digits line up) rather than text (left-aligned).
    pub numeric: bool,
}

/// One piece of a report, in reading order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A section title; level 1 is the document, 2 a scenario or section, 3 a sub-table.
    Heading(u8, String),
    /// A sentence or two of prose.
    Text(String),
    /// A table (measurements, a comparison, the environment).
    Table(Table),
    /// Bulleted items (failures, warnings, notes).
    List(Vec<Cell>),
}

/// A whole report, independent of where it is shown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// The blocks in reading order.
    pub blocks: Vec<Block>,
}

impl Document {
    /// Every table in the document, so tests can check structure rather than rendered text.
    #[cfg(test)]
    pub fn tables(&self) -> Vec<&Table> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect()
    }
}

/// The report of one `rigor run`: per scenario an application and a load table (a column per row,
/// each cell `median ±CV%`), failed iterations, then comparisons, warnings and the environment.
pub fn run_document(result: &RunResult) -> Document {
    let mut blocks = Vec::new();
    let mut title = format!("rigor · {}", result.scenario);
    if !result.profile.is_empty() {
        title.push_str(&format!(" · profile {}", result.profile));
    }
    blocks.push(Block::Heading(1, title));
    let mut intro = Vec::new();
    if let Some(d) = result.description.as_deref().filter(|d| !d.is_empty()) {
        intro.push(d.to_string());
    }
    intro.push(format!("started {}", result.started_at));
    if !result.status.is_empty() && result.status != "complete" {
        intro.push(format!("status: {}", result.status));
    }
    if let Some(seed) = result.seed {
        intro.push(format!("order seed {seed}"));
    }
    blocks.push(Block::Text(intro.join(" · ")));
    // Said before any table: no figure below can change it.
    let up_front: Vec<Cell> = result
        .warnings
        .iter()
        .filter(|w| UP_FRONT.contains(&w.kind.as_str()))
        .map(|w| Cell::styled(warning_text(w), Style::Warning))
        .collect();
    if !up_front.is_empty() {
        blocks.push(Block::List(up_front));
    }
    blocks.push(Block::Text(CELL_LEGEND.into()));

    let decl = &result.measurements;
    let scenarios = scenarios_in_order(result);
    for scenario in &scenarios {
        let rows: Vec<&Row> = result
            .rows
            .iter()
            .filter(|r| scenario_of(result, r) == scenario.as_str())
            .collect();
        if scenarios.len() > 1 {
            blocks.push(Block::Heading(2, format!("scenario {scenario}")));
        }
        blocks.extend(scenario_blocks(&rows, decl));
    }
    if !result.comparisons.is_empty() {
        blocks.push(Block::Heading(2, "comparison".into()));
        blocks.extend(comparison_blocks(&result.comparisons, decl));
    }
    let warnings = warning_items(result);
    if !warnings.is_empty() {
        blocks.push(Block::Heading(2, "warnings".into()));
        blocks.push(Block::List(warnings));
    }
    if let Some(env) = environment::table(&result.environment, &result.rigor_version) {
        blocks.push(Block::Table(env));
    }
    Document { blocks }
}

/// Warning kinds shown before the tables instead of after them: they say the run cannot answer
/// its question, whatever the figures are.
const UP_FRONT: &[&str] = &["too_few_iterations"];

/// What a measurement cell holds, said once above the tables.
const CELL_LEGEND: &str =
    "cells: median ±CV% (mean, where it differs) of the kept iterations; excluded and failed \
     iterations are left out";

/// Scenario names in the order their rows appear.
fn scenarios_in_order(result: &RunResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &result.rows {
        let s = scenario_of(result, r).to_string();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// A row's scenario; older or hand-written results may leave it empty.
fn scenario_of<'a>(result: &'a RunResult, row: &'a Row) -> &'a str {
    if row.scenario.is_empty() {
        &result.scenario
    } else {
        &row.scenario
    }
}

/// The column header of a row: its matrix values and variant, or its scenario when it has neither.
fn column_label(row: &Row) -> String {
    row.label()
}

/// The measurement tables and failure list of one scenario's rows.
fn scenario_blocks(rows: &[&Row], decl: &Declarations) -> Vec<Block> {
    let mut blocks = Vec::new();
    let ids = measurements::order(
        rows.iter()
            .flat_map(|r| r.iterations.iter())
            .filter(|it| !it.excluded && it.error.is_none())
            .flat_map(|it| it.measurements.keys().cloned())
            .chain(rows.iter().flat_map(|r| r.summary.keys().cloned())),
    );
    let group_of = |id: &str| measurements::info(id).map(|m| m.group);
    let app: Vec<&String> = ids
        .iter()
        .filter(|id| group_of(id) == Some(Group::Application))
        .collect();
    let load: Vec<&String> = ids
        .iter()
        .filter(|id| group_of(id) == Some(Group::Load))
        .collect();
    let other: Vec<&String> = ids.iter().filter(|id| group_of(id).is_none()).collect();

    let iterations_line = || {
        let mut line = vec![Cell::plain("Iterations (used/total)")];
        line.extend(rows.iter().map(|r| Cell::plain(iterations_cell(r))));
        line
    };
    let mut iterations_shown = false;
    for (title, ids) in [
        ("application", &app),
        ("load", &load),
        ("measurements", &other),
    ] {
        if ids.is_empty() {
            continue;
        }
        let mut header = vec![title.to_string()];
        header.extend(rows.iter().map(|r| column_label(r)));
        let mut lines: Vec<Vec<Cell>> = ids
            .iter()
            .map(|id| {
                let mut line = vec![Cell::plain(declarations::label(id, decl))];
                line.extend(rows.iter().map(|r| Cell::plain(measurement_cell(r, id))));
                line
            })
            .collect();
        if title == "load" {
            let mut line = vec![Cell::plain("Requests outside window")];
            line.extend(rows.iter().map(|r| Cell::plain(outside_window_cell(r))));
            lines.push(line);
        }
        if !iterations_shown {
            lines.push(iterations_line());
            iterations_shown = true;
        }
        blocks.push(Block::Table(Table {
            header,
            rows: lines,
            numeric: true,
        }));
    }
    if !iterations_shown && !rows.is_empty() {
        // Every iteration failed before measuring anything: still say how many ran.
        let mut header = vec!["iterations".to_string()];
        header.extend(rows.iter().map(|r| column_label(r)));
        blocks.push(Block::Table(Table {
            header,
            rows: vec![iterations_line()],
            numeric: true,
        }));
    }
    let failures: Vec<Cell> =
        rows.iter()
            .flat_map(|r| {
                let build = r.build_error.as_ref().map(|e| {
                    Cell::styled(format!("{} · build: {e}", r.label()), Style::Regression)
                });
                build.into_iter().chain(
                    r.iterations
                        .iter()
                        .filter(|it| it.error.is_some())
                        .map(move |it| Cell::styled(failure_text(r, it), Style::Regression)),
                )
            })
            .collect();
    if !failures.is_empty() {
        blocks.push(Block::Heading(3, "failed iterations".into()));
        blocks.push(Block::List(failures));
    }
    blocks
}

fn failure_text(row: &Row, it: &Iteration) -> String {
    let mut s = format!(
        "{} · iteration {}: {}",
        row.label(),
        it.number(),
        it.error.as_deref().unwrap_or("")
    );
    if let Some(log) = &it.log {
        s.push_str(&format!(" (log: {log})"));
    }
    s
}

/// A row's summary of `id`, from the stored summary or, when the writer did not fill it, computed
/// on the spot from the included, successful iterations.
pub fn summary_of(row: &Row, id: &str) -> Option<Summary> {
    row.summary
        .get(id)
        .cloned()
        .or_else(|| rigor_stats::summarize(&row.values(id)))
}

/// `median ±CV% (mean)`, with `(n=k)` when fewer iterations than the row's used ones carry the
/// figure. The mean of the same kept iterations stands beside the median for readers who compare
/// means (crank's tables do), unless it reads the same.
fn measurement_cell(row: &Row, id: &str) -> String {
    let Some(s) = summary_of(row, id) else {
        return "—".to_string();
    };
    let mut text = format::number(s.median);
    if s.n >= 2 {
        let cv = if s.mean != 0.0 {
            s.stdev / s.mean.abs() * 100.0
        } else {
            0.0
        };
        text.push(' ');
        text.push_str(&format::cv_pct(cv));
        // Where the mean reads the same as the median it would only repeat it.
        let mean = format::number(s.mean);
        if mean != format::number(s.median) {
            text.push_str(&format!(" ({mean})"));
        }
    }
    let used = used_iterations(row);
    if s.n < used {
        text.push_str(&format!(" (n={})", s.n));
    }
    text
}

fn used_iterations(row: &Row) -> usize {
    row.iterations
        .iter()
        .filter(|it| !it.excluded && it.error.is_none())
        .count()
}

/// `3/5 (1 excluded, 1 failed)`: how many iterations the medians stand on.
fn iterations_cell(row: &Row) -> String {
    let total = row.iterations.len();
    let failed = row
        .iterations
        .iter()
        .filter(|it| it.error.is_some())
        .count();
    let excluded = row
        .iterations
        .iter()
        .filter(|it| it.excluded && it.error.is_none())
        .count();
    let mut text = format!("{}/{}", used_iterations(row), total);
    let mut why = Vec::new();
    if excluded > 0 {
        why.push(format!("{excluded} excluded"));
    }
    if failed > 0 {
        why.push(format!("{failed} failed"));
    }
    if !why.is_empty() {
        text.push_str(&format!(" ({})", why.join(", ")));
    }
    text
}

/// Median over all iterations of what the app received outside the measured window (readiness
/// probes, warmup), so pre-warming is visible next to the figures it could flatter.
fn outside_window_cell(row: &Row) -> String {
    if row.iterations.is_empty() {
        return "—".to_string();
    }
    let median = |f: &dyn Fn(&Iteration) -> u64| {
        let v: Vec<f64> = row.iterations.iter().map(|it| f(it) as f64).collect();
        rigor_stats::summarize(&v).map(|s| s.median).unwrap_or(0.0)
    };
    let requests = median(&|it| it.outside_window.requests);
    let bytes = median(&|it| it.outside_window.bytes);
    format!("{} ({})", format::number(requests), format::bytes(bytes))
}

/// What the comparison columns are, said once under the comparison heading.
const COMPARISON_LEGEND: &str = "Δ median: candidate median vs baseline median · 95% CI: \
     Hodges–Lehmann interval of the ratio (the typical pairwise change) · p: Mann–Whitney \
     (exact for small samples) · no verdict where the interval misses the medians' change";

/// Comparison tables, one per scenario and matrix row (in order of appearance): measurement, the
/// baseline's median, then per candidate its median, the change of the medians, the 95% CI,
/// p-value and verdict (before/after columns, plus the noise), followed by the
/// notes explaining `inconclusive` cells. A measurement with no known direction shows
/// `no verdict`.
pub fn comparison_blocks(cmps: &[Comparison], decl: &Declarations) -> Vec<Block> {
    type Group<'a> = (&'a str, &'a BTreeMap<String, String>);
    let mut groups: Vec<Group> = Vec::new();
    for c in cmps {
        let key = (c.scenario.as_str(), &c.row);
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    let several_scenarios = groups.iter().any(|g| g.0 != groups[0].0);
    let mut blocks = vec![Block::Text(COMPARISON_LEGEND.into())];
    for (scenario, row) in groups {
        let members: Vec<&Comparison> = cmps
            .iter()
            .filter(|c| c.scenario == scenario && &c.row == row)
            .collect();
        let heading = comparison_row_label(if several_scenarios { scenario } else { "" }, row);
        if !heading.is_empty() {
            blocks.push(Block::Heading(3, heading));
        }
        let baseline = members[0].baseline.clone();
        let mut candidates: Vec<&str> = Vec::new();
        let mut ids: Vec<&str> = Vec::new();
        for c in &members {
            if !candidates.contains(&c.candidate.as_str()) {
                candidates.push(&c.candidate);
            }
            if !ids.contains(&c.measurement.as_str()) {
                ids.push(&c.measurement);
            }
        }
        let mut header = vec!["measurement".to_string(), baseline];
        for cand in &candidates {
            header.extend([
                cand.to_string(),
                "Δ median".into(),
                "95% CI".into(),
                "p".into(),
                "verdict".into(),
            ]);
        }
        let mut lines = Vec::new();
        for id in &ids {
            let find = |cand: &str| {
                members
                    .iter()
                    .find(|c| c.measurement == *id && c.candidate == cand)
                    .copied()
            };
            let base_median = candidates
                .iter()
                .filter_map(|cand| find(cand))
                .find_map(|c| c.baseline_median);
            let mut line = vec![
                Cell::plain(declarations::label(id, decl)),
                Cell::plain(opt(base_median, format::number)),
            ];
            for cand in &candidates {
                match find(cand) {
                    Some(c) => line.extend([
                        Cell::plain(opt(c.candidate_median, format::number)),
                        Cell::plain(opt(c.change_pct, format::signed_pct)),
                        Cell::plain(match (c.ci_low_pct, c.ci_high_pct) {
                            (Some(l), Some(h)) => format::ci(l, h),
                            _ => "—".into(),
                        }),
                        Cell::plain(opt(c.p_value, format::p_value)),
                        verdict_cell(c),
                    ]),
                    None => line.extend((0..5).map(|_| Cell::plain("—"))),
                }
            }
            lines.push(line);
        }
        blocks.push(Block::Table(Table {
            header,
            rows: lines,
            numeric: true,
        }));
        let notes = comparison_notes(&members, candidates.len() > 1, decl);
        if !notes.is_empty() {
            blocks.push(Block::List(notes));
        }
    }
    blocks
}

/// The verdict as a table shows it; an id whose direction nobody declared has none to show.
fn verdict_cell(c: &Comparison) -> Cell {
    if c.direction.is_none() && c.verdict == "inconclusive" {
        return Cell::styled("no verdict", Style::Inconclusive);
    }
    Cell::styled(c.verdict.clone(), Style::of_verdict(&c.verdict))
}

/// `plaintext · connections=64 · variant fast`: a comparison's scenario and row map for people,
/// the scenario first and the variant last. The scenario comes from `scenario` when given, else
/// from the map's `scenario` key (which `rigor compare` writes).
pub fn comparison_row_label(scenario: &str, row: &BTreeMap<String, String>) -> String {
    let mut parts = Vec::new();
    if !scenario.is_empty() {
        parts.push(scenario.to_string());
    } else if let Some(s) = row.get("scenario") {
        parts.push(s.clone());
    }
    let vars: Vec<String> = row
        .iter()
        .filter(|(k, _)| *k != "scenario" && *k != "variant")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !vars.is_empty() {
        parts.push(vars.join(" "));
    }
    if let Some(v) = row.get("variant") {
        parts.push(format!("variant {v}"));
    }
    parts.join(" · ")
}

/// Notes grouped so one sentence covers every measurement it applies to, instead of repeating
/// "n=2 vs 2 can never reach…" once per line.
fn comparison_notes(
    members: &[&Comparison],
    name_candidate: bool,
    decl: &Declarations,
) -> Vec<Cell> {
    let mut notes: Vec<(String, String, Vec<String>)> = Vec::new();
    for c in members {
        let Some(note) = c.note.as_deref() else {
            continue;
        };
        let label = declarations::label(&c.measurement, decl);
        match notes
            .iter_mut()
            .find(|(cand, n, _)| *cand == c.candidate && n == note)
        {
            Some((_, _, labels)) => labels.push(label),
            None => notes.push((c.candidate.clone(), note.to_string(), vec![label])),
        }
    }
    notes
        .into_iter()
        .map(|(cand, note, labels)| {
            let who = if name_candidate {
                format!("{cand} · ")
            } else {
                String::new()
            };
            Cell::styled(
                format!("{who}{}: {note}", labels.join(", ")),
                Style::Inconclusive,
            )
        })
        .collect()
}

fn opt(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".into())
}

/// `[kind] message — advice`
pub fn warning_text(w: &Warning) -> String {
    if w.advice.is_empty() {
        format!("[{}] {}", w.kind, w.message)
    } else {
        format!("[{}] {} — {}", w.kind, w.message, w.advice)
    }
}

/// Run, row and iteration warnings, each once: an iteration warning repeated in every iteration of
/// a row is listed once with the iterations it came from.
fn warning_items(result: &RunResult) -> Vec<Cell> {
    let mut items: Vec<Cell> = result
        .warnings
        .iter()
        .filter(|w| !UP_FRONT.contains(&w.kind.as_str()))
        .map(|w| Cell::styled(warning_text(w), Style::Warning))
        .collect();
    for row in &result.rows {
        let label = row.label();
        for w in &row.warnings {
            items.push(Cell::styled(
                format!("{label}: {}", warning_text(w)),
                Style::Warning,
            ));
        }
        let mut grouped: Vec<(&Warning, Vec<usize>)> = Vec::new();
        for it in &row.iterations {
            for w in &it.warnings {
                match grouped
                    .iter_mut()
                    .find(|(g, _)| g.kind == w.kind && g.message == w.message)
                {
                    Some((_, idx)) => idx.push(it.number()),
                    None => grouped.push((w, vec![it.number()])),
                }
            }
        }
        for (w, idx) in grouped {
            let which = if idx.len() == 1 {
                format!("iteration {}", idx[0])
            } else {
                format!(
                    "iterations {}",
                    idx.iter()
                        .map(|i| i.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            items.push(Cell::styled(
                format!("{label} · {which}: {}", warning_text(w)),
                Style::Warning,
            ));
        }
    }
    items
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::result::{Comparison, RunResult, Warning, SCHEMA};
    use crate::summarize::summarize_row;
    use crate::summarize::tests::{iteration, row_with};

    /// A two-row matrix result with application and load figures, a failed iteration, warnings at
    /// every level, a comparison and an environment: enough to exercise every block.
    pub(crate) fn sample_result() -> RunResult {
        let mut rows = Vec::new();
        for (conns, rps) in [("16", 1_232_440.0), ("64", 1_265_521.0)] {
            let mut row = row_with(&[("connections", conns)], None, "load.rps", &[0.0; 3]);
            for (i, it) in row.iterations.iter_mut().enumerate() {
                let f = 1.0 + 0.01 * i as f64;
                it.measurements.insert("load.rps".into(), rps * f);
                it.measurements.insert("app.rss".into(), 61.2 * f);
                it.measurements.insert("load.latency.p99".into(), 0.57 * f);
                it.measurements.insert("load.requests".into(), 12_000_000.0);
            }
            row.iterations[0].warnings.push(Warning::new(
                "client_saturated",
                "load client at 98% CPU",
                "use more cores",
            ));
            row.iterations[1].warnings.push(Warning::new(
                "client_saturated",
                "load client at 98% CPU",
                "use more cores",
            ));
            summarize_row(&mut row);
            rows.push(row);
        }
        let mut failed = iteration(3, &[("app.start_time", 12.0)]);
        failed.error = Some("app exited with code 1 before ready".into());
        failed.log = Some("logs/4.log".into());
        rows[1].iterations.push(failed);
        rows[1].warnings.push(Warning::new(
            "page_cache",
            "cgroup memory is mostly page cache",
            "",
        ));
        RunResult {
            schema: SCHEMA.into(),
            rigor_version: "0.1.0".into(),
            scenario: "plaintext".into(),
            profile: "local".into(),
            description: Some("PR #42".into()),
            started_at: "2026-11-30T02:00:00Z".into(),
            finished_at: None,
            status: "complete".into(),
            seed: None,
            environment: serde_json::json!({
                "os": "Ubuntu 24.04", "kernel": "6.8.0", "cpu_model": "Xeon", "logical_cores": 2,
                "governor": "performance", "turbo": false, "hostname": "bench1",
            }),
            warnings: vec![Warning::new(
                "debug_build",
                "artifact looks like a debug build",
                "build with --release",
            )],
            builds: vec![],
            rows,
            measurements: Default::default(),
            comparisons: vec![Comparison {
                scenario: "plaintext".into(),
                shift_pct: Some(-10.8),
                direction: Some("higher".into()),
                row: [("connections".to_string(), "16".to_string())].into(),
                measurement: "load.rps".into(),
                baseline: "base".into(),
                candidate: "slow".into(),
                baseline_median: Some(1_232_440.0),
                candidate_median: Some(1_100_000.0),
                change_pct: Some(-10.75),
                ci_low_pct: Some(-12.0),
                ci_high_pct: Some(-9.5),
                p_value: Some(0.0002),
                verdict: "regression".into(),
                note: None,
            }],
        }
    }

    #[test]
    fn crank_style_tables_with_a_column_per_row() {
        let doc = run_document(&sample_result());
        let tables = doc.tables();
        let app = tables[0];
        assert_eq!(
            app.header,
            vec!["application", "connections=16", "connections=64"]
        );
        assert_eq!(app.rows[0][0].text, "Max Working Set (MiB)");
        // median ±CV (mean): numpy mean of 61.2 * [1, 1.01, 1.02] = 61.812
        assert_eq!(app.rows[0][1].text, "61.81 ±1.0%");
        // Only the failed iteration measured its start time: no line for it.
        assert!(!app.rows.iter().any(|r| r[0].text == "Start Time (ms)"));
        let load = tables[1];
        assert_eq!(load.header[0], "load");
        let rps = load
            .rows
            .iter()
            .find(|r| r[0].text == "Requests/sec (1/s)")
            .unwrap();
        assert_eq!(rps[1].text, "1,244,764 ±1.0%");
        let outside = load
            .rows
            .iter()
            .find(|r| r[0].text == "Requests outside window")
            .unwrap();
        assert_eq!(outside[1].text, "2 (180 B)");
        let its = app
            .rows
            .iter()
            .find(|r| r[0].text.starts_with("Iterations"))
            .unwrap();
        assert_eq!(its[1].text, "3/3");
        assert_eq!(its[2].text, "3/4 (1 failed)");
    }

    #[test]
    fn failures_comparisons_warnings_and_environment_are_listed() {
        let doc = run_document(&sample_result());
        let lists: Vec<&Vec<Cell>> = doc
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::List(l) => Some(l),
                _ => None,
            })
            .collect();
        let all: Vec<&str> = lists
            .iter()
            .flat_map(|l| l.iter().map(|c| c.text.as_str()))
            .collect();
        assert!(all
            .iter()
            .any(|t| t
                .contains("iteration 4: app exited with code 1 before ready (log: logs/4.log)")));
        assert!(
            all.contains(&"[debug_build] artifact looks like a debug build — build with --release")
        );
        assert!(all.contains(&"connections=64: [page_cache] cgroup memory is mostly page cache"));
        assert!(all.contains(
            &"connections=16 · iterations 1, 2: [client_saturated] load client at 98% CPU — use more cores"
        ));
        let cmp = doc
            .tables()
            .into_iter()
            .find(|t| t.header[0] == "measurement")
            .unwrap();
        assert_eq!(
            cmp.header,
            vec![
                "measurement",
                "base",
                "slow",
                "Δ median",
                "95% CI",
                "p",
                "verdict"
            ]
        );
        let texts: Vec<&str> = cmp.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "Requests/sec (1/s)",
                "1,232,440",
                "1,100,000",
                "-10.8%",
                "[-12.0%, -9.5%]",
                "<0.001",
                "regression"
            ]
        );
        assert_eq!(cmp.rows[0][6].style, Style::Regression);
        let env = doc
            .tables()
            .into_iter()
            .find(|t| t.header[0] == "environment")
            .unwrap();
        assert!(env
            .rows
            .iter()
            .any(|r| r[0].text == "Kernel" && r[1].text == "6.8.0"));
    }

    #[test]
    fn single_row_gets_one_value_column_and_variants_their_names() {
        let mut r = sample_result();
        r.rows.truncate(1);
        r.rows[0].variables.clear();
        let doc = run_document(&r);
        assert_eq!(doc.tables()[0].header, vec!["application", "plaintext"]);
        r.rows[0].variant = Some("slow".into());
        r.rows[0]
            .variables
            .insert("connections".into(), "64".into());
        let doc = run_document(&r);
        assert_eq!(
            doc.tables()[0].header,
            vec!["application", "connections=64 slow"]
        );
    }

    #[test]
    fn the_mean_of_the_kept_iterations_stands_beside_the_median() {
        // One slow iteration pulls the mean, not the median: numpy median([100, 101, 130]) = 101,
        // mean = 110.33333333333333, 100*std(ddof=1)/mean = 15.443357001972274; the excluded
        // 500 counts in neither.
        let mut r = sample_result();
        r.rows.truncate(1);
        let mut row = row_with(&[], None, "load.rps", &[100.0, 101.0, 130.0, 500.0]);
        row.iterations[3].excluded = true;
        summarize_row(&mut row);
        r.rows[0] = row;
        let doc = run_document(&r);
        let rps = doc.tables()[0]
            .rows
            .iter()
            .find(|l| l[0].text == "Requests/sec (1/s)")
            .unwrap();
        assert_eq!(rps[1].text, "101 ±15.4% (110.3)");
    }

    #[test]
    fn excluded_iterations_are_counted() {
        let mut r = sample_result();
        r.rows[0].iterations[0].excluded = true;
        let doc = run_document(&r);
        let app = doc.tables()[0];
        let its = app
            .rows
            .iter()
            .find(|l| l[0].text.starts_with("Iterations"))
            .unwrap();
        assert_eq!(its[1].text, "2/3 (1 excluded)");
    }

    #[test]
    fn inconclusive_notes_are_grouped() {
        let mk = |id: &str| Comparison {
            scenario: "plaintext".into(),
            shift_pct: None,
            direction: Some("lower".into()),
            row: BTreeMap::new(),
            measurement: id.into(),
            baseline: "a".into(),
            candidate: "b".into(),
            baseline_median: Some(1.0),
            candidate_median: Some(1.0),
            change_pct: Some(0.0),
            ci_low_pct: None,
            ci_high_pct: None,
            p_value: None,
            verdict: "inconclusive".into(),
            note: Some(
                "n=2 vs 2 can never reach 95% confidence: run more iterations (-i 5)".into(),
            ),
        };
        let blocks = comparison_blocks(&[mk("load.rps"), mk("app.rss")], &Declarations::new());
        let Block::List(notes) = &blocks[2] else {
            panic!("{blocks:?}")
        };
        assert_eq!(notes.len(), 1);
        assert_eq!(
            notes[0].text,
            "Requests/sec (1/s), Max Working Set (MiB): n=2 vs 2 can never reach 95% confidence: run more iterations (-i 5)"
        );
    }
}
