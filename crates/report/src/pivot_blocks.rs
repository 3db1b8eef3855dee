//! The pivot tables as report blocks: under a heading naming the measurement and the swept
//! variable, one table per combination of the other variables, a line per swept value, a column
//! per variant (the baseline first), each candidate followed by its change and verdict, and a
//! trend line of sparklines when charts are on.

use super::pivot::{self, Pivot, PivotCell};
use super::{format, sparkline, Block, Cell, Style, Table, View};
use rigor_model::result::RunResult;

/// The pivot of `view.pivot` (else the default one) for each scenario of `result`; nothing when
/// no measurement is chosen. A chosen measurement that nothing sweeps says so in one line.
pub fn blocks(result: &RunResult, view: &View) -> Vec<Block> {
    let Some(id) = view
        .pivot
        .clone()
        .or_else(|| pivot::default_measurement(result))
    else {
        return Vec::new();
    };
    let scenarios = scenarios(result);
    let mut tables: Vec<(String, Pivot)> = Vec::new();
    for scenario in &scenarios {
        let mut part = result.clone();
        part.rows
            .retain(|r| r.key_in(&result.scenario).scenario == *scenario);
        part.comparisons
            .retain(|c| c.scenario.is_empty() || c.scenario == *scenario);
        let built = pivot::build(&part, &id, view.pivot_by.as_deref());
        tables.extend(built.into_iter().map(|t| (scenario.clone(), t)));
    }
    let Some((_, first)) = tables.first() else {
        return nothing_swept(result, &id, view);
    };
    let mut blocks = vec![
        Block::Heading(2, format!("{} by {}", first.label, first.swept)),
        Block::Text(legend(first, view.charts)),
    ];
    let joined = view.terminal && !view.all_measurements;
    for (i, (scenario, t)) in tables.iter().enumerate() {
        if joined {
            // The terminal's short report: a scenario's tables of the same columns are one
            // table, each combination of the other variables a line of its own above its part.
            let fixed = t.fixed.iter().map(|(k, v)| format!("{k}={v}"));
            let fixed = fixed.collect::<Vec<_>>().join(" ");
            let mut part = table(t, view.charts);
            if !fixed.is_empty() {
                // Under the line naming their combination.
                for line in &mut part.rows {
                    line[0].text = format!("  {}", line[0].text);
                }
            }
            let label = |width: usize| {
                let mut line = vec![Cell::plain(fixed.clone())];
                line.extend((1..width).map(|_| Cell::plain("")));
                line
            };
            let same_scenario = i > 0 && tables[i - 1].0 == *scenario;
            if let (true, Some(Block::Table(last))) = (same_scenario, blocks.last_mut()) {
                if last.header == part.header && !fixed.is_empty() {
                    last.rows.push(label(part.header.len()));
                    last.rows.extend(part.rows);
                    continue;
                }
            }
            if tables.iter().any(|(s, _)| s != scenario) {
                blocks.push(Block::Heading(3, format!("scenario {scenario}")));
            }
            if !fixed.is_empty() {
                part.rows.insert(0, label(part.header.len()));
            }
            blocks.push(Block::Table(part));
            continue;
        }
        let mut heading: Vec<String> = Vec::new();
        if scenarios.len() > 1 {
            heading.push(format!("scenario {scenario}"));
        }
        heading.extend(t.fixed.iter().map(|(k, v)| format!("{k}={v}")));
        if !heading.is_empty() {
            blocks.push(Block::Heading(3, heading.join(" · ")));
        }
        blocks.push(Block::Table(table(t, view.charts)));
    }
    blocks
}

