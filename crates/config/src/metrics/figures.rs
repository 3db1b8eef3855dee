//! From timed scrapes to figures: a counter's rate over the measured window (its increase
//! between the scrapes at the window's edges over the time between them), a gauge's highest
//! value in the window, and both scrape by scrape for the time series.

use crate::metrics::MetricsError;

use super::reading::{Flavor, NonFinite, Reading};
use std::collections::{BTreeMap, BTreeSet};

/// Most ids one iteration records: a runtime exports hundreds of families, and a table of
/// hundreds of rows is read by nobody (`metrics_select` names the ones wanted).
pub const MAX_IDS: usize = 200;

/// One successful scrape: when (ms since the application was spawned) and what it read.
#[derive(Debug, Clone, PartialEq)]
pub struct Scrape {
    pub t_ms: f64,
    pub reading: Reading,
    /// NaN or ±Inf samples the reading left out, by stem.
    pub non_finite: NonFinite,
}

/// The measurement id of a stem: `app.metric.x_total.rate` (per second) for a counter,
/// `app.metric.x` for a gauge.
pub fn id(stem: &str, flavor: Flavor) -> String {
    match flavor {
        Flavor::Counter => format!("app.metric.{stem}.rate"),
        Flavor::Gauge => format!("app.metric.{stem}"),
    }
}

/// What the window's scrapes give.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Figures {
    pub measurements: BTreeMap<String, f64>,
    /// Said as warnings: counter resets, ids past [`MAX_IDS`].
    pub problems: Vec<String>,
    /// The stems kept, with their flavor (the series use the same).
    pub kept: BTreeMap<String, Flavor>,
}

/// The figures of the window from `scrapes[start]` to `scrapes[end]` (time order). A counter
/// that dropped inside the window was reset (the application restarted it): it gets no figure,
/// and a problem says so.
pub fn window(scrapes: &[Scrape], start: usize, end: usize) -> Figures {
    let mut out = Figures::default();
    let (first, last) = (&scrapes[start], &scrapes[end]);
    let secs = (last.t_ms - first.t_ms) / 1e3;
    let stems: BTreeSet<&String> = first.reading.keys().chain(last.reading.keys()).collect();
    if stems.len() > MAX_IDS {
        out.problems.push(format!(
            "the metrics endpoint exports {} counters and gauges; only the first {MAX_IDS} by \
             name are recorded (name the ones wanted in `metrics_select`)",
            stems.len()
        ));
    }
    for stem in stems.into_iter().take(MAX_IDS) {
        let Some(&(flavor, _)) = first.reading.get(stem).or(last.reading.get(stem)) else {
            continue;
        };
        out.kept.insert(stem.clone(), flavor);
        let inside: Vec<f64> = scrapes[start..=end]
            .iter()
            .filter_map(|s| s.reading.get(stem).map(|r| r.1))
            .collect();
        let value = match flavor {
            Flavor::Gauge => inside.iter().copied().reduce(f64::max),
            Flavor::Counter => counter_rate(
                stem,
                first.reading.get(stem),
                last.reading.get(stem),
                &inside,
                secs,
            )
            .map_err(|p| out.problems.push(p.to_string()))
            .ok()
            .flatten(),
        };
        if let Some(v) = value.filter(|v| v.is_finite()) {
            out.measurements.insert(id(stem, flavor), v);
        }
    }
    out
}

/// A counter's increase over the window per second; `Ok(None)` when an edge scrape lacks it,
/// `Err` when it dropped (a reset).
fn counter_rate(
    stem: &str,
    first: Option<&(Flavor, f64)>,
    last: Option<&(Flavor, f64)>,
    inside: &[f64],
    secs: f64,
) -> Result<Option<f64>, MetricsError> {
    if let Some(w) = inside.windows(2).find(|w| w[1] < w[0]) {
        return Err(format!(
            "the counter `{stem}` dropped from {} to {} during the window (reset): no `{}`",
            w[0],
            w[1],
            id(stem, Flavor::Counter)
        )
        .into());
    }
    let (Some(a), Some(b)) = (first, last) else {
        return Ok(None);
    };
    Ok((secs > 0.0).then(|| (b.1 - a.1) / secs))
}

