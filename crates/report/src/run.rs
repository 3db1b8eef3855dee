//! The report of one `rigor run`: a title and what the run was, warnings that say it cannot
//! answer its question, then per scenario its measurement tables and failed iterations,
//! the comparison of its variants, the other warnings and the machine.

use super::shown::Shown;
use super::{
    comparisons, environment, failures, headline, pivot_blocks, replaced, tables, timeline,
    warnings,
};
use super::{Block, Document, View};
use rigor_model::result::{Row, RunResult};

/// What a measurement cell holds, said once above the tables.
const CELL_LEGEND: &str =
    "cells: median ±CV% (mean, where it differs) of the kept iterations; excluded and failed \
     iterations are left out";

/// The same, for the terminal's short tables (their `iterations` column counts the excluded
/// and failed ones).
const SHORT_CELL_LEGEND: &str =
    "cells: median ±CV% (mean, where it differs) of the kept iterations";

/// The report of one `rigor run` as nobody asked otherwise ([`View::default`]), as tests
/// build it.
#[cfg(any(test, feature = "fixtures"))]
pub fn run_document(result: &RunResult) -> Document {
    run_document_with(result, &View::default())
}

/// The report of one `rigor run`: per scenario an application and a load table (a column per
/// row, each cell `median ±CV%`) with the rows' timelines, failed iterations, then the pivot,
/// comparisons, warnings and the environment.
pub fn run_document_with(result: &RunResult, view: &View) -> Document {
    let headline = headline::block(headline_lines(result, view), view.width);
    let mut blocks = vec![Block::Heading(1, title(result))];
    // The answer first, right under the title, and again as the last lines; pass or fail of
    // the limits right under it.
    blocks.extend(headline.clone());
    blocks.extend(super::limits::blocks(&result.limits));
    blocks.push(Block::Text(intro(result)));
    // Said before any table: no figure below can change it.
    blocks.extend(warnings::up_front_block(&result.warnings));
    blocks.extend(replaced::blocks(result));
    blocks.push(Block::Text(
        if view.terminal && !view.all_measurements {
            SHORT_CELL_LEGEND
        } else {
            CELL_LEGEND
        }
        .into(),
    ));
    let shown = Shown::of(result, view);
    blocks.extend(scenario_blocks(result, view, &shown));
    blocks.extend(pivot_blocks::blocks(result, view));
    if !result.comparisons.is_empty() {
        blocks.push(Block::Heading(2, "comparison".into()));
        blocks.extend(shown.comparison_blocks(&result.comparisons, &result.measurements));
    }
    blocks.extend(super::profiles::blocks(result));
    let mut floors = comparisons::noise_floor_blocks(&result.noise_floor);
    if view.terminal && !view.all_measurements {
        // Each line says `noise floor` itself: the short report needs no heading for them.
        floors.retain(|b| !matches!(b, Block::Heading(..)));
    }
    blocks.extend(floors);
    let across_rows = view.terminal && !view.all_measurements;
    blocks.extend(warnings::section(warnings::run_items_across(
        result,
        across_rows,
    )));
    blocks.extend(environment::blocks(
        &result.environment,
        &result.rigor_version,
        view,
    ));
    blocks.extend(folded_line(result, view, &shown));
    blocks.extend(headline);
    Document { blocks }
}

/// The headline's lines: one per compared pair with the key figures `view` names (the
/// primary's set by default). Lines to show under them (pass/fail of limits) go at the end.
fn headline_lines(result: &RunResult, view: &View) -> Vec<crate::Cell> {
    headline::lines(
        &result.comparisons,
        &result.measurements,
        &view.key,
        view.primary.as_deref(),
    )
}

/// `rigor · plaintext · profile local`
fn title(result: &RunResult) -> String {
    let mut title = format!("rigor · {}", result.scenario);
    if !result.profile.is_empty() {
        title.push_str(&format!(" · profile {}", result.profile));
    }
    title
}

/// The description, when the run started, a status other than complete, and the order seed.
fn intro(result: &RunResult) -> String {
    let mut intro = Vec::new();
    if let Some(d) = result.description.as_deref().filter(|d| !d.is_empty()) {
        intro.push(d.to_string());
    }
    intro.push(format!("started {}", result.started_at));
    if result.status.says_unfinished() {
        intro.push(format!("status: {}", result.status));
    }
    if let Some(seed) = result.seed {
        intro.push(format!("order seed {seed}"));
    }
    intro.join(" · ")
}

