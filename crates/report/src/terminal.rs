//! The terminal rendering of a report: comfy-table tables, verdicts coloured (regression red,
//! improvement green, inconclusive and warnings yellow) when `color` is set. The caller decides
//! colour (`NO_COLOR`, not a tty), so the output here never depends on where it is printed.

use super::{fit, Block, Cell, Document, Style, Table};
use comfy_table::{presets, Attribute, CellAlignment, Color, ContentArrangement};
use rigor_model::result::RunResult;

/// Colour only on a terminal, and never when `NO_COLOR` is set to something (no-color.org).
pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
        && !matches!(std::env::var_os("NO_COLOR"), Some(v) if !v.is_empty())
}

/// The run report for a terminal as nobody asked otherwise, as tests build it.
#[cfg(any(test, feature = "fixtures"))]
pub fn render(result: &RunResult, color: bool) -> String {
    render_document(&super::run_document(result), color)
}

/// The run report for a terminal, as `view` asks (pivot, sparklines, width).
pub fn render_with(result: &RunResult, view: &super::View, color: bool) -> String {
    render_document_at(&super::run_document_with(result, view), color, view.width)
}

/// Renders any report document (also `rigor compare`'s) for the terminal rigor prints to,
/// fitted to its width.
pub fn render_document(doc: &Document, color: bool) -> String {
    render_document_at(doc, color, super::view::terminal_width())
}

