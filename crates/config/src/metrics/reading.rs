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

/// How many NaN or ±Inf samples each stem's sum left out: no figure can be made of them, and
/// a sum without them is not the application's whole count.
pub type NonFinite = BTreeMap<String, u64>;

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
/// matches. A stream with no finite sample is left out; the non-finite samples left out are
/// counted by stem.
pub fn reduce(families: &[Family], select: &[Selector]) -> (Reading, NonFinite) {
    let mut out = Reading::new();
    let mut dropped = NonFinite::new();
    let mut keep = |stem: String, flavor: Flavor, (value, left_out): (Option<f64>, u64)| {
        if left_out > 0 {
            *dropped.entry(stem.clone()).or_default() += left_out;
        }
        if let Some(v) = value {
            out.insert(stem, (flavor, v));
        }
    };
    for f in families.iter().filter(|f| !creation_time(f, families)) {
        for (sample, flavor) in streams(f) {
            if select.is_empty() {
                keep(sample.clone(), flavor, sum(f, &sample, |_| true));
                continue;
            }
            for sel in select
                .iter()
                .filter(|s| s.name == sample || s.name == f.name)
            {
                let got = sum(f, &sample, |labels| sel.matches(labels));
                keep(sel.stem(&sample), flavor, got);
            }
        }
    }
    (out, dropped)
}

/// The sum of the finite values of `sample` over the series `pick` keeps (`None` when none),
/// and how many of those series' values were NaN or ±Inf.
fn sum(f: &Family, sample: &str, pick: impl Fn(&[(String, String)]) -> bool) -> (Option<f64>, u64) {
    let (finite, other): (Vec<f64>, Vec<f64>) = f
        .samples
        .iter()
        .filter(|s| s.name == sample && pick(&s.labels))
        .map(|s| s.value)
        .partition(|v| v.is_finite());
    let total = (!finite.is_empty()).then(|| finite.iter().sum());
    (total, other.len() as u64)
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
        let (r, dropped) = reduce(&parse(TEXT).unwrap(), &[]);
        // The summary's NaN quantile is not a stream rigor reads.
        assert!(dropped.is_empty(), "{dropped:?}");
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
        let (r, _) = reduce(&parse(TEXT).unwrap(), &sel);
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

    #[test]
    fn non_finite_samples_are_left_out_and_counted() {
        let text = "# TYPE g gauge\ng{w=\"0\"} NaN\ng{w=\"1\"} 2\n# TYPE c counter\n\
                    c_total{w=\"0\"} +Inf\nc_total{w=\"1\"} -Inf\n# TYPE ok gauge\nok 1\n";
        let (r, dropped) = reduce(&parse(text).unwrap(), &[]);
        assert_eq!(r["g"], (Flavor::Gauge, 2.0));
        assert!(!r.contains_key("c_total"), "{r:?}");
        let want: NonFinite = [("c_total".to_string(), 2), ("g".to_string(), 1)].into();
        assert_eq!(dropped, want);
        // Only the series an entry picks are counted.
        let sel = [Selector::parse(r#"g{w="1"}"#).unwrap()];
        let (r, dropped) = reduce(&parse(text).unwrap(), &sel);
        assert_eq!(r[r#"g{w="1"}"#].1, 2.0);
        assert!(dropped.is_empty(), "{dropped:?}");
    }
}
