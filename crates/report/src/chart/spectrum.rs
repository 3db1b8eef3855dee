//! The latency percentile spectrum: latency (ms) against percentile on the "nines" axis, one
//! line per variant, for each row group (the rows that differ only by variant). Each line is
//! the row's median iteration by p99, a real distribution rather than a blend of several.

use super::axis::{self, labels, nines, nines_ticks, ticks};
use super::frame::{Frame, Spec};
use rigor_model::result::{Iteration, Row};

/// (percentile, ms) pairs, as the load report keeps them.
pub type Spectrum = Vec<(f64, f64)>;

/// One line of a spectrum chart: its legend name, its colour, its spectrum.
pub type Line = (String, &'static str, Spectrum);

/// The (percentile, ms) pairs of an iteration's load report (`latency.percentiles`).
pub fn percentiles(it: &Iteration) -> Option<Spectrum> {
    let pairs = it
        .load
        .as_ref()?
        .get("latency")?
        .get("percentiles")?
        .as_array()?;
    let out: Vec<(f64, f64)> = pairs
        .iter()
        .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
        .collect();
    (!out.is_empty()).then_some(out)
}

/// The iteration of `row` whose p99 is the median among the counted ones with a spectrum.
pub fn median_iteration(row: &Row) -> Option<(&Iteration, Spectrum)> {
    let mut with: Vec<(&Iteration, Spectrum, f64)> = row
        .kept_iterations()
        .filter_map(|it| {
            let p = percentiles(it)?;
            let p99 = p
                .iter()
                .find(|(q, _)| (*q - 99.0).abs() < 1e-9)
                .map(|x| x.1)
                .unwrap_or(f64::NAN);
            Some((it, p, p99))
        })
        .collect();
    if with.is_empty() {
        return None;
    }
    with.sort_by(|a, b| a.2.total_cmp(&b.2));
    let (it, p, _) = with.swap_remove((with.len() - 1) / 2);
    Some((it, p))
}

/// One spectrum chart: `lines` are (name, colour, spectrum); empty when none has one.
pub fn chart(title: &str, lines: &[Line]) -> Option<String> {
    let points: Vec<Vec<(f64, Option<f64>)>> = lines
        .iter()
        .map(|(_, _, s)| {
            s.iter()
                .filter_map(|(p, ms)| nines(*p).map(|x| (x, Some(*ms))))
                .collect()
        })
        .collect();
    let all = || points.iter().flatten();
    let x_max = all().map(|p| p.0).fold(0.0f64, f64::max);
    if x_max <= 0.0 {
        return None;
    }
    let r = axis::range(all().filter_map(|p| p.1), false);
    let (y_ticks, y_lo, y_hi) = ticks(r.lo, r.hi, 5);
    let mut f = Frame::new(&Spec {
        kind: "spectrum",
        title,
        width: 560.0,
        height: 260.0,
        x: (0.0, x_max.ceil()),
        x_ticks: nines_ticks(x_max.ceil()),
        x_label: "percentile (nines scale: 90, 99, 99.9… evenly spaced)",
        y: (y_lo, y_hi),
        y_ticks: labels(&y_ticks),
        y_label: "latency (ms)",
        legend: lines.iter().map(|(n, c, _)| (n.clone(), *c)).collect(),
    });
    for ((name, colour, _), pts) in lines.iter().zip(&points) {
        f.line(pts, colour, 0.9, false);
        for (x, y) in pts.iter().filter_map(|(x, y)| y.map(|y| (*x, y))) {
            let p = 100.0 * (1.0 - 10f64.powf(-x));
            let tip = format!(
                "{name}: p{} = {} ms",
                crate::format::number(p),
                crate::format::number(y)
            );
            f.svg.dot((f.x.at(x), f.y.at(y)), 2.0, colour, Some(&tip));
        }
    }
    Some(f.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_spectrum(it: &mut Iteration, scale: f64) {
        let pairs: Vec<(f64, f64)> = [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0]
            .iter()
            .map(|p| (*p, scale * (1.0 + p / 10.0)))
            .collect();
        it.load = Some(serde_json::json!({ "latency": { "percentiles": pairs } }));
    }

    #[test]
    fn the_median_iteration_by_p99_is_drawn_on_a_nines_axis() {
        let mut row = crate::sample::sample_result().rows.remove(0);
        for (it, scale) in row.iterations.iter_mut().zip([3.0, 1.0, 2.0]) {
            with_spectrum(it, scale);
        }
        let (it, p) = median_iteration(&row).unwrap();
        assert_eq!(it.index, 2);
        assert_eq!(p[3], (99.0, 2.0 * 10.9));
        let svg = chart("t", &[("base".into(), "#0072b2", p)]).unwrap();
        assert!(svg.contains("chart-spectrum"));
        assert!(svg.contains(">99.999%</text>"), "{svg}");
        assert!(svg.contains(">latency (ms)</text>"));
        // 0 … 99.999: seven points (the maximum, at infinity, is left out).
        assert_eq!(svg.matches("<circle").count(), 7, "{svg}");
        assert!(chart("t", &[("x".into(), "#000", vec![(100.0, 1.0)])]).is_none());
    }
}
