//! The capacity chart of a `find_rate` search: p99 latency against the offered rate, a dot
//! per probe (filled where the objective was met, red where it was missed), the objective's
//! p99 limit as a dashed line and the knee — between the highest rate met and the lowest
//! missed — shaded, for the row's median iteration by `load.capacity`.

use super::axis::{labels, ticks};
use super::frame::{Frame, Spec};
use super::palette;
use rigor_load::capacity::{Capacity, Figure, Objective};
use rigor_model::result::{Iteration, Row, Verdict};

/// How far above the objective's limit the y axis reaches; slower probes sit on its top edge.
const HEADROOM: f64 = 4.0;

/// The search of the iteration of `row` whose capacity is the median among counted ones.
pub fn median_search(row: &Row) -> Option<&Capacity> {
    let mut with: Vec<(&Iteration, f64)> = row
        .kept_iterations()
        .filter_map(|it| Some((it, it.capacity.as_ref()?.capacity_rps?)))
        .collect();
    if with.is_empty() {
        return None;
    }
    with.sort_by(|a, b| a.1.total_cmp(&b.1));
    with[(with.len() - 1) / 2].0.capacity.as_ref()
}

/// One chart of `c`'s probes, in `colour`; `None` without probes.
pub fn chart(title: &str, c: &Capacity, colour: &'static str) -> Option<String> {
    if c.probes.is_empty() {
        return None;
    }
    let limit = c.objective.parse::<Objective>().ok().and_then(|o| {
        o.bounds
            .iter()
            .find(|b| b.figure == Figure::P99)
            .map(|b| b.limit)
    });
    let x_max = c.probes.iter().map(|p| p.rate).fold(0.0, f64::max);
    let p99_max = c.probes.iter().map(|p| p.window.p99_ms).fold(0.0, f64::max);
    let top = match limit {
        Some(l) => p99_max.min(l * HEADROOM).max(l * 1.2),
        None => p99_max,
    }
    .max(1e-3);
    let (x_ticks, x_lo, x_hi) = ticks(0.0, x_max, 6);
    let (y_ticks, y_lo, y_hi) = ticks(0.0, top, 5);
    let missed = palette::verdict(Verdict::Regression);
    let mut f = Frame::new(&Spec {
        kind: "capacity",
        title,
        width: 560.0,
        height: 260.0,
        x: (x_lo, x_hi),
        x_ticks: labels(&x_ticks),
        x_label: "offered rate (requests/s)",
        y: (y_lo, y_hi),
        y_ticks: labels(&y_ticks),
        y_label: "p99 latency (ms)",
        legend: vec![("objective met".into(), colour), ("missed".into(), missed)],
    });
    if let Some(low) = c.low {
        let high = c.high.unwrap_or(low);
        f.shade_x(
            low,
            high.max(low + (x_hi - x_lo) / 200.0),
            palette::WINDOW,
            0.25,
        );
        let x = f.x.at(low);
        f.svg
            .polyline(&[(x, f.y.px0), (x, f.y.px1)], colour, 0.8, true);
        f.svg.text(
            (x + 4.0, f.y.px1 + 12.0),
            "legend",
            "",
            &format!("capacity {} req/s", crate::format::number(low)),
        );
    }
    if let Some(l) = limit {
        let y = f.y.at(l);
        f.svg
            .polyline(&[(f.x.px0, y), (f.x.px1, y)], missed, 0.6, true);
    }
    let mut probes = c.probes.clone();
    probes.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let line: Vec<(f64, Option<f64>)> = probes
        .iter()
        .map(|p| (p.rate, Some(p.window.p99_ms.min(y_hi))))
        .collect();
    f.line(&line, colour, 0.4, false);
    for p in &probes {
        let tip = format!(
            "{} req/s: p99 {} ms, errors {}% — {}",
            crate::format::number(p.rate),
            crate::format::number(p.window.p99_ms),
            crate::format::number(p.error_rate * 100.0),
            if p.met { "met" } else { "missed" }
        );
        let at = (f.x.at(p.rate), f.y.at(p.window.p99_ms.min(y_hi)));
        f.svg
            .dot(at, 3.0, if p.met { colour } else { missed }, Some(&tip));
    }
    Some(f.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigor_load::capacity::{Outcome, ProbeRow, Window};

    fn probe(rate: f64, p99: f64) -> ProbeRow {
        ProbeRow {
            rate,
            window: Window {
                p99_ms: p99,
                answered: 10,
                due: 10,
                ..Window::default()
            },
            error_rate: 0.0,
            met: p99 < 50.0,
        }
    }

    #[test]
    fn probes_are_dots_coloured_by_verdict_with_the_knee_shaded() {
        let c = Capacity {
            objective: "p99<50ms".into(),
            capacity_rps: Some(400.0),
            low: Some(400.0),
            high: Some(420.0),
            outcome: Outcome::Settled,
            precision: 0.05,
            probe_secs: 3.0,
            warmup_secs: 1.0,
            probes: vec![
                probe(100.0, 5.0),
                probe(400.0, 20.0),
                probe(800.0, 2000.0),
                probe(420.0, 90.0),
            ],
        };
        let svg = chart("Capacity · s", &c, "#0072b2").unwrap();
        assert!(svg.contains("chart-capacity"));
        assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
        assert!(svg.contains("capacity 400 req/s"));
        assert!(
            svg.contains("800 req/s: p99 2"),
            "the slow probe's own figure in its tip"
        );
        assert!(svg.contains(">offered rate (requests/s)</text>"));
        assert!(chart(
            "t",
            &Capacity {
                probes: vec![],
                ..c
            },
            "#000"
        )
        .is_none());
    }
}
