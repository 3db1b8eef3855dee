//! Timelines as sparklines: for each row, what its median iteration did over time (CPU, RSS,
//! the load's requests per second), so a stall, a warm-up or a leak shows in the terminal
//! without opening a chart. One table per scenario, fitted to the report's width.

use super::{format, sparkline, Block, Cell, Table, View};
use rigor_model::measurements::ids;
use rigor_model::result::{Iteration, Row, Series};

/// Columns, borders and padding of the table around the sparkline: 4 columns → 5 borders and
/// 8 spaces.
const TABLE_OVERHEAD: usize = 13;
/// A sparkline narrower than this says nothing; the table overflows instead.
const MIN_WIDTH: usize = 8;

/// The timelines of `rows` (those whose iterations kept a time series), or nothing when charts
/// are off or no iteration kept one.
pub fn blocks(rows: &[&Row], view: &View) -> Vec<Block> {
    if !view.charts {
        return Vec::new();
    }
    let lines: Vec<Line> = rows
        .iter()
        .filter_map(|r| median_iteration(r, view))
        .flat_map(|(label, series)| lines(label, series))
        .collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let width = sparkline_width(&lines, view.width);
    let mut table = Table {
        header: vec![
            "timeline".into(),
            "figure".into(),
            "start → end".into(),
            "min–max".into(),
        ],
        rows: Vec::new(),
        numeric: false,
        droppable: Vec::new(),
    };
    for l in &lines {
        let points = sparkline::resample(&l.values, width);
        table.rows.push(vec![
            Cell::plain(l.label.clone()),
            Cell::plain(l.figure),
            Cell::plain(sparkline::line(&points)),
            Cell::plain(range_text(&l.values)),
        ]);
    }
    vec![Block::Table(table)]
}

/// One sparkline to draw: its share of the row's label, which figure, its values in time order.
struct Line {
    label: String,
    figure: &'static str,
    values: Vec<Option<f64>>,
}

/// The row's kept iteration with a series whose `primary` is the median (the lower of the two
/// middle ones for an even count); without the figure, the middle of them by number. The label's
/// parts name the row, the iteration and how it was chosen.
fn median_iteration<'a>(row: &'a Row, view: &View) -> Option<(Vec<String>, &'a Series)> {
    let with: Vec<&Iteration> = row
        .kept_iterations()
        .filter(|it| it.series.is_some())
        .collect();
    if with.is_empty() {
        return None;
    }
    let by = [
        view.primary.as_deref(),
        view.pivot.as_deref(),
        Some(ids::LOAD_RPS),
    ]
    .into_iter()
    .flatten()
    .find(|id| with.iter().all(|it| it.measurements.contains_key(*id)));
    let (chosen, how) = match by {
        Some(id) => {
            let mut sorted = with.clone();
            sorted.sort_by(|a, b| a.measurements[id].total_cmp(&b.measurements[id]));
            (sorted[(sorted.len() - 1) / 2], format!("median {id}"))
        }
        None => (with[(with.len() - 1) / 2], "middle by number".to_string()),
    };
    let label = vec![row.label(), format!("iteration {}", chosen.number()), how];
    Some((label, chosen.series.as_ref()?))
}

/// CPU, RSS and the load's requests per second, where the series has them; the label's parts
/// go one per line down the first column (the last line takes what is left), so it stays narrow.
fn lines(label: Vec<String>, s: &Series) -> Vec<Line> {
    let mut figures: Vec<(&'static str, Vec<Option<f64>>)> = vec![
        ("CPU (%)", s.cpu.clone()),
        ("RSS (MiB)", s.rss.iter().map(|v| Some(*v)).collect()),
    ];
    if let Some(load) = &s.load {
        figures.push(("Requests/s", load.rps.iter().map(|v| Some(*v)).collect()));
    }
    figures.retain(|(_, v)| v.iter().any(Option::is_some));
    let last = figures.len().saturating_sub(1);
    figures
        .into_iter()
        .enumerate()
        .map(|(i, (figure, values))| Line {
            label: match i.cmp(&last) {
                std::cmp::Ordering::Less => label.get(i).cloned().unwrap_or_default(),
                _ => label
                    .get(i..)
                    .map(|rest| rest.join(" · "))
                    .unwrap_or_default(),
            },
            figure,
            values,
        })
        .collect()
}

