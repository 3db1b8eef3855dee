//! GitHub-flavoured markdown: the same report as the terminal, ready for a PR comment, an issue
//! (seed 000's tables) or `$GITHUB_STEP_SUMMARY`.

use super::{Block, Cell, Document, Style, Table};
use crate::result::RunResult;

/// The run report as markdown (`--markdown F`).
pub fn render(result: &RunResult) -> String {
    render_document(&super::run_document(result))
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
                    escape_text(text)
                ));
            }
            Block::Text(text) => {
                out.push_str(text);
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

/// Pipes end a cell and newlines end a table row; both must be escaped inside cells.
fn escape_cell(s: &str) -> String {
    escape_text(s).replace('|', "\\|").replace('\n', "<br>")
}

/// Keeps user text (error messages, paths) from turning into markup by accident, escaping only
/// what commonly bites (`*`, `\\`, an HTML-looking `<`) so the raw file stays readable.
fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        // `<` only opens HTML before a letter, `/` or `!`; `<0.001` stays as it is.
        let html = ch == '<'
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '/' || *n == '!');
        if matches!(ch, '*' | '\\') || html {
            out.push('\\');
        }
        out.push(ch);
    }
    out
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
    use crate::report::tests::sample_result;

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
            md.contains("| Max Working Set (MiB) | 61.81 ±1.0% (61.81) |"),
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

    #[test]
    fn cells_escape_pipes() {
        let t = Table {
            header: vec!["a".into(), "b".into()],
            rows: vec![vec![Cell::plain("x|y"), Cell::plain("1\n2")]],
            numeric: true,
        };
        assert_eq!(table(&t), "| a | b |\n| --- | ---: |\n| x\\|y | 1<br>2 |\n");
    }
}