/// `t`, the short table of `scenario`, joined to the one before it: the corner says
/// `scenario` and each line names its scenario.
fn join_scenario(last: &mut crate::Table, t: crate::Table, scenario: &str) {
    let named = |label: &str, scenario: &str| {
        if label == scenario {
            label.to_string()
        } else {
            format!("{scenario} · {label}")
        }
    };
    if last.header[0] != "scenario" {
        let first = std::mem::replace(&mut last.header[0], "scenario".into());
        for line in &mut last.rows {
            line[0].text = named(&line[0].text, &first);
        }
    }
    for mut line in t.rows {
        line[0].text = named(&line[0].text, scenario);
        last.rows.push(line);
    }
}

/// Whether the timelines are drawn: in every file, on the terminal with `--verbose` (three
/// lines a row would outweigh the figures they explain).
fn shows_timelines(view: &View) -> bool {
    !view.terminal || view.verbose
}

/// The scenarios' rows, each scenario's in order, the scenarios in order of appearance.
fn rows_by_scenario(result: &RunResult) -> Vec<(String, Vec<&Row>)> {
    let mut scenarios: Vec<(String, Vec<&Row>)> = Vec::new();
    for r in &result.rows {
        let s = r.key_in(&result.scenario).scenario;
        match scenarios.iter_mut().find(|(name, _)| *name == s) {
            Some((_, rows)) => rows.push(r),
            None => scenarios.push((s, vec![r])),
        }
    }
    scenarios
}