/// The characters the sparklines may take: the width left by the other columns, at least
/// [`MIN_WIDTH`].
fn sparkline_width(lines: &[Line], width: usize) -> usize {
    let widest = |f: &dyn Fn(&Line) -> usize| lines.iter().map(f).max().unwrap_or(0);
    let label = widest(&|l| l.label.chars().count()).max("timeline".len());
    let figure = widest(&|l| l.figure.chars().count()).max("figure".len());
    let range = widest(&|l| range_text(&l.values).chars().count()).max("min–max".len());
    width
        .saturating_sub(label + figure + range + TABLE_OVERHEAD)
        .max(MIN_WIDTH)
}

/// `3.1–198`: what `▁` and `█` stand for.
fn range_text(values: &[Option<f64>]) -> String {
    match sparkline::range(values) {
        Some((lo, hi)) => format!("{}–{}", format::number(lo), format::number(hi)),
        None => "—".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{terminal, Document};
    use rigor_analysis::summary::{summarize_row, tests::row_with};
    use rigor_model::result::LoadSeries;

    /// A row of three iterations with load.rps 300, 100, 200; each has a series whose CPU
    /// starts with no reading and whose RSS grows by the iteration's rps / 100.
    fn row() -> Row {
        let mut row = row_with(
            &[("connections", "16")],
            None,
            "load.rps",
            &[300.0, 100.0, 200.0],
        );
        for it in &mut row.iterations {
            let k = it.measurements["load.rps"] / 100.0;
            it.series = Some(Series {
                t_ms: vec![0.0, 250.0, 500.0, 750.0],
                cpu: vec![None, Some(50.0), Some(100.0), Some(25.0)],
                rss: vec![10.0, 10.0 + k, 10.0 + 2.0 * k, 10.0 + 3.0 * k],
                load: Some(LoadSeries {
                    t_ms: vec![0.0, 1000.0],
                    rps: vec![k * 1000.0, k * 1000.0],
                    ..LoadSeries::default()
                }),
                ..Series::default()
            });
        }
        summarize_row(&mut row);
        row
    }

    #[test]
    fn the_median_iteration_s_cpu_rss_and_rps() {
        let r = row();
        let view = View::default();
        let doc = Document {
            blocks: blocks(&[&r], &view),
        };
        let text = terminal::render_document(&doc, false);
        // Median rps 200 is iteration 3: CPU gap, 50, 100, 25 on 25..100; RSS 10, 12, 14, 16;
        // rps flat at 2,000 (a flat series sits mid-height).
        assert_eq!(
            text,
            "\n\
             +-----------------+------------+-------------+-------------+\n\
             | timeline        | figure     | start → end | min–max     |\n\
             +==========================================================+\n\
             | connections=16  | CPU (%)    | ·▃█▁        | 25–100      |\n\
             | iteration 3     | RSS (MiB)  | ▁▃▆█        | 10–16       |\n\
             | median load.rps | Requests/s | ▄▄          | 2,000–2,000 |\n\
             +-----------------+------------+-------------+-------------+\n"
        );
    }

    #[test]
    fn fitted_to_the_width_and_off_without_charts() {
        let mut r = row();
        for it in &mut r.iterations {
            let s = it.series.as_mut().unwrap();
            s.rss = (0..400).map(|i| i as f64).collect();
        }
        let narrow = View {
            width: 80,
            primary: Some("load.rps".into()),
            ..View::default()
        };
        let doc = Document {
            blocks: blocks(&[&r], &narrow),
        };
        let text = terminal::render_document(&doc, false);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= 80, "{widest}\n{text}");
        let rss = text.lines().find(|l| l.contains("RSS")).unwrap();
        assert!(rss.contains("▁▁"), "{rss}");
        assert!(rss.contains("██"), "{rss}");
        let off = View {
            charts: false,
            ..View::default()
        };
        assert!(blocks(&[&r], &off).is_empty());
        // Iterations without a series: no timeline.
        for it in &mut r.iterations {
            it.series = None;
        }
        assert!(blocks(&[&r], &View::default()).is_empty());
    }
}