/// Renders a report document with no line wider than `width`: prose and list items wrap, wide
/// tables are split (see [`fit`]).
pub fn render_document_at(doc: &Document, color: bool, width: usize) -> String {
    let mut out = String::new();
    for block in &doc.blocks {
        match block {
            Block::Heading(level, text) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                // Markdown's `##` would look odd on a terminal: underline sections instead.
                let text = &fit::wrap(&visible(text), width, "").join("\n");
                match level {
                    1 => out.push_str(&paint(text, Style::Plain, color, true)),
                    2 => {
                        out.push_str(&paint(text, Style::Plain, color, true));
                        out.push('\n');
                        out.push_str(&"-".repeat(text.chars().count()));
                    }
                    _ => out.push_str(&paint(&format!("▸ {text}"), Style::Plain, color, true)),
                }
                out.push('\n');
            }
            Block::Text(text) => {
                for line in fit::wrap(&visible(text), width, "") {
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            Block::Table(t) => {
                let (parts, left_out) = fitted(t, width);
                for part in parts {
                    out.push('\n');
                    out.push_str(&table(&part, color, width));
                    out.push('\n');
                }
                if !left_out.is_empty() {
                    let said = format!(
                        "left out to fit {width} columns: {} (a wider COLUMNS shows {}, as do \
                         the Markdown, HTML and JSON reports)",
                        left_out.join(", "),
                        if left_out.len() == 1 { "it" } else { "them" }
                    );
                    for line in fit::wrap(&visible(&said), width, "") {
                        out.push_str(&line);
                        out.push('\n');
                    }
                }
            }
            Block::List(items) => {
                for item in items {
                    let text = format!("• {}", visible(&item.text));
                    for line in fit::wrap(&text, width, "  ") {
                        out.push_str(&paint(&line, item.style, color, false));
                        out.push('\n');
                    }
                }
            }
        }
    }
    out
}

/// How a style is coloured: the table cell colour (comfy-table) and the SGR code of the same
/// colour for text outside tables; plain text is not coloured.
fn palette(style: Style) -> Option<(Color, &'static str)> {
    match style {
        Style::Plain => None,
        Style::Regression => Some((Color::Red, "31")),
        Style::Improvement => Some((Color::Green, "32")),
        Style::Inconclusive | Style::Warning => Some((Color::Yellow, "33")),
    }
}

/// ANSI colour for text outside tables (headings, list items).
fn paint(text: &str, style: Style, color: bool, bold: bool) -> String {
    if !color {
        return text.to_string();
    }
    match (palette(style).map(|(_, code)| code), bold) {
        (None, false) => text.to_string(),
        (None, true) => format!("\x1b[1m{text}\x1b[0m"),
        (Some(c), false) => format!("\x1b[{c}m{text}\x1b[0m"),
        (Some(c), true) => format!("\x1b[1;{c}m{text}\x1b[0m"),
    }
}

pub use rigor_model::format::visible;

fn cell(c: &Cell, color: bool) -> comfy_table::Cell {
    let mut cell = comfy_table::Cell::new(visible(&c.text));
    if color {
        if let Some((col, _)) = palette(c.style) {
            cell = cell.fg(col);
            if matches!(c.style, Style::Regression | Style::Improvement) {
                cell = cell.add_attribute(Attribute::Bold);
            }
        }
    }
    cell
}

/// `t` as it fits in `width`, and the titles of the columns left out for it: whole; else a
/// figures table without the means beside its medians (`61.81 ±1.0% (61.85)` reads
/// `61.81 ±1.0%`) if that fits; else without its droppable columns, least important first, if
/// that makes it fit in one table; else split into tables of a few value columns each, every one
/// repeating the label column.
fn fitted(t: &Table, width: usize) -> (Vec<Table>, Vec<String>) {
    let parts = split(t, width);
    if parts.len() < 2 {
        return (parts, Vec::new());
    }
    let compact = if t.numeric {
        Table {
            rows: t
                .rows
                .iter()
                .map(|r| r.iter().map(without_mean).collect())
                .collect(),
            ..t.clone()
        }
    } else {
        t.clone()
    };
    let fewer = split(&compact, width);
    if fewer.len() < 2 {
        return (fewer, Vec::new());
    }
    let mut gone: Vec<usize> = Vec::new();
    for step in &t.droppable {
        gone.extend(
            step.iter()
                .copied()
                .filter(|&i| i > 0 && i < t.header.len()),
        );
        let narrower = without_columns(&compact, &gone);
        if split(&narrower, width).len() < 2 {
            let mut titles: Vec<String> = Vec::new();
            for &i in &gone {
                if !titles.contains(&t.header[i]) {
                    titles.push(t.header[i].clone());
                }
            }
            return (vec![narrower], titles);
        }
    }
    if fewer.len() < parts.len() {
        (fewer, Vec::new())
    } else {
        (parts, Vec::new())
    }
}

/// `t` without the columns `gone`.
fn without_columns(t: &Table, gone: &[usize]) -> Table {
    let kept: Vec<usize> = (0..t.header.len()).filter(|i| !gone.contains(i)).collect();
    Table {
        header: kept.iter().map(|&i| t.header[i].clone()).collect(),
        rows: t
            .rows
            .iter()
            .map(|r| kept.iter().filter_map(|&i| r.get(i).cloned()).collect())
            .collect(),
        numeric: t.numeric,
        droppable: Vec::new(),
    }
}

/// A figure cell without the mean in parentheses after its `median ±CV%` (a `(n=k)` after it
/// stays).
fn without_mean(c: &Cell) -> Cell {
    let stripped = c.text.split_once(" (").and_then(|(head, tail)| {
        let (mean, rest) = tail.split_once(')')?;
        let is_mean = head.contains(" ±") && !mean.contains(' ') && !mean.starts_with("n=");
        is_mean.then(|| format!("{head}{rest}"))
    });
    match stripped {
        Some(text) => Cell {
            text,
            style: c.style,
        },
        None => c.clone(),
    }
}

/// `t` split into tables of a few value columns each, every one repeating the label column, so
/// each fits in `width` (one table when it fits whole).
fn split(t: &Table, width: usize) -> Vec<Table> {
    let widths: Vec<usize> = (0..t.header.len())
        .map(|i| {
            let cells = t.rows.iter().filter_map(|r| r.get(i)).map(|c| &c.text);
            std::iter::once(&t.header[i])
                .chain(cells)
                .map(|s| fit::columns(&visible(s)))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let groups = fit::column_groups(&widths, &fit::sticky(&t.header), width);
    if groups.len() < 2 {
        return vec![t.clone()];
    }
    groups
        .iter()
        .map(|g| {
            let columns: Vec<usize> = std::iter::once(0).chain(g.iter().copied()).collect();
            Table {
                header: columns.iter().map(|&i| t.header[i].clone()).collect(),
                rows: t
                    .rows
                    .iter()
                    .map(|r| columns.iter().filter_map(|&i| r.get(i).cloned()).collect())
                    .collect(),
                numeric: t.numeric,
                droppable: Vec::new(),
            }
        })
        .collect()
}

/// One table drawn in ASCII (a line of it takes as many bytes as columns); one still wider than
/// `width` (a single column of long text) has its cells wrapped to fit.
fn table(t: &Table, color: bool, width: usize) -> String {
    let mut table = comfy_table::Table::new();
    table
        .load_preset(presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty();
    if color {
        table.enforce_styling();
    }
    table.set_header(t.header.iter().map(|h| {
        let c = comfy_table::Cell::new(visible(h));
        if color {
            c.add_attribute(Attribute::Bold)
        } else {
            c
        }
    }));
    for row in &t.rows {
        table.add_row(row.iter().map(|c| cell(c, color)));
    }
    if t.numeric {
        for i in 1..t.header.len() {
            if let Some(col) = table.column_mut(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    // The table lays out in columns; what its signs take beyond that is taken off its width.
    let over = |text: &str| {
        text.lines()
            .map(|l| fit::line_width(&strip_sgr(l)))
            .max()
            .unwrap_or(0)
            .saturating_sub(width)
    };
    let text = table.to_string();
    if over(&text) == 0 {
        return text;
    }
    let mut fit_to = width;
    table.set_content_arrangement(ContentArrangement::DynamicFullWidth);
    loop {
        table.set_width(u16::try_from(fit_to).unwrap_or(u16::MAX));
        let text = table.to_string();
        let excess = over(&text);
        if excess == 0 || fit_to <= 20 {
            return text;
        }
        fit_to = fit_to.saturating_sub(excess).max(20);
    }
}

/// A line without its SGR colour codes, to measure what shows.
fn strip_sgr(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sample_result;

    #[test]
    fn plain_output_has_tables_and_no_escape_codes() {
        let text = render(&sample_result(), false);
        assert!(!text.contains('\x1b'), "{text}");
        assert!(text.contains("Max Working Set (MiB)"), "{text}");
        assert!(text.contains("61.81 ±1.0%"), "{text}");
        assert!(text.contains("connections=64"), "{text}");
        assert!(text.contains("regression"), "{text}");
        assert!(text.contains("[debug_build]"), "{text}");
        assert!(text.contains("Kernel"), "{text}");
    }

    #[test]
    fn no_line_is_wider_than_the_width_and_split_tables_keep_every_cell() {
        let mut r = sample_result();
        // Six columns of long labels: far wider than 60 characters in one table.
        let row = r.rows[0].clone();
        r.rows = (0..6)
            .map(|i| {
                let mut row = row.clone();
                row.variables
                    .insert("connections".into(), format!("{i}-with-a-long-name"));
                row
            })
            .collect();
        r.description = Some("word ".repeat(40));
        for width in [60, 100] {
            let text = render_document_at(&crate::run_document(&r), false, width);
            let widest = text.lines().map(|l| l.len()).max().unwrap();
            assert!(widest <= width, "{widest} > {width}:\n{text}");
            for i in 0..6 {
                assert!(
                    text.contains(&format!("connections={i}-with-a-long-name")),
                    "{text}"
                );
            }
            // Every split keeps the label column.
            let splits = text.matches("| application").count();
            let least = if width == 60 { 2 } else { 1 };
            assert!(splits >= least, "{text}");
            assert_eq!(
                text.matches("Max Working Set (MiB)").count(),
                splits,
                "{text}"
            );
        }
        // Coloured, the visible width is the same.
        let text = render_document_at(&crate::run_document(&r), true, 60);
        assert!(text.lines().all(|l| strip_sgr(l).len() <= 60), "{text}");
    }

    #[test]
    fn a_narrow_terminal_drops_the_means_before_it_splits() {
        let c = |t: &str| without_mean(&Cell::plain(t)).text;
        assert_eq!(c("61.81 ±1.0% (61.85)"), "61.81 ±1.0%");
        assert_eq!(c("3/4 (1 failed)"), "3/4 (1 failed)");
        assert_eq!(c("2 (180 B)"), "2 (180 B)");
        assert_eq!(c("101 ±15.4% (110.3) (n=2)"), "101 ±15.4% (n=2)");
        assert_eq!(c("101 ±15.4% (n=2)"), "101 ±15.4% (n=2)");
        let mut r = sample_result();
        let row = r.rows[0].clone();
        r.rows = (0..3)
            .map(|i| {
                let mut row = row.clone();
                row.variables.insert("connections".into(), i.to_string());
                for (k, it) in row.iterations.iter_mut().enumerate() {
                    for v in it.measurements.values_mut() {
                        *v *= [1.0, 1.1, 1.5][k.min(2)];
                    }
                }
                rigor_analysis::summary::summarize_row(&mut row);
                row
            })
            .collect();
        let doc = crate::run_document(&r);
        let wide = render_document_at(&doc, false, 200);
        assert!(wide.contains("±"), "{wide}");
        let has_mean = |text: &str| {
            text.lines()
                .any(|l| l.starts_with("| Requests/sec") && l.contains("% ("))
        };
        assert!(has_mean(&wide), "{wide}");
        // Narrow enough that the means do not fit: one table per kind, without them.
        let narrow = render_document_at(&doc, false, 95);
        assert_eq!(narrow.matches("| application").count(), 1, "{narrow}");
        assert!(!has_mean(&narrow), "{narrow}");
    }

    #[test]
    fn a_narrow_terminal_drops_p_then_the_interval_before_it_splits_a_comparison() {
        let header: Vec<String> = [
            "measurement",
            "baseline",
            "slowed",
            "Δ median",
            "95% CI",
            "p",
            "verdict",
        ]
        .map(String::from)
        .to_vec();
        let line = |label: &str| {
            [
                label,
                "2,199,981",
                "1,599,850",
                "-27.3%",
                "[-34.6%, +109.7%]",
                "0.008",
                "inconclusive",
            ]
            .map(Cell::plain)
            .to_vec()
        };
        let t = Table {
            header,
            rows: vec![line("  clients=1 window=16"), line("  clients=2 window=16")],
            numeric: true,
            droppable: vec![vec![5], vec![4]],
        };
        let doc = Document {
            blocks: vec![Block::Table(t)],
        };
        let widest = |text: &str| text.lines().map(|l| l.len()).max().unwrap();
        let whole = render_document_at(&doc, false, 120);
        assert!(
            whole.contains("0.008") && !whole.contains("left out"),
            "{whole}"
        );
        let full = widest(&whole);
        // One column short of the whole table: p goes, and one line says so.
        let narrow = render_document_at(&doc, false, full - 1);
        assert!(widest(&narrow) < full, "{narrow}");
        assert!(
            !narrow.contains("0.008") && narrow.contains("[-34.6%, +109.7%]"),
            "{narrow}"
        );
        assert_eq!(narrow.matches("| measurement").count(), 1, "{narrow}");
        assert!(narrow.contains("left out to fit"), "{narrow}");
        assert!(narrow.contains(": p (a wider COLUMNS shows it"), "{narrow}");
        // Narrower still: the interval goes too.
        let narrower = render_document_at(&doc, false, full - 12);
        assert!(!narrower.contains("+109.7%"), "{narrower}");
        assert!(
            narrower.contains("-27.3%") && narrower.contains("inconclusive"),
            "{narrower}"
        );
        assert!(
            narrower.contains(": p, 95% CI (a wider COLUMNS shows them"),
            "{narrower}"
        );
        // Too narrow even without them: split as before, every figure kept.
        let split = render_document_at(&doc, false, 60);
        assert!(widest(&split) <= 60, "{split}");
        assert!(
            split.contains("0.008") && split.contains("+109.7%"),
            "{split}"
        );
        assert!(!split.contains("left out"), "{split}");
    }

    #[test]
    fn escape_sequences_in_user_text_are_shown_not_obeyed() {
        let mut r = sample_result();
        r.description = Some("PR \x1b[2J\x1b]0;owned\x07".into());
        r.rows[0].variant = Some("v\x1b[31m".into());
        let text = render(&r, false);
        assert!(!text.contains('\x1b'), "{text}");
        assert!(!text.contains('\x07'), "{text}");
        assert!(
            text.contains("PR \\u{1b}[2J\\u{1b}]0;owned\\u{7}"),
            "{text}"
        );
        assert!(text.contains("v\\u{1b}[31m"), "{text}");
    }

    #[test]
    fn color_marks_regressions_red() {
        let text = render(&sample_result(), true);
        // In a table, comfy-table (crossterm) sets red as SGR 38;5;9, then bold, around the
        // padded cell, and resets after it: nothing else on the line is coloured.
        let line = (text.lines())
            .find(|l| l.contains("regression") && l.contains('|'))
            .unwrap();
        assert!(
            line.ends_with("|\x1b[38;5;9m\x1b[1m regression \x1b[0m|"),
            "{line:?}"
        );
        assert_eq!(line.matches('\x1b').count(), 3, "{line:?}");
        // Outside tables a failed iteration is red (SGR 31) and a warning yellow (SGR 33).
        assert!(
            text.contains(
                "\x1b[31m• connections=64 · iteration 4: app exited with code 1 before ready \
                 (log: logs/4.log)\x1b[0m"
            ),
            "{text:?}"
        );
        assert!(
            text.contains(
                "\x1b[33m• [debug_build] artifact looks like a debug build — build with \
                 --release\x1b[0m"
            ),
            "{text:?}"
        );
    }
}