/// The scenarios of the rows, in order of appearance.
fn scenarios(result: &RunResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &result.rows {
        let s = r.key_in(&result.scenario).scenario;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Only for a pivot asked for by name: why there is no table.
fn nothing_swept(result: &RunResult, id: &str, view: &View) -> Vec<Block> {
    if view.pivot.is_none() || !result.rows.iter().any(|r| r.summary.contains_key(id)) {
        return Vec::new();
    }
    let why = match &view.pivot_by {
        Some(by) => format!("no row with {id} has the variable {by}"),
        None => format!("no variable takes two values in the rows with {id}"),
    };
    vec![Block::Text(format!("no pivot of {id}: {why}"))]
}

/// What a pivot cell holds, said once above the tables.
fn legend(t: &Pivot, charts: bool) -> String {
    let mut parts = vec!["cells: median ±CV% of each row's kept iterations".to_string()];
    if let (Some(Some(base)), true) = (t.columns.first(), t.columns.len() > 1) {
        parts.push(format!(
            "Δ: change of the median against {base}, with the comparison's verdict"
        ));
    }
    if charts && t.rows.len() > 1 {
        parts.push(format!(
            "trend: the medians from the first {} to the last, on one scale per table",
            t.swept
        ));
    }
    parts.join(" · ")
}

/// One pivot as a table: `[swept, base, cand, Δ cand, …]`, then the trend line.
pub fn table(t: &Pivot, charts: bool) -> Table {
    let several = t.columns.len() > 2;
    let mut header = vec![t.swept.clone()];
    for (i, c) in t.columns.iter().enumerate() {
        let name = c.clone().unwrap_or_else(|| "median".into());
        if i > 0 {
            header.push(name.clone());
            header.push(if several {
                format!("Δ {name}")
            } else {
                "Δ".into()
            });
        } else {
            header.push(name);
        }
    }
    let mut rows: Vec<Vec<Cell>> = t
        .rows
        .iter()
        .map(|r| {
            let mut line = vec![Cell::plain(r.value.clone())];
            for (i, cell) in r.cells.iter().enumerate() {
                line.push(Cell::plain(cell.as_ref().map_or("—".into(), figure)));
                if i > 0 {
                    line.push(change(cell.as_ref()));
                }
            }
            line
        })
        .collect();
    if charts && t.rows.len() > 1 {
        rows.push(trend(t));
    }
    Table {
        header,
        rows,
        numeric: true,
        droppable: Vec::new(),
    }
}

/// `5,000 ±1.0%`: the median and its noise, as the measurement tables show it.
fn figure(c: &PivotCell) -> String {
    let mut text = format::number(c.median);
    if c.n >= 2 {
        text.push(' ');
        text.push_str(&format::cv_pct(c.cv * 100.0));
    }
    text
}

/// `-20.0% regression`, coloured by the verdict; just the change where no comparison judged it.
fn change(c: Option<&PivotCell>) -> Cell {
    let Some(c) = c else {
        return Cell::plain("—");
    };
    let pct = c.change_pct.map_or("—".into(), format::signed_pct);
    match c.verdict {
        Some(v) => Cell::styled(format!("{pct} {}", v.as_str()), Style::of_verdict(v)),
        None => Cell::plain(pct),
    }
}

/// Each column's medians from the first swept value to the last, on the table's one scale so
/// a slower variant draws lower; the change columns stay empty.
fn trend(t: &Pivot) -> Vec<Cell> {
    let column = |i: usize| -> Vec<Option<f64>> {
        t.rows
            .iter()
            .map(|r| r.cells[i].as_ref().map(|c| c.median))
            .collect()
    };
    let all: Vec<Option<f64>> = (0..t.columns.len()).flat_map(column).collect();
    let (lo, hi) = sparkline::range(&all).unwrap_or((0.0, 0.0));
    let mut line = vec![Cell::plain("trend")];
    for i in 0..t.columns.len() {
        line.push(Cell::plain(sparkline::scaled(&column(i), lo, hi)));
        if i > 0 {
            line.push(Cell::plain(""));
        }
    }
    line
}

/// What is wrong with `--pivot` and `--pivot-by` for these rows: a measurement no row has, a
/// variable none of its rows has, or `--pivot-by` alone where no pivot is shown by default.
pub fn problem(result: &RunResult, view: &View) -> Option<String> {
    match (view.pivot.as_deref(), view.pivot_by.as_deref()) {
        (None, None) => None,
        (Some(id), by) => missing(result, id).or_else(|| missing_variable(result, id, by?)),
        (None, Some(by)) => match pivot::default_measurement(result) {
            Some(id) => missing_variable(result, &id, by),
            None => Some(format!(
                "--pivot-by {by}: no pivot is shown by default here; name its measurement with \
                 --pivot"
            )),
        },
    }
}

/// `--pivot ID` names a measurement no row has: the ids that exist, so the next try is right.
pub fn missing(result: &RunResult, id: &str) -> Option<String> {
    if result.rows.iter().any(|r| r.summary.contains_key(id)) {
        return None;
    }
    let ids = rigor_model::measurements::order(
        result.rows.iter().flat_map(|r| r.summary.keys().cloned()),
    );
    Some(if ids.is_empty() {
        format!("--pivot {id}: no row measured anything")
    } else {
        format!(
            "--pivot {id}: no row measured it; measured: {}",
            ids.join(", ")
        )
    })
}

/// `--pivot-by VAR` names a variable no row with the measurement has: the ones they have.
pub fn missing_variable(result: &RunResult, id: &str, by: &str) -> Option<String> {
    let rows = result.rows.iter().filter(|r| r.summary.contains_key(id));
    let mut vars: Vec<&String> = rows.flat_map(|r| r.variables.keys()).collect();
    if vars.iter().any(|v| *v == by) {
        return None;
    }
    vars.sort();
    vars.dedup();
    let names: Vec<&str> = vars.iter().map(|v| v.as_str()).collect();
    Some(if names.is_empty() {
        format!("--pivot-by {by}: the rows with {id} have no variables")
    } else {
        format!(
            "--pivot-by {by}: no row with {id} has it; variables: {}",
            names.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{markdown, terminal, Document};
    use rigor_analysis::summary::{summarize_row, tests::row_with};
    use rigor_model::result::{Comparison, Verdict};

    /// clients 1, 2, 4 × variants base and slow; `cmd.mps` = clients × 1000 (× 0.8 for slow),
    /// three iterations each at ×0.99, ×1, ×1.01; slow at 2 clients judged a regression.
    fn sweep() -> RunResult {
        let mut result = crate::sample::sample_result();
        result.rows.clear();
        result.comparisons.clear();
        for clients in ["4", "1", "2"] {
            for (variant, f) in [("base", 1.0), ("slow", 0.8)] {
                let v = clients.parse::<f64>().unwrap() * 1000.0 * f;
                let mut row = row_with(
                    &[("clients", clients)],
                    Some(variant),
                    "cmd.mps",
                    &[v * 0.99, v, v * 1.01],
                );
                summarize_row(&mut row);
                result.rows.push(row);
            }
        }
        let mut c = Comparison::verdict_only(
            &[("clients", "2")],
            "cmd.mps",
            "base",
            "slow",
            Verdict::Regression,
        );
        result.comparisons.push(c.clone());
        c.row.insert("clients".into(), "4".into());
        c.verdict = Verdict::NoChange;
        result.comparisons.push(c);
        result
    }

    fn doc(view: &View) -> Document {
        Document {
            blocks: blocks(&sweep(), view),
        }
    }

    #[test]
    fn markdown_pivot_with_verdicts_and_a_trend() {
        let md = markdown::render_document(&doc(&View::default()));
        // CV of [0.99, 1, 1.01]·v = 0.01 exactly: `±1.0%`.
        assert_eq!(
            md,
            "### cmd.mps by clients\n\
             \n\
             cells: median ±CV% of each row's kept iterations · Δ: change of the median against \
             base, with the comparison's verdict · trend: the medians from the first clients to \
             the last, on one scale per table\n\
             \n\
             | clients | base | slow | Δ |\n\
             | --- | ---: | ---: | ---: |\n\
             | 1 | 1,000 ±1.0% | 800 ±1.0% | -20.0% |\n\
             | 2 | 2,000 ±1.0% | 1,600 ±1.0% | **-20.0% regression** |\n\
             | 4 | 4,000 ±1.0% | 3,200 ±1.0% | -20.0% no change |\n\
             | trend | ▁▄█ | ▁▃▆ |  |\n"
        );
    }

    #[test]
    fn terminal_pivot_without_charts_and_colour() {
        let view = View {
            charts: false,
            ..View::default()
        };
        let text = terminal::render_document_at(&doc(&view), false, 100);
        assert!(!text.contains('\x1b'), "{text}");
        assert!(!text.contains("trend"), "{text}");
        assert_eq!(
            text,
            "cmd.mps by clients\n\
             ------------------\n\
             cells: median ±CV% of each row's kept iterations · Δ: change of the median against \
             base, with the\n\
             comparison's verdict\n\
             \n\
             +---------+-------------+-------------+-------------------+\n\
             | clients |        base |        slow |                 Δ |\n\
             +=========================================================+\n\
             | 1       | 1,000 ±1.0% |   800 ±1.0% |            -20.0% |\n\
             | 2       | 2,000 ±1.0% | 1,600 ±1.0% | -20.0% regression |\n\
             | 4       | 4,000 ±1.0% | 3,200 ±1.0% |  -20.0% no change |\n\
             +---------+-------------+-------------+-------------------+\n"
        );
        // The HTML page shows the same table, the verdict in its class.
        let html = crate::html::render_document(&doc(&view), "t");
        assert!(
            html.contains("<th>clients</th><th>base</th><th>slow</th><th>Δ</th>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<td class=\"num\"><span class=\"regression\">-20.0% regression</span></td>"
            ),
            "{html}"
        );
        let coloured = terminal::render_document(&doc(&view), true);
        let line = coloured.lines().find(|l| l.contains("regression")).unwrap();
        assert!(line.contains("\x1b[38;5;9m"), "{line:?}");
    }

    #[test]
    fn a_pivot_by_name_and_the_ids_that_exist() {
        let r = sweep();
        assert_eq!(missing(&r, "cmd.mps"), None);
        assert_eq!(
            missing(&r, "load.rps").as_deref(),
            Some("--pivot load.rps: no row measured it; measured: cmd.mps")
        );
        assert_eq!(missing_variable(&r, "cmd.mps", "clients"), None);
        assert_eq!(
            missing_variable(&r, "cmd.mps", "conns").as_deref(),
            Some("--pivot-by conns: no row with cmd.mps has it; variables: clients")
        );
        // Asked for by name but nothing is swept: one line says why.
        let mut flat = sweep();
        flat.rows.truncate(2);
        let view = View {
            pivot: Some("cmd.mps".into()),
            ..View::default()
        };
        assert_eq!(
            blocks(&flat, &view),
            vec![Block::Text(
                "no pivot of cmd.mps: no variable takes two values in the rows with cmd.mps".into()
            )]
        );
        // Not asked for and nothing swept: nothing at all.
        assert!(blocks(&flat, &View::default()).is_empty());
    }

    #[test]
    fn one_table_per_other_variable_named_in_its_heading() {
        let mut r = sweep();
        for row in &mut r.rows {
            row.variables.insert("gc".into(), "server".into());
        }
        let mut more = sweep();
        for row in &mut more.rows {
            row.variables.insert("gc".into(), "workstation".into());
        }
        r.rows.extend(more.rows);
        let d = Document {
            blocks: blocks(&r, &View::default()),
        };
        let headings: Vec<&Block> = d
            .blocks
            .iter()
            .filter(|b| matches!(b, Block::Heading(..)))
            .collect();
        assert_eq!(
            headings,
            [
                &Block::Heading(2, "cmd.mps by clients".into()),
                &Block::Heading(3, "gc=server".into()),
                &Block::Heading(3, "gc=workstation".into()),
            ]
        );
        assert_eq!(d.tables().len(), 2);
    }
}