/// The terminal's one line saying what it left out and how to see it: secondary measurement
/// lines, comparisons and notes (`--all-measurements`), timelines (`--verbose`); the files hold
/// them all. Nothing when nothing was left out.
fn folded_line(result: &RunResult, view: &View, shown: &Shown) -> Option<Block> {
    let lines: usize = rows_by_scenario(result)
        .iter()
        .map(|(_, rows)| tables::folded(rows, shown))
        .sum();
    let (comparisons, notes) = shown.folded_comparisons(&result.comparisons);
    let mut parts = Vec::new();
    for (n, what) in [
        (lines, "measurement line(s)"),
        (comparisons, "comparison(s) without a verdict of change"),
        (notes, "note(s)"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    if !parts.is_empty() {
        let last = parts.len() - 1;
        parts[last].push_str(" (--all-measurements)");
    }
    if !shows_timelines(view) && view.charts && has_timelines(result) {
        parts.push("the timelines (--verbose)".into());
    }
    if parts.is_empty() {
        return None;
    }
    Some(Block::Text(format!(
        "not shown: {}; the JSON, Markdown and HTML reports hold all",
        parts.join(", ")
    )))
}

/// Whether some kept iteration recorded a time series to draw.
fn has_timelines(result: &RunResult) -> bool {
    result
        .rows
        .iter()
        .flat_map(|r| r.kept_iterations())
        .any(|it| it.series.is_some())
}

/// Each scenario's tables and failures, under a heading of its own when there are several.
fn scenario_blocks(result: &RunResult, view: &View, shown: &Shown) -> Vec<Block> {
    let scenarios = rows_by_scenario(result);
    let mut blocks = Vec::new();
    for (scenario, rows) in &scenarios {
        if shown.folding() {
            // The short table names its scenario in its corner: no heading needed; scenarios
            // with the same figures share one table, a line per row.
            for block in tables::key_table(scenario, rows, &result.measurements, shown) {
                match (blocks.last_mut(), block) {
                    (Some(Block::Table(last)), Block::Table(t))
                        if last.header[1..] == t.header[1..] =>
                    {
                        join_scenario(last, t, scenario)
                    }
                    (_, block) => blocks.push(block),
                }
            }
        } else {
            if scenarios.len() > 1 {
                blocks.push(Block::Heading(2, format!("scenario {scenario}")));
            }
            blocks.extend(tables::blocks(rows, &result.measurements, shown));
        }
        if shows_timelines(view) {
            blocks.extend(timeline::blocks(rows, view));
        }
        blocks.extend(failures::blocks(rows));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sample_result;
    use crate::Style;
    use rigor_analysis::summary::summarize_row;
    use rigor_analysis::summary::tests::row_with;
    use rigor_model::result::{RunStatus, Warning, WarningKind};

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
    fn the_terminal_shows_a_line_per_row_of_its_key_figures_and_says_what_it_left_out() {
        let r = sample_result();
        let terminal = View::default().on_terminal();
        let doc = run_document_with(&r, &terminal);
        let short = doc.tables()[0];
        assert_eq!(short.header[0], "plaintext");
        assert!(short.header.contains(&"Requests/sec (1/s)".to_string()));
        assert_eq!(short.header.last().map(String::as_str), Some("iterations"));
        let labels: Vec<&str> = short.rows.iter().map(|l| l[0].text.as_str()).collect();
        assert_eq!(labels, ["connections=16", "connections=64"]);
        let rps = short
            .header
            .iter()
            .position(|h| h == "Requests/sec (1/s)")
            .unwrap();
        assert_eq!(short.rows[0][rps].text, "1,244,764 ±1.0%");
        assert_eq!(short.rows[1].last().unwrap().text, "3/4 (1 failed)");
        // No table with a line per measurement, and the closing line says where the rest is.
        assert!(!doc.tables().iter().any(|t| t.header[0] == "application"));
        let texts = doc.texts().join("\n");
        assert!(texts.contains("not shown: "), "{texts}");
        assert!(texts.contains("(--all-measurements)"), "{texts}");
        // Asked for everything: the tables of a line per measurement, nothing said left out.
        let all = run_document_with(
            &r,
            &View {
                all_measurements: true,
                ..terminal
            },
        );
        assert_eq!(all.tables()[0].header[0], "application");
        assert!(!all.texts().join("\n").contains("not shown: "));
        // Files hold everything.
        assert!(!run_document(&r).texts().join("\n").contains("not shown: "));
    }

    #[test]
    fn failures_comparisons_warnings_and_environment_are_listed() {
        let doc = run_document(&sample_result());
        let all: Vec<&str> = doc.list_items().iter().map(|c| c.text.as_str()).collect();
        assert!(all.contains(
            &"connections=64 · iteration 4: app exited with code 1 before ready (log: logs/4.log)"
        ));
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
        row.iterations[3].excluded = rigor_model::result::Exclusion::Order;
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
        r.rows[0].iterations[0].excluded = rigor_model::result::Exclusion::Order;
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
    fn the_document_is_plain_text_with_no_markup_of_any_format() {
        let doc = run_document(&sample_result());
        let texts = doc.texts();
        assert!(texts.len() > 40, "{texts:?}");
        for t in texts {
            for markup in ["`", "**", "|", "<b>", "\x1b"] {
                assert!(!t.contains(markup), "{markup} in {t:?}");
            }
        }
    }

    #[test]
    fn the_intro_names_an_unfinished_status_and_too_few_iterations_comes_first() {
        let mut r = sample_result();
        r.status = RunStatus::Interrupted;
        r.seed = Some(7);
        r.warnings.push(Warning::new(
            WarningKind::TooFewIterations,
            "2 iteration(s) per variant",
            "run at least -i 5",
        ));
        let doc = run_document(&r);
        let headline = Block::List(vec![crate::Cell::styled(
            "slow vs base (connections=16): Requests/sec -10.8% [-12.0%, -9.5%] regression",
            Style::Regression,
        )]);
        // The headline right under the title, and again as the last lines.
        assert_eq!(doc.blocks.last(), Some(&headline));
        assert_eq!(
            doc.blocks[..4],
            [
                Block::Heading(1, "rigor · plaintext · profile local".into()),
                headline.clone(),
                Block::Text(
                    "PR #42 · started 2026-11-30T02:00:00Z · status: interrupted · order seed 7"
                        .into()
                ),
                Block::List(vec![crate::Cell::styled(
                    "[too_few_iterations] 2 iteration(s) per variant — run at least -i 5",
                    Style::Warning
                )]),
            ]
        );
        let later = doc.list_items();
        assert_eq!(
            later
                .iter()
                .filter(|c| c.text.starts_with("[too_few_iterations]"))
                .count(),
            1
        );
        r.status = RunStatus::Complete;
        r.comparisons.clear();
        let Block::Text(intro) = &run_document(&r).blocks[1] else {
            panic!()
        };
        assert!(!intro.contains("status"), "{intro}");
    }
}
