//! Per-iteration timelines: for each row, one small chart per figure (CPU, RSS, threads, each
//! runtime metric, the load's responses and p99 latency per second) over the time since the
//! application started, with the measured window shaded.
//!
//! The row's iterations are overlaid rather than reduced to a median iteration: a timeline is
//! there to show what a summary hides (one iteration that stalled, memory that grew in some
//! runs only), and a median iteration would hide exactly that. Iterations that did not count
//! (failed or excluded) are dashed and grey.

use super::axis::{self, labels, ticks};
use super::frame::{Frame, Spec};
use super::{palette, thin};
use rigor_model::declarations::{self, Declarations};
use rigor_model::result::{Iteration, Row, Series};

/// One figure of one iteration: its points (seconds, value) and its measured window.
struct Trace {
    points: Vec<(f64, Option<f64>)>,
    window: Option<[f64; 2]>,
    counted: bool,
}

/// (seconds, value) points of one figure; `None` where it has no value.
type Points = Vec<(f64, Option<f64>)>;

/// The figures a series holds, as (title, y-axis label with unit, points in seconds).
fn figures(s: &Series, decl: &Declarations) -> Vec<(String, String, Points)> {
    let secs = |t: &[f64]| t.iter().map(|ms| ms / 1000.0).collect::<Vec<f64>>();
    let zip = |t: &[f64], v: Vec<Option<f64>>| secs(t).into_iter().zip(v).collect::<Vec<_>>();
    let some = |v: &[f64]| v.iter().map(|x| Some(*x)).collect::<Vec<_>>();
    let mut out = vec![
        ("CPU".into(), "CPU (%)".into(), zip(&s.t_ms, s.cpu.clone())),
        ("RSS".into(), "RSS (MiB)".into(), zip(&s.t_ms, some(&s.rss))),
        (
            "Threads".into(),
            "threads".into(),
            zip(&s.t_ms, some(&s.threads)),
        ),
    ];
    for (id, values) in &s.metrics {
        let label = declarations::label(id, decl);
        out.push((label.clone(), label, zip(&s.metrics_t_ms, values.clone())));
    }
    if let Some(l) = &s.load {
        // Each figure is the whole second's: drawn at its middle, not where it starts.
        let mid: Vec<f64> = l.t_ms.iter().map(|t| t + 500.0).collect();
        let at_mid = |v: Vec<Option<f64>>| zip(&mid, v);
        out.push(("Load".into(), "responses/s".into(), at_mid(some(&l.rps))));
        out.push((
            "Latency p99".into(),
            "p99 latency (ms)".into(),
            at_mid(l.latency_p99.clone()),
        ));
        if l.errors.iter().any(|e| *e > 0.0) {
            out.push((
                "Load errors".into(),
                "errors/s".into(),
                at_mid(some(&l.errors)),
            ));
        }
    }
    out.retain(|(_, _, p)| p.iter().any(|(_, v)| v.is_some()));
    out
}

/// The iterations of `row` that have a series, and which of them are drawn.
pub fn drawn(row: &Row) -> (usize, Vec<&Iteration>) {
    let with: Vec<&Iteration> = row
        .iterations
        .iter()
        .filter(|i| i.series.is_some())
        .collect();
    let picked = thin::pick(with.len(), thin::MAX_ITERATIONS)
        .into_iter()
        .map(|i| with[i])
        .collect();
    (with.len(), picked)
}

/// The timeline charts of one row (empty when no iteration kept a series), in figure order.
pub fn row_charts(row: &Row, decl: &Declarations, colour: &'static str) -> Vec<String> {
    let (_, iterations) = drawn(row);
    let mut by_figure: Vec<(String, String, Vec<Trace>)> = Vec::new();
    for it in iterations {
        let s = it.series.as_ref().expect("drawn iterations have a series");
        for (title, y_label, points) in figures(s, decl) {
            let trace = Trace {
                points: thin::thin(&points, thin::MAX_POINTS),
                window: s.window.map(|[a, b]| [a / 1000.0, b / 1000.0]),
                counted: !it.excluded.is_excluded() && it.error.is_none(),
            };
            match by_figure.iter_mut().find(|(t, _, _)| *t == title) {
                Some((_, _, traces)) => traces.push(trace),
                None => by_figure.push((title, y_label, vec![trace])),
            }
        }
    }
    by_figure
        .iter()
        .map(|(title, y_label, traces)| chart(title, y_label, traces, colour))
        .collect()
}

