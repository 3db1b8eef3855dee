//! Sweep charts: a measurement against the swept variable (msgs/s against clients), one line
//! per variant through the medians with its min–max band, from the same pivot tables the
//! terminal and Markdown show.

use super::axis::{self, labels, ticks};
use super::frame::{Frame, Spec};
use crate::format::number;
use crate::pivot::Pivot;

/// Values on the x axis labelled at most, so labels do not overlap.
const MAX_X_LABELS: usize = 12;

/// Whether numeric swept values are unevenly spaced, which the evenly spaced axis must say.
fn uneven(values: &[String]) -> bool {
    let Some(v) = values
        .iter()
        .map(|s| s.parse::<f64>().ok())
        .collect::<Option<Vec<f64>>>()
    else {
        return false;
    };
    let steps: Vec<f64> = v.windows(2).map(|w| w[1] - w[0]).collect();
    steps
        .iter()
        .any(|s| (s - steps[0]).abs() > 1e-9 * steps[0].abs().max(1.0))
}

/// The chart of one pivot table; `colour_of` gives each variant its page-wide colour and
/// `name_of` its legend name.
pub fn chart(
    p: &Pivot,
    colour_of: impl Fn(&Option<String>) -> &'static str,
    name_of: impl Fn(&Option<String>) -> String,
) -> String {
    let values: Vec<String> = p.rows.iter().map(|r| r.value.clone()).collect();
    let cells = || p.rows.iter().flat_map(|r| r.cells.iter().flatten());
    let r = axis::range(cells().flat_map(|c| [c.min, c.max, c.median]), true);
    let (y_ticks, y_lo, y_hi) = if r.note.is_some() {
        let (t, _, _) = ticks(r.lo, r.hi, 4);
        let inside: Vec<f64> = t.into_iter().filter(|v| *v >= r.lo && *v <= r.hi).collect();
        (inside, r.lo, r.hi)
    } else {
        ticks(r.lo, r.hi, 5)
    };
    let y_label = match r.note {
        Some(note) => format!("{} — {note}", p.label),
        None => p.label.clone(),
    };
    let x_label = if uneven(&values) {
        format!("{} (values evenly spaced)", p.swept)
    } else {
        p.swept.clone()
    };
    let every = values.len().div_ceil(MAX_X_LABELS).max(1);
    let x_ticks = values
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0)
        .map(|(i, v)| (i as f64, super::frame::cut(v, 10)))
        .collect();
    let fixed: Vec<String> = p.fixed.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let title = if fixed.is_empty() {
        format!("{} by {}", p.label, p.swept)
    } else {
        format!("{} by {} · {}", p.label, p.swept, fixed.join(" "))
    };
    let mut f = Frame::new(&Spec {
        kind: "sweep",
        title: &title,
        width: 560.0,
        height: 280.0,
        x: (-0.5, values.len() as f64 - 0.5),
        x_ticks,
        x_label: &x_label,
        y: (y_lo, y_hi),
        y_ticks: labels(&y_ticks),
        y_label: &y_label,
        legend: p
            .columns
            .iter()
            .map(|c| (name_of(c), colour_of(c)))
            .collect(),
    });
    for (col, variant) in p.columns.iter().enumerate() {
        let colour = colour_of(variant);
        let cell = |i: usize| p.rows[i].cells[col].as_ref();
        let band: Vec<_> = (0..p.rows.len())
            .map(|i| (i as f64, cell(i).map(|c| (c.min, c.max))))
            .collect();
        f.band(&band, colour, 0.18);
        let line: Vec<_> = (0..p.rows.len())
            .map(|i| (i as f64, cell(i).map(|c| c.median)))
            .collect();
        f.line(&line, colour, 0.95, false);
        for (i, c) in (0..p.rows.len()).filter_map(|i| cell(i).map(|c| (i, c))) {
            let change = c
                .change_pct
                .map(|x| format!(", {}", crate::format::signed_pct(x)))
                .unwrap_or_default();
            let verdict = c
                .verdict
                .map(|v| format!(" {}", v.as_str()))
                .unwrap_or_default();
            let tip = format!(
                "{} {}={}: median {} (min {}, max {}, n={}){change}{verdict}",
                name_of(variant),
                p.swept,
                p.rows[i].value,
                number(c.median),
                number(c.min),
                number(c.max),
                c.n
            );
            f.svg.dot(
                (f.x.at(i as f64), f.y.at(c.median)),
                3.0,
                colour,
                Some(&tip),
            );
        }
    }
    f.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pivot::{PivotCell, PivotRow};

    fn cell(m: f64) -> Option<PivotCell> {
        Some(PivotCell {
            median: m,
            min: m * 0.9,
            max: m * 1.1,
            n: 3,
            cv: 0.05,
            change_pct: None,
            verdict: None,
        })
    }

    fn pivot() -> Pivot {
        Pivot {
            measurement: "cmd.mps".into(),
            label: "cmd.mps (msgs/s)".into(),
            swept: "clients".into(),
            fixed: [("gc".to_string(), "server".to_string())].into(),
            columns: vec![
                Some("net8".into()),
                Some("<script>alert(1)</script>".into()),
            ],
            rows: [1.0, 5.0, 10.0]
                .iter()
                .map(|c| PivotRow {
                    value: c.to_string(),
                    cells: vec![cell(c * 1e6), if *c == 5.0 { None } else { cell(c * 8e5) }],
                })
                .collect(),
        }
    }

    #[test]
    fn a_line_and_band_per_variant_gaps_where_a_cell_is_missing() {
        let colours = ["#111111", "#222222"];
        let p = pivot();
        let svg = chart(
            &p,
            |c| colours[p.columns.iter().position(|x| x == c).unwrap()],
            |c| c.clone().unwrap_or_default(),
        );
        assert!(svg.contains("chart-sweep"));
        // The first variant: one line, one band; the second has a gap at 5: two lone points.
        assert_eq!(svg.matches("stroke=\"#111111\"").count(), 1, "{svg}");
        assert_eq!(
            svg.matches("fill=\"#111111\" fill-opacity=\"0.18\"")
                .count(),
            1
        );
        assert_eq!(svg.matches("class=\"whisker\"").count(), 2, "{svg}");
        assert!(svg.contains(">clients (values evenly spaced)</text>"));
        assert!(
            svg.contains(">10M</text>") || svg.contains(">10.0M</text>"),
            "{svg}"
        );
        assert!(!svg.contains("<script"));
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(svg.contains("by clients · gc=server"));
    }

    #[test]
    fn a_flat_sweep_zooms_and_says_so() {
        let mut p = pivot();
        for r in &mut p.rows {
            for c in r.cells.iter_mut().flatten() {
                (c.median, c.min, c.max) = (1000.0, 999.0, 1001.0);
            }
        }
        let svg = chart(&p, |_| "#000", |_| "x".into());
        assert!(svg.contains("axis not from 0"), "{svg}");
    }
}
