//! `rigor history --html F`: one self-contained page, a chart per series (the run medians over
//! time, each change point marked with its step), drawn as inline SVG with every user string
//! escaped, so the file opens anywhere without network or script.

use super::chart::svg::Svg;
use super::format::{number, p_value, signed_pct};
use super::html::escape;
use rigor_model::history::HistorySeries;

const W: f64 = 760.0;
const H: f64 = 240.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 34.0;
const LINE: &str = "#1f6feb";
const MARK: &str = "#b00020";

const STYLE: &str = "<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em}\
svg .series{fill:none;stroke-width:1.5}svg .axis{stroke:#999}\
svg .change{stroke:#b00020;stroke-dasharray:5 3;stroke-width:1.5}\
svg text{font:11px system-ui,sans-serif;fill:#444}svg .end{text-anchor:end}\
svg .mark{fill:#b00020;font-weight:bold}p.cp{margin:.2em 0;color:#b00020}</style>\n";

/// The page of `series` read from the store `store`.
pub fn render(series: &[HistorySeries], store: &str) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>rigor history</title>\n",
    );
    out.push_str(STYLE);
    out.push_str("</head><body>\n");
    out.push_str(&format!(
        "<h1>rigor history</h1>\n<p>{} series from {}</p>\n",
        series.len(),
        escape(store)
    ));
    for s in series {
        out.push_str(&section(s));
    }
    out.push_str("</body></html>\n");
    out
}

/// One series: heading, chart, and its change points in words.
fn section(s: &HistorySeries) -> String {
    let mut out = format!(
        "<section class=\"series\"><h2>{} · {}{}</h2>\n",
        escape(&s.label()),
        escape(&s.measurement),
        if s.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", escape(&s.unit))
        }
    );
    out.push_str(&chart(s));
    out.push('\n');
    if s.change_points.is_empty() {
        out.push_str("<p>No change point.</p>\n");
    }
    for c in &s.change_points {
        out.push_str(&format!(
            "<p class=\"cp\">Change at run {} ({}{}): {} → {} ({}, p = {})</p>\n",
            c.run,
            escape(&c.started_at),
            c.commit
                .as_deref()
                .map(|h| format!(", commit {}", escape(h)))
                .unwrap_or_default(),
            number(c.before),
            number(c.after),
            signed_pct(c.change_pct),
            p_value(c.p_value)
        ));
    }
    out.push_str("</section>\n");
    out
}

/// The chart: medians by run (evenly spaced, in start order), a dashed line before each
/// change point's first run with its % change.
fn chart(s: &HistorySeries) -> String {
    let medians: Vec<f64> = s.points.iter().map(|p| p.median).collect();
    let (lo, hi) = medians
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    let pad = if hi > lo {
        (hi - lo) * 0.08
    } else {
        lo.abs().max(1.0) * 0.05
    };
    let (lo, hi) = (lo - pad, hi + pad);
    let n = medians.len().max(1);
    let x = |i: f64| {
        if n == 1 {
            LEFT + (W - LEFT - RIGHT) / 2.0
        } else {
            LEFT + i * (W - LEFT - RIGHT) / (n - 1) as f64
        }
    };
    let y = |v: f64| TOP + (hi - v) / (hi - lo) * (H - TOP - BOTTOM);
    let mut svg = Svg::new(
        "history",
        W,
        H,
        &format!(
            "{} {} over {} runs",
            s.label(),
            s.measurement,
            medians.len()
        ),
    );
    svg.line((LEFT, TOP), (LEFT, H - BOTTOM), "axis");
    svg.line((LEFT, H - BOTTOM), (W - RIGHT, H - BOTTOM), "axis");
    svg.text(
        (LEFT - 6.0, y(hi - pad) + 4.0),
        "end",
        "",
        &number(hi - pad),
    );
    svg.text(
        (LEFT - 6.0, y(lo + pad) + 4.0),
        "end",
        "",
        &number(lo + pad),
    );
    if let (Some(first), Some(last)) = (s.points.first(), s.points.last()) {
        svg.text((LEFT, H - 12.0), "", "", &first.started_at);
        svg.text((W - RIGHT, H - 12.0), "end", "", &last.started_at);
    }
    for c in &s.change_points {
        let at = x(c.index as f64 - 0.5);
        svg.line((at, TOP), (at, H - BOTTOM), "change");
        svg.text(
            (at + 4.0, TOP + 10.0),
            "mark",
            "",
            &signed_pct(c.change_pct),
        );
    }
    let pts: Vec<(f64, f64)> = medians
        .iter()
        .enumerate()
        .map(|(i, v)| (x(i as f64), y(*v)))
        .collect();
    svg.polyline(&pts, LINE, 1.0, false);
    let marked: Vec<usize> = s.change_points.iter().map(|c| c.index).collect();
    for (i, p) in s.points.iter().enumerate() {
        let tip = format!(
            "run {} · {}{} · median {} (n = {})",
            p.run,
            p.started_at,
            p.commit
                .as_deref()
                .map(|c| format!(" · {c}"))
                .unwrap_or_default(),
            number(p.median),
            p.n
        );
        let colour = if marked.contains(&i) { MARK } else { LINE };
        svg.dot(pts[i], 2.5, colour, Some(&tip));
    }
    svg.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigor_model::history::{Change, Point};

    #[test]
    fn a_page_marks_each_change_and_escapes_every_name() {
        let points: Vec<Point> = (0..6)
            .map(|i| Point {
                run: i + 1,
                started_at: format!("2026-11-0{}T00:00:00Z", i + 1),
                commit: Some("<b>c</b>".into()),
                dirty: Some(false),
                median: if i < 3 { 100.0 } else { 110.0 },
                n: 3,
            })
            .collect();
        let s = HistorySeries {
            scenario: "<script>alert(1)</script>".into(),
            variables: [("k".to_string(), "\"v\"".to_string())].into(),
            variant: Some("<img src=x>".into()),
            measurement: "load.rps".into(),
            unit: "req/s".into(),
            change_points: vec![Change {
                index: 3,
                run: 4,
                started_at: points[3].started_at.clone(),
                commit: points[3].commit.clone(),
                before: 100.0,
                after: 110.0,
                change_pct: 10.0,
                p_value: 0.005,
            }],
            points,
        };
        let page = render(&[s], "<store>");
        for raw in ["<script", "<img", "<b>c", "<store>"] {
            assert!(!page.contains(raw), "{raw} in {page}");
        }
        assert_eq!(page.matches("class=\"change\"").count(), 1, "{page}");
        assert!(page.contains(">+10.0%</text>"), "{page}");
        assert_eq!(page.matches("<circle").count(), 6);
    }
}
