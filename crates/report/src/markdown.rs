//! GitHub-flavoured markdown: the same report as the terminal, ready for a PR comment, an issue
//! or `$GITHUB_STEP_SUMMARY`.

use super::{Block, Cell, Document, Style, Table};
use rigor_model::result::RunResult;

/// The run report as markdown as nobody asked otherwise, as tests build it.
#[cfg(any(test, feature = "fixtures"))]
pub fn render(result: &RunResult) -> String {
    render_document(&super::run_document(result))
}

/// The run report as markdown, as `view` asks (pivot, sparklines).
pub fn render_with(result: &RunResult, view: &super::View) -> String {
    render_document(&super::run_document_with(result, view))
}

/// Renders any report document (also `rigor compare`'s) as markdown.
pub fn render_document(doc: &Document) -> String {
    let mut out = String::new();
    for block in &doc.blocks {
        if !out.is_empty() {
            out.push('\n');
        }
        match block {
            Block::Heading(level, text) => {
                out.push_str(&format!(
                    "{} {}\n",
                    "#".repeat(*level as usize + 1),
                    escape_text(&text.replace(['\r', '\n'], " "))
                ));
            }
            Block::Text(text) => {
                out.push_str(&escape_text(text));
                out.push('\n');
            }
            Block::Table(t) => out.push_str(&table(t)),
            Block::List(items) => {
                for item in items {
                    out.push_str(&format!("- {}\n", styled(item, false)));
                }
            }
        }
    }
    out
}

/// Verdicts that matter are bold so they stand out in a PR comment.
fn styled(c: &Cell, in_table: bool) -> String {
    let text = if in_table {
        escape_cell(&c.text)
    } else {
        escape_text(&c.text)
    };
    match c.style {
        Style::Regression | Style::Improvement if !text.is_empty() => format!("**{text}**"),
        _ => text,
    }
}

/// Cell text: [`escape_text`] already escapes the pipes that would end a cell and turns the
/// line breaks that would end a row into `<br>`.
/// Nothing starts a block inside a cell, so `-10.8%` stays as it is.
fn escape_cell(s: &str) -> String {
    escape(s, false)
}

/// [`escape`] for text that stands on its own line (headings, paragraphs, list items).
fn escape_text(s: &str) -> String {
    escape(s, true)
}

