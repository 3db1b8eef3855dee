//! The terminal rendering of a report: comfy-table tables, verdicts coloured (regression red,
//! improvement green, inconclusive and warnings yellow) when `color` is set. The caller decides
//! colour (`NO_COLOR`, not a tty), so the output here never depends on where it is printed.

use super::{Block, Cell, Document, Style, Table};
use crate::result::RunResult;
use comfy_table::{presets, Attribute, CellAlignment, Color, ContentArrangement};

/// Colour only on a terminal, and never when `NO_COLOR` is set to something (no-color.org).
pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
        && !matches!(std::env::var_os("NO_COLOR"), Some(v) if !v.is_empty())
}

/// The run report for a terminal as nobody asked otherwise, as tests build it.
#[cfg(test)]
pub fn render(result: &RunResult, color: bool) -> String {
    render_document(&super::run_document(result), color)
}

/// The run report for a terminal, as `view` asks (pivot, sparklines, width).
pub fn render_with(result: &RunResult, view: &super::View, color: bool) -> String {
    render_document(&super::run_document_with(result, view), color)
}

/// Renders any report document (also `rigor compare`'s) for a terminal.
pub fn render_document(doc: &Document, color: bool) -> String {
    let mut out = String::new();
    for block in &doc.blocks {
        match block {
            Block::Heading(level, text) => {
                if !out.is_empty() {
                    out.push('\n');
                }
                // Markdown's `##` would look odd on a terminal: underline sections instead.
                let text = &visible(text);
                match level {
                    1 => out.push_str(&paint(text, Style::Plain, color, true)),
                    2 => {
                        out.push_str(&paint(text, Style::Plain, color, true));
                        out.push('\n');
                        out.push_str(&"─".repeat(text.chars().count()));
                    }
                    _ => out.push_str(&paint(&format!("▸ {text}"), Style::Plain, color, true)),
                }
                out.push('\n');
            }
            Block::Text(text) => {
                out.push_str(&visible(text));
                out.push('\n');
            }
            Block::Table(t) => {
                out.push('\n');
                out.push_str(&table(t, color));
                out.push('\n');
            }
            Block::List(items) => {
                for item in items {
                    out.push_str(&paint(
                        &format!("• {}", visible(&item.text)),
                        item.style,
                        color,
                        false,
                    ));
                    out.push('\n');
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

/// Control characters in text (an escape sequence in a description or an error message could
/// clear the screen, move the cursor or retitle the terminal) are shown as `\u{1b}`-style
/// escapes; line breaks and tabs stay. Markdown, HTML and CSV use it too, so a file holds the
/// same visible text the terminal shows.
pub fn visible(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

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

fn table(t: &Table, color: bool) -> String {
    let mut table = comfy_table::Table::new();
    table
        .load_preset(presets::UTF8_FULL_CONDENSED)
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
    table.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample::sample_result;

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
            .find(|l| l.contains("regression") && l.contains('┆'))
            .unwrap();
        assert!(
            line.ends_with("┆\x1b[38;5;9m\x1b[1m regression \x1b[0m│"),
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
