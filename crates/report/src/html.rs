//! A standalone HTML page of the same report (`--html F`): something to attach to a ticket or
//! open in a browser, with verdicts coloured as on the terminal and the charts drawn inline
//! (SVG, see [`super::chart`]), so the one file shows everything without network or script.

use super::{Block, Cell, Document, Style, Table};
use rigor_model::result::RunResult;

/// The run report as one HTML file as nobody asked otherwise, as tests build it.
#[cfg(any(test, feature = "fixtures"))]
pub fn render(result: &RunResult) -> String {
    render_with(result, &super::View::default())
}

/// The run report as one self-contained HTML file with the pivot `view` asks for, and its
/// charts; sparklines are left to the terminal and Markdown (the page draws charts).
pub fn render_with(result: &RunResult, view: &super::View) -> String {
    render_with_flame_graphs(result, view, &[])
}

/// [`render_with`], with the run's flame graphs (read from the run folder by the caller, as
/// this crate reads no file) drawn in a section of their own, each a still picture.
pub fn render_with_flame_graphs(
    result: &RunResult,
    view: &super::View,
    graphs: &[super::profiles::FlameGraph],
) -> String {
    let key = super::headline::chosen_key(&result.comparisons, &view.key, view.primary.as_deref());
    let charts = super::chart::run_charts(result, &key);
    let answer = if charts.answer.is_empty() {
        String::new()
    } else {
        format!(
            "<section class=\"charts-section answer\">\n{}</section>\n",
            charts.answer
        )
    };
    let mut more = flame_graphs(graphs);
    more.push_str(&if charts.more.is_empty() {
        String::new()
    } else {
        format!(
            "<details class=\"charts-section\"><summary>More charts: every measurement's \
             comparison, latency spectra, timelines</summary>\n{}</details>\n",
            charts.more
        )
    });
    page(
        &super::run_document_with(result, &view.without_charts()),
        &format!("rigor · {}", result.scenario),
        &answer,
        &more,
    )
}

/// The flame graphs' section: each SVG as a data: URI in an `<img>`, so its script and styles
/// stay inside it (a still picture; the file in the run folder is the interactive one).
fn flame_graphs(graphs: &[super::profiles::FlameGraph]) -> String {
    use base64::Engine;
    if graphs.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("<section class=\"flame-graphs\">\n<h2>CPU profile: flame graphs</h2>\n");
    for g in graphs {
        out.push_str(&format!(
            "<figure><figcaption>{}</figcaption><img class=\"flame-graph\" alt=\"{}\" \
             src=\"data:image/svg+xml;base64,{}\"></figure>\n",
            escape(&g.title),
            escape(&g.title),
            base64::engine::general_purpose::STANDARD.encode(&g.svg)
        ));
    }
    out.push_str("</section>\n");
    out
}

/// Renders any report document as a complete HTML page titled `title`, without charts.
#[cfg(any(test, feature = "fixtures"))]
pub fn render_document(doc: &Document, title: &str) -> String {
    render_page(doc, title, "")
}

/// Renders a report document as a complete HTML page titled `title`, with `charts` (trusted
/// markup built by [`super::chart`], every user string in it already escaped) before the first
/// table or section: the picture first, the figures behind it after.
pub fn render_page(doc: &Document, title: &str, charts: &str) -> String {
    page(doc, title, charts, "")
}

/// Where the headline (one line per compared pair with the key figures' verdicts) goes: right
/// under the title and what the run was, before any chart or table.
pub const HEADLINE_SLOT: &str = "<!-- rigor:headline -->\n";

/// Sections the page folds under `<details>`: figures behind the answer that a reader opens
/// when they want them.
const FOLDED: &[&str] = &["comparison", "noise floor"];