fn chart(title: &str, y_label: &str, traces: &[Trace], colour: &'static str) -> String {
    let all = || traces.iter().flat_map(|t| t.points.iter());
    let x_max = all()
        .map(|p| p.0)
        .chain(traces.iter().filter_map(|t| t.window.map(|w| w[1])))
        .fold(0.0f64, f64::max);
    let (x_ticks, _, x_hi) = ticks(0.0, x_max.max(0.001), 5);
    let r = axis::range(all().filter_map(|p| p.1), false);
    let (y_ticks, y_lo, y_hi) = ticks(r.lo, r.hi, 4);
    let mut f = Frame::new(&Spec {
        kind: "timeline",
        title,
        width: 300.0,
        height: 170.0,
        x: (0.0, x_hi),
        x_ticks: labels(&x_ticks),
        x_label: "time since start (s)",
        y: (y_lo, y_hi),
        y_ticks: labels(&y_ticks),
        y_label,
        legend: Vec::new(),
    });
    for w in traces.iter().filter_map(|t| t.window) {
        f.shade_x(w[0], w[1], palette::WINDOW, 0.08);
    }
    for t in traces {
        let (c, dashed) = if t.counted {
            (colour, false)
        } else {
            (palette::MUTED, true)
        };
        f.line(&t.points, c, 0.7, dashed);
    }
    f.finish()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use rigor_model::result::LoadSeries;

    /// A series of `n` samples every 100 ms: CPU 50%, RSS growing, one metric, a load.
    pub fn series(n: usize) -> Series {
        let t: Vec<f64> = (0..n).map(|i| i as f64 * 100.0).collect();
        Series {
            t_ms: t.clone(),
            window: Some([200.0, n as f64 * 100.0 - 100.0]),
            cpu: (0..n).map(|i| (i > 0).then_some(50.0)).collect(),
            rss: (0..n).map(|i| 10.0 + i as f64).collect(),
            threads: vec![4.0; n],
            // A runtime metric: its id is named by the scrape, so it is not in the catalogue.
            metrics: [(
                format!("app.metric.{}.rate", "alloc_bytes"),
                vec![Some(1e6); n],
            )]
            .into(),
            metrics_t_ms: t,
            thinned_from: None,
            load: Some(LoadSeries {
                t_ms: vec![1000.0, 2000.0],
                rps: vec![1e5, 1.2e5],
                errors: vec![0.0, 0.0],
                latency_mean: vec![Some(1.0), None],
                latency_p99: vec![Some(3.0), None],
            }),
        }
    }

    #[test]
    fn one_chart_per_figure_with_the_window_shaded() {
        let mut row = crate::sample::sample_result().rows.remove(0);
        for it in &mut row.iterations {
            it.series = Some(series(30));
        }
        row.iterations[1].excluded = rigor_model::result::Exclusion::Order;
        let charts = row_charts(&row, &Declarations::default(), palette::series(0));
        // CPU, RSS, threads, the metric, load, p99 (no errors: not drawn).
        assert_eq!(charts.len(), 6, "{charts:#?}");
        let cpu = &charts[0];
        assert!(cpu.contains(">CPU (%)</text>"));
        assert!(cpu.contains(&format!("fill=\"{}\"", palette::WINDOW)));
        assert!(
            cpu.contains("stroke-dasharray"),
            "excluded iteration dashed"
        );
        // A lone p99 second (the next had no response) is a dot, not lost.
        assert!(charts[5].contains("<circle"), "{}", charts[5]);
        // 1M/s reads as 1M.
        assert!(charts[3].contains(">1.00M</text>"), "{}", charts[3]);
    }

    #[test]
    fn rows_without_series_draw_nothing() {
        let row = crate::sample::sample_result().rows.remove(0);
        assert!(row_charts(&row, &Declarations::default(), "#000").is_empty());
    }
}
