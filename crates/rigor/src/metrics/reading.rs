//! One scrape reduced to the numbers rigor keeps: each counter and gauge summed over its series
//! (or over the series an entry of `metrics_select` picks), under the stem of its id.

use super::parse::{Family, Kind};
use crate::config::metrics_select::Selector;
use std::collections::BTreeMap;

/// How a kept number becomes a figure: a counter's rate over the window, a gauge's highest
/// value in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Counter,
    Gauge,
}

/// The numbers of one scrape by stem (`http_requests_total`, `x_total{code="200"}`).
pub type Reading = BTreeMap<String, (Flavor, f64)>;

/// The sample names of a family rigor reads, and how: a counter's own samples (`x_total` in
/// OpenMetrics, never its `_created`), a gauge's (untyped ones are read as gauges, as Prometheus
/// does), a histogram's or summary's `_count` and `_sum` as counters (buckets and quantiles
/// have no single figure over a window).
fn streams(f: &Family) -> Vec<(String, Flavor)> {
    match f.kind {
        Kind::Counter if f.name.ends_with("_total") => vec![(f.name.clone(), Flavor::Counter)],
        Kind::Counter => vec![
            (f.name.clone(), Flavor::Counter),
            (format!("{}_total", f.name), Flavor::Counter),
        ],
        Kind::Gauge | Kind::Untyped => vec![(f.name.clone(), Flavor::Gauge)],
        Kind::Histogram | Kind::Summary => vec![
            (format!("{}_count", f.name), Flavor::Counter),
            (format!("{}_sum", f.name), Flavor::Counter),
        ],
        Kind::Other => Vec::new(),
    }
}

/// Reduces a scrape: every stream of every family when `select` is empty, else what each
/// entry names (a sample name, or a family name for all its streams) over the series it
/// matches. A stream with no finite sample is left out.
pub fn reduce(families: &[Family], select: &[Selector]) -> Reading {
    let mut out = Reading::new();
    for f in families.iter().filter(|f| !creation_time(f, families)) {
        for (sample, flavor) in streams(f) {
            if select.is_empty() {
                if let Some(v) = sum(f, &sample, |_| true) {
                    out.insert(sample.clone(), (flavor, v));
                }
                continue;
            }
            for sel in select
                .iter()
                .filter(|s| s.name == sample || s.name == f.name)
            {
                if let Some(v) = sum(f, &sample, |labels| sel.matches(labels)) {
                    out.insert(sel.stem(&sample), (flavor, v));
                }
            }
        }
    }
    out
}

/// The sum of the finite values of `sample` over the series `pick` keeps; `None` when none.
fn sum(f: &Family, sample: &str, pick: impl Fn(&[(String, String)]) -> bool) -> Option<f64> {
    let values: Vec<f64> = f
        .samples
        .iter()
        .filter(|s| s.name == sample && s.value.is_finite() && pick(&s.labels))
        .map(|s| s.value)
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

/// Python's client writes a counter's creation time as a gauge family of its own
/// (`x_created` beside `x_total`): a timestamp, not a figure.
fn creation_time(f: &Family, families: &[Family]) -> bool {
    let Some(base) = f.name.strip_suffix("_created") else {
        return false;
    };
    let total = format!("{base}_total");
    families
        .iter()
        .any(|o| o.kind != Kind::Gauge && (o.name == base || o.name == total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::parse::parse;

    const TEXT: &str = r#"# TYPE req_total counter
req_total{code="200",path="/a"} 10
req_total{code="200",path="/b"} 5
req_total{code="500",path="/a"} 1
# TYPE conns gauge
conns{worker="0"} 3
conns{worker="1"} 4
# TYPE lat histogram
lat_bucket{le="0.1"} 2
lat_bucket{le="+Inf"} 3
lat_sum 0.25
lat_count 3
# TYPE q summary
q{quantile="0.5"} NaN
q_sum 0
q_count 0
# TYPE om counter
om_total 7
om_created 1.7e9
# TYPE build info
build_info{version="1"} 1
loose 2
# TYPE py_total counter
py_total 4
# TYPE py_created gauge
py_created 1.7e9
"#;

    #[test]
    fn everything_is_summed_over_its_series() {
        let r = reduce(&parse(TEXT).unwrap(), &[]);
        let want: Vec<(&str, Flavor, f64)> = vec![
            ("conns", Flavor::Gauge, 7.0),
            ("lat_count", Flavor::Counter, 3.0),
            ("lat_sum", Flavor::Counter, 0.25),
            ("loose", Flavor::Gauge, 2.0),
            ("om_total", Flavor::Counter, 7.0),
            ("py_total", Flavor::Counter, 4.0),
            ("q_count", Flavor::Counter, 0.0),
            ("q_sum", Flavor::Counter, 0.0),
            ("req_total", Flavor::Counter, 16.0),
        ];
        let got: Vec<(&str, Flavor, f64)> =
            r.iter().map(|(k, (f, v))| (k.as_str(), *f, *v)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn entries_pick_series_and_families() {
        let sel: Vec<Selector> = [
            r#"req_total{code="200"}"#,
            r#"req_total{path="/a",code="500"}"#,
            "lat",
            "om",
            r#"req_total{code="404"}"#,
        ]
        .iter()
        .map(|s| Selector::parse(s).unwrap())
        .collect();
        let r = reduce(&parse(TEXT).unwrap(), &sel);
        let keys: Vec<&str> = r.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "lat_count",
                "lat_sum",
                "om_total",
                r#"req_total{code="200"}"#,
                r#"req_total{code="500",path="/a"}"#
            ]
        );
        assert_eq!(r[r#"req_total{code="200"}"#].1, 15.0);
        assert_eq!(r[r#"req_total{code="500",path="/a"}"#].1, 1.0);
    }
}