/// Every scrape's values of the kept stems by id, aligned with the scrapes: a counter's rate
/// since the previous scrape (`None` first, after a gap or a reset), a gauge as read.
pub fn series(
    scrapes: &[Scrape],
    kept: &BTreeMap<String, Flavor>,
) -> BTreeMap<String, Vec<Option<f64>>> {
    let mut out = BTreeMap::new();
    for (stem, &flavor) in kept {
        let values = scrapes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let now = s.reading.get(stem)?.1;
                match flavor {
                    Flavor::Gauge => Some(now),
                    Flavor::Counter => {
                        let prev = scrapes.get(i.checked_sub(1)?)?;
                        let before = prev.reading.get(stem)?.1;
                        let secs = (s.t_ms - prev.t_ms) / 1e3;
                        (now >= before && secs > 0.0).then(|| (now - before) / secs)
                    }
                }
            })
            .map(|v| v.filter(|v| v.is_finite()))
            .collect();
        out.insert(id(stem, flavor), values);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrape(t_ms: f64, values: &[(&str, Flavor, f64)]) -> Scrape {
        Scrape {
            t_ms,
            reading: values
                .iter()
                .map(|(k, f, v)| (k.to_string(), (*f, *v)))
                .collect(),
            non_finite: NonFinite::new(),
        }
    }

    use Flavor::{Counter as C, Gauge as G};

    #[test]
    fn rates_over_the_edges_and_gauge_maxima_inside() {
        let s = vec![
            scrape(0.0, &[("req_total", C, 0.0), ("conns", G, 99.0)]),
            scrape(1000.0, &[("req_total", C, 100.0), ("conns", G, 2.0)]),
            scrape(1500.0, &[("req_total", C, 400.0), ("conns", G, 9.0)]),
            scrape(3000.0, &[("req_total", C, 1100.0), ("conns", G, 4.0)]),
            scrape(3100.0, &[("req_total", C, 1100.0), ("conns", G, 50.0)]),
        ];
        let f = window(&s, 1, 3);
        // (1100 - 100) over 2 s; the gauge's 99 and 50 are outside the window.
        assert_eq!(f.measurements[&id("req_total", C)], 500.0);
        assert_eq!(f.measurements[&id("conns", G)], 9.0);
        assert!(f.problems.is_empty());
        let series = series(&s, &f.kept);
        assert_eq!(
            series[&id("req_total", C)],
            vec![None, Some(100.0), Some(600.0), Some(700.0 / 1.5), Some(0.0)]
        );
        assert_eq!(
            series[&id("conns", G)],
            vec![Some(99.0), Some(2.0), Some(9.0), Some(4.0), Some(50.0)]
        );
    }

    #[test]
    fn a_reset_counter_gets_no_figure_and_a_problem() {
        let s = vec![
            scrape(0.0, &[("req_total", C, 500.0), ("ok_total", C, 1.0)]),
            scrape(500.0, &[("req_total", C, 20.0), ("ok_total", C, 2.0)]),
            scrape(1000.0, &[("req_total", C, 900.0), ("ok_total", C, 3.0)]),
        ];
        let f = window(&s, 0, 2);
        assert!(!f.measurements.contains_key(&id("req_total", C)));
        assert_eq!(f.measurements[&id("ok_total", C)], 2.0);
        assert_eq!(f.problems.len(), 1);
        assert!(
            f.problems[0].contains("`req_total` dropped from 500 to 20"),
            "{:?}",
            f.problems
        );
        assert_eq!(series(&s, &f.kept)[&id("req_total", C)][1], None);
    }

    #[test]
    fn at_most_max_ids_are_kept() {
        let many: Vec<(String, Flavor, f64)> = (0..250)
            .map(|i| (format!("g{i:03}"), G, i as f64))
            .collect();
        let refs: Vec<(&str, Flavor, f64)> =
            many.iter().map(|(k, f, v)| (k.as_str(), *f, *v)).collect();
        let s = vec![scrape(0.0, &refs), scrape(1000.0, &refs)];
        let f = window(&s, 0, 1);
        assert_eq!(f.measurements.len(), MAX_IDS);
        assert!(f.measurements.contains_key(&id("g199", G)));
        assert!(!f.measurements.contains_key(&id("g200", G)));
        assert!(f.problems[0].contains("250 counters and gauges"));
    }

    #[test]
    fn a_counter_missing_at_an_edge_has_no_rate() {
        let s = vec![scrape(0.0, &[]), scrape(1000.0, &[("late_total", C, 5.0)])];
        let f = window(&s, 0, 1);
        assert!(f.measurements.is_empty(), "{f:?}");
    }
}
