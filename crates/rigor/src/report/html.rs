//! A standalone HTML page of the same report (`--html F`): something to attach to a ticket or
//! open in a browser, with verdicts coloured as on the terminal.

use super::{Block, Cell, Document, Style, Table};
use crate::result::RunResult;

/// The run report as one HTML file as nobody asked otherwise, as tests build it.
#[cfg(test)]
pub fn render(result: &RunResult) -> String {
    render_with(result, &super::View::default())
}

/// The run report as one HTML file with the pivot `view` asks for; sparklines are left to the
/// terminal and Markdown (the page draws charts).
pub fn render_with(result: &RunResult, view: &super::View) -> String {
    render_document(
        &super::run_document_with(result, &view.without_charts()),
        &format!("rigor · {}", result.scenario),
    )
}

/// Renders any report document as a complete HTML page titled `title`.
pub fn render_document(doc: &Document, title: &str) -> String {
    let mut out =
        String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    out.push_str(&format!("<title>{}</title>\n", escape(title)));
    out.push_str(STYLE);
    out.push_str("</head><body>\n");
    for block in &doc.blocks {
        match block {
            Block::Heading(level, text) => {
                let h = (*level).clamp(1, 5);
                out.push_str(&format!("<h{h}>{}</h{h}>\n", escape(text)));
            }
            Block::Text(text) => out.push_str(&format!("<p>{}</p>\n", escape(text))),
            Block::Table(t) => out.push_str(&table(t)),
            Block::List(items) => {
                out.push_str("<ul>\n");
                for item in items {
                    out.push_str(&format!("<li>{}</li>\n", cell(item)));
                }
                out.push_str("</ul>\n");
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}

const STYLE: &str = "<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.25em .6em}
th{background:#f3f3f3;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.regression{color:#b00020;font-weight:bold}
.improvement{color:#1b7f2a;font-weight:bold}
.inconclusive,.warning{color:#a66b00}
</style>
";

fn table(t: &Table) -> String {
    let mut out = String::from("<table>\n<tr>");
    for h in &t.header {
        out.push_str(&format!("<th>{}</th>", escape(h)));
    }
    out.push_str("</tr>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let class = if t.numeric && i > 0 {
                " class=\"num\""
            } else {
                ""
            };
            out.push_str(&format!("<td{class}>{}</td>", cell(c)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

fn cell(c: &Cell) -> String {
    let class = match c.style {
        Style::Plain => return escape(&c.text),
        Style::Regression => "regression",
        Style::Improvement => "improvement",
        Style::Inconclusive => "inconclusive",
        Style::Warning => "warning",
    };
    format!("<span class=\"{class}\">{}</span>", escape(&c.text))
}

/// Text, never markup; control characters other than line breaks and tabs are shown as
/// `\u{1b}`-style escapes, as on the terminal, since a raw escape sequence is not text.
fn escape(s: &str) -> String {
    super::terminal::visible(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_strings_in_a_run_report_are_text() {
        let mut r = crate::report::sample::sample_result();
        r.description = Some("<script>alert(1)</script> & \"q\"".into());
        r.scenario = "<b>s</b>".into();
        r.rows[0].variant = Some("<img src=x onerror=alert(1)>".into());
        r.rows[1].iterations[3].error = Some("</td></tr><script>x</script>".into());
        let html = render(&r);
        for raw in ["<script", "</script", "<img", "<b>s", "</td></tr><"] {
            assert!(!html.contains(raw), "{raw} in {html}");
        }
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot;"));
        assert!(html.contains("<title>rigor · &lt;b&gt;s&lt;/b&gt;</title>"));
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    }

    #[test]
    fn control_characters_are_shown_not_sent() {
        let html = escape("a\x1b[31mred\r\x00");
        assert_eq!(html, "a\\u{1b}[31mred\\u{d}\\u{0}");
    }

    #[test]
    fn escapes_text_and_colours_verdicts() {
        let doc = Document {
            blocks: vec![
                Block::Heading(1, "a <b>".into()),
                Block::Table(Table {
                    header: vec!["m".into(), "v".into()],
                    rows: vec![vec![
                        Cell::plain("x & y"),
                        Cell::styled("regression", Style::Regression),
                    ]],
                    numeric: true,
                }),
            ],
        };
        let html = render_document(&doc, "t");
        assert!(html.contains("<h1>a &lt;b&gt;</h1>"));
        assert!(html.contains("<td>x &amp; y</td>"));
        assert!(
            html.contains("<td class=\"num\"><span class=\"regression\">regression</span></td>")
        );
        // The class is red and bold in the page's own style sheet.
        assert!(html.contains(".regression{color:#b00020;font-weight:bold}"));
        assert!(html.ends_with("</html>\n"));
    }
}