/// Makes any text (descriptions, file names, error messages, names from the config) show as
/// the same text and never as markup: emphasis, code, strike-through, entity and pipe characters
/// are backslash-escaped, and so are a `<` that could open HTML or an autolink and a `]` that
/// could close a link. Line breaks become `<br>` so user text cannot start a heading, list or
/// table of its own, and a first character that could start a block (`-`, `+`, `=`, `>`, `#`,
/// `1.`) is escaped where `line_start` says the text begins a line. What cannot be markup is
/// left as it is, so the raw file stays readable (`<0.001`, `[-1.0%, +2.0%]`, `client_saturated`).
/// Control characters other than line breaks and tabs are shown as `\u{1b}`-style escapes.
fn escape(s: &str, line_start: bool) -> String {
    let s = s.replace("\r\n", "\n").replace('\r', "\n");
    // Other control characters (an escape sequence would recolour or rewrite a terminal that
    // shows the raw file, `cat`ed summaries included) are shown as `\u{1b}`, as on the terminal.
    let s = super::terminal::visible(&s);
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, &ch) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        if ch == '\n' {
            out.push_str("<br>");
            continue;
        }
        let escape = match ch {
            '\\' | '`' | '*' | '~' | '|' | '&' | '#' => true,
            // An underscore inside a word never emphasises (`client_saturated`).
            '_' => {
                !(prev.is_some_and(char::is_alphanumeric)
                    && next.is_some_and(char::is_alphanumeric))
            }
            // `<` opens HTML or an autolink only before a letter, `/`, `!` or `?`.
            '<' => next.is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')),
            // `]` closes a link or reference only before `(`, `[` or `:`.
            ']' => matches!(next, Some('(' | '[' | ':')),
            '-' | '+' | '=' | '>' => line_start && i == 0,
            // `12. text` starts an ordered list: escape its `.` (digits cannot be escaped).
            '.' | ')' => line_start && Some(i) == ordered_list_delimiter(&s),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Where the `.` or `)` of an ordered-list start (`12. text`, `3) text`) sits, if `s` has one.
fn ordered_list_delimiter(s: &str) -> Option<usize> {
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    let rest = &s[digits..];
    (digits > 0 && (rest.starts_with(". ") || rest.starts_with(") "))).then_some(digits)
}

fn table(t: &Table) -> String {
    let mut out = String::new();
    out.push('|');
    for h in &t.header {
        out.push_str(&format!(" {} |", escape_cell(h)));
    }
    out.push_str("\n|");
    for i in 0..t.header.len() {
        out.push_str(if i == 0 || !t.numeric {
            " --- |"
        } else {
            " ---: |"
        });
    }
    out.push('\n');
    for row in &t.rows {
        out.push('|');
        for c in row {
            out.push_str(&format!(" {} |", styled(c, true)));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sample_result;

    #[test]
    fn github_tables() {
        let md = render(&sample_result());
        assert!(
            md.contains(
                "| application | connections=16 | connections=64 |\n| --- | ---: | ---: |\n"
            ),
            "{md}"
        );
        assert!(
            md.contains("| Max Working Set (MiB) | 61.81 ±1.0% |"),
            "{md}"
        );
        assert!(md.contains("| **regression** |"), "{md}");
        assert!(md.contains("| [-12.0%, -9.5%] |"), "{md}");
        assert!(
            md.contains("- [debug_build] artifact looks like a debug build"),
            "{md}"
        );
        assert!(md.contains("## "), "{md}");
    }

    /// User text of every kind: raw HTML, emphasis, a link, a line that would start a heading,
    /// a table row, a list.
    const HOSTILE: &str =
        "<script>alert(1)</script> **b** [x](javascript:alert(1))\n# h\n| a | b |\n- item";

    #[test]
    fn user_strings_never_become_markup() {
        let mut r = sample_result();
        r.description = Some(HOSTILE.into());
        r.rows[0].variant = Some("<img src=x onerror=alert(1)>".into());
        r.rows[1].iterations[3].error = Some(HOSTILE.into());
        let md = render(&r);
        // Markup survives only where no backslash precedes it.
        let unescaped = |needle: &str| {
            md.match_indices(needle)
                .any(|(i, _)| !md[..i].ends_with('\\'))
        };
        assert!(!unescaped("<script>"), "{md}");
        assert!(!unescaped("</script>"), "{md}");
        assert!(!unescaped("<img"), "{md}");
        assert!(!md.contains("[x](javascript"), "{md}");
        assert!(!md.contains("**b**"), "{md}");
        assert!(!md.contains("\n# h"), "{md}");
        assert!(!md.contains("\n| a |"), "{md}");
        assert!(!md.contains("\n- item"), "{md}");
        assert!(
            md.contains(
                "\\<script>alert(1)\\</script> \\*\\*b\\*\\* [x\\](javascript:alert(1))<br>\\# h<br>\\| a \\| b \\|<br>- item"
            ),
            "{md}"
        );
        assert!(md.contains("\\<img src=x onerror=alert(1)>"), "{md}");
        // A text that starts like a list item or a heading is escaped where it starts a line.
        assert_eq!(escape_text("- a"), "\\- a");
        assert_eq!(escape_text("12. a"), "12\\. a");
        assert_eq!(escape_text("> quote"), "\\> quote");
        assert_eq!(escape_cell("-10.8%"), "-10.8%");
        assert_eq!(escape_cell("<0.001"), "<0.001");
    }

    #[test]
    fn control_characters_are_shown_not_sent() {
        let md = escape_text("a\x1b[31mred\x07\tb");
        assert!(!md.contains('\x1b') && !md.contains('\x07'), "{md:?}");
        assert!(
            md.contains("u{1b}[31mred") && md.contains("u{7}\tb"),
            "{md:?}"
        );
        assert!(!escape_cell("c\x1b.json").contains('\x1b'));
    }

    #[test]
    fn cells_escape_pipes() {
        let t = Table {
            header: vec!["a".into(), "b".into()],
            rows: vec![vec![Cell::plain("x|y"), Cell::plain("1\n2")]],
            numeric: true,
            droppable: Vec::new(),
        };
        assert_eq!(table(&t), "| a | b |\n| --- | ---: |\n| x\\|y | 1<br>2 |\n");
    }
}