/// The page: the title and intro, the headline slot, `answer` (charts that answer the
/// question), the document's tables with the secondary sections folded, then `more` (the rest
/// of the charts, folded by the caller).
fn page(doc: &Document, title: &str, answer: &str, more: &str) -> String {
    let mut out =
        String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    out.push_str(&format!("<title>{}</title>\n", escape(title)));
    out.push_str(STYLE);
    out.push_str("</head><body>\n");
    let first_table = doc
        .blocks
        .iter()
        .position(|b| matches!(b, Block::Table(_) | Block::Heading(2.., _)))
        .unwrap_or(doc.blocks.len());
    let mut folded = false;
    for (i, block) in doc.blocks.iter().enumerate() {
        if i == first_table {
            out.push_str(HEADLINE_SLOT);
            out.push_str(answer);
        }
        if let Block::Heading(2, text) = block {
            if folded {
                out.push_str("</details>\n");
                folded = false;
            }
            if FOLDED.contains(&text.as_str()) {
                out.push_str(&format!(
                    "<details class=\"secondary\"><summary>{}</summary>\n",
                    escape(text)
                ));
                folded = true;
                continue;
            }
        }
        match block {
            Block::Heading(level, text) => {
                let h = (*level).clamp(1, 5);
                out.push_str(&format!("<h{h}>{}</h{h}>\n", escape(text)));
            }
            Block::Text(text) => out.push_str(&format!("<p>{}</p>\n", escape(text))),
            Block::Table(t) if t.header.first().is_some_and(|h| h == "environment") => {
                if folded {
                    out.push_str("</details>\n");
                    folded = false;
                }
                out.push_str("<details class=\"secondary\"><summary>environment</summary>\n");
                out.push_str(&table(t));
                out.push_str("</details>\n");
            }
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
    if folded {
        out.push_str("</details>\n");
    }
    if first_table == doc.blocks.len() {
        out.push_str(HEADLINE_SLOT);
        out.push_str(answer);
    }
    out.push_str(more);
    out.push_str("</body></html>\n");
    out
}

const STYLE: &str = "<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;overflow-wrap:anywhere}
div.table{max-width:100%;overflow-x:auto}
img.flame-graph{max-width:100%;height:auto;border:1px solid #ddd}
table{border-collapse:collapse;margin:1em 0}
details.secondary,details.charts-section{margin:1em 0}
summary{cursor:pointer;font-weight:bold;font-size:1.2em}
svg.chart{max-width:100%;height:auto}
th,td{border:1px solid #ccc;padding:.25em .6em}
th{background:#f3f3f3;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.regression{color:#b00020;font-weight:bold}
.improvement{color:#1b7f2a;font-weight:bold}
.inconclusive,.warning{color:#a66b00}
.charts{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
svg.chart{background:#fff;border:1px solid #e2e2e2;font:11px system-ui,sans-serif}
svg .grid{stroke:#ececec}
svg .axis{stroke:#666}
svg .zero{stroke:#333;stroke-width:1.5}
svg .series{fill:none;stroke-width:1.5;stroke-linejoin:round}
svg .whisker{stroke:#777;stroke-width:1.5}
svg .title{font-weight:bold;font-size:12px;fill:#222}
svg .tick,svg .legend,svg .label{fill:#444}
svg .end{text-anchor:end}
svg .mid{text-anchor:middle}
svg .value{font-weight:bold}
.note{color:#666;font-size:.9em}
</style>
";

/// A table in a box of its own width that scrolls sideways inside the page when it must, so
/// the page itself never does.
fn table(t: &Table) -> String {
    let mut out = String::from("<div class=\"table\"><table>\n<tr>");
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
    out.push_str("</table></div>\n");
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

/// Text, never markup (in element text and double-quoted attributes alike); control characters
/// other than line breaks and tabs are shown as `\u{1b}`-style escapes, as on the terminal,
/// since a raw escape sequence is not text.
pub fn escape(s: &str) -> String {
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
        let mut r = crate::sample::sample_result();
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
    fn the_answer_comes_first_and_secondary_figures_are_folded() {
        let mut r = crate::sample::sample_result();
        let mut secondary = r.comparisons[0].clone();
        secondary.measurement = "app.rss.lifetime".into();
        r.comparisons.push(secondary);
        let html = render(&r);
        let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s} in {html}"));
        // Title, headline slot, key figures' chart, then the tables.
        assert!(at("<h1>") < at(HEADLINE_SLOT));
        assert!(at(HEADLINE_SLOT) < at("<h3>Key figures</h3>"));
        assert!(at("<h3>Key figures</h3>") < at("<table>"));
        // The key chart draws only key figures; every measurement is in the folded one.
        let key = &html[at("<h3>Key figures</h3>")..at("<table>")];
        assert!(key.contains("Requests/sec"), "{key}");
        assert!(!key.contains("Lifetime Max Working Set"), "{key}");
        let more = &html[at("<summary>More charts")..];
        assert!(more.contains("Lifetime Max Working Set"), "{more}");
        // Comparisons, environment and the other charts are folded.
        assert!(html.contains("<details class=\"secondary\"><summary>comparison</summary>"));
        assert!(html.contains("<details class=\"secondary\"><summary>environment</summary>"));
        assert!(html.contains("<details class=\"charts-section\"><summary>More charts"));
        assert_eq!(
            html.matches("<details").count(),
            html.matches("</details>").count()
        );
        // Tables scroll inside their box, never the page.
        assert!(html.contains("div.table{max-width:100%;overflow-x:auto}"));
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
                    droppable: Vec::new(),
                }),
            ],
        };
        let html = render_page(&doc, "t", "");
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
