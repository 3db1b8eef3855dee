//! bombardier's `-o json` result (`-p r -o json`) read into [`ToolFigures`]. Latencies are in
//! microseconds there; percentiles only with `-l`. Requests are the responses of every status
//! class (`req1xx` … `others`), and each entry of `errors` is put under the kind its description
//! names (timeout, connect, read, write) or, when it names none, only in `load.socket_errors`.

use super::figures::{error_kind, ToolFigures};
use super::units::mib;
use serde_json::Value;

/// Reads bombardier's JSON result (the first `{` to the last `}` of its output).
pub fn parse(text: &str) -> Result<ToolFigures, String> {
    let json = match (text.find('{'), text.rfind('}')) {
        (Some(a), Some(b)) if a < b => &text[a..=b],
        _ => return Err("bombardier's output holds no JSON result (run it with -o json)".into()),
    };
    let doc: Value = serde_json::from_str(json)
        .map_err(|e| format!("bombardier's JSON result cannot be read: {e}"))?;
    let r = doc
        .get("result")
        .ok_or("bombardier's JSON has no `result` object")?;
    let num = |v: &Value, key: &str| v.get(key).and_then(Value::as_f64);
    let need = |key: &str| num(r, key).ok_or(format!("bombardier's `result` has no `{key}`"));
    let classes = ["req1xx", "req2xx", "req3xx", "req4xx", "req5xx", "others"]
        .map(&need)
        .into_iter()
        .collect::<Result<Vec<f64>, String>>()?;
    let secs = need("timeTakenSeconds")?;
    let requests: f64 = classes.iter().sum();
    let bytes_read = num(r, "bytesRead");
    let per_sec = |x: f64| (secs > 0.0).then(|| x / secs);
    let mut f = ToolFigures {
        requests: Some(requests),
        measured_secs: Some(secs),
        rps: per_sec(requests),
        bad_responses: Some(classes[0] + classes[3] + classes[4] + classes[5]),
        bytes_read,
        throughput_mib_s: bytes_read.and_then(per_sec).map(mib),
        errors_connect: Some(0.0),
        errors_read: Some(0.0),
        errors_write: Some(0.0),
        errors_timeout: Some(0.0),
        errors_other: Some(0.0),
        ..Default::default()
    };
    for e in r
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let n = num(e, "count").unwrap_or(0.0);
        let what = e.get("description").and_then(Value::as_str);
        f.add_error(error_kind(what.unwrap_or_default()), n);
    }
    if let Some(l) = r.get("latency") {
        let us = |v: Option<f64>| v.map(|us| us / 1e3);
        f.latency_mean_ms = us(num(l, "mean"));
        f.latency_max_ms = us(num(l, "max"));
        if let Some(p) = l.get("percentiles") {
            f.latency_p50_ms = us(num(p, "50"));
            f.latency_p75_ms = us(num(p, "75"));
            f.latency_p90_ms = us(num(p, "90"));
            f.latency_p99_ms = us(num(p, "99"));
        }
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    // bombardier could not be installed here: both fixtures are written by hand to the shape of
    // its JSON template, with made-up figures (fixtures/README.md).
    const LATENCY: &str = include_str!("fixtures/bombardier_latency.json");
    const ERRORS: &str = include_str!("fixtures/bombardier_errors.json");

    #[test]
    fn the_result_with_latency_percentiles() {
        let f = parse(LATENCY).unwrap();
        assert_eq!(f.requests, Some(85653.0));
        assert_eq!(f.measured_secs, Some(2.000512));
        assert!((f.rps.unwrap() - 85653.0 / 2.000512).abs() < 1e-9);
        assert_eq!(f.latency_mean_ms, Some(0.37251));
        assert_eq!(f.latency_p50_ms, Some(0.288));
        assert_eq!(f.latency_p99_ms, Some(2.43));
        assert_eq!(f.latency_max_ms, Some(21.034));
        assert_eq!(f.latency_p999_ms, None);
        assert_eq!(f.bad_responses, Some(0.0));
        assert_eq!(f.measurements()["load.socket_errors"], 0.0);
    }

    #[test]
    fn errors_by_kind_and_bad_statuses() {
        let f = parse(ERRORS).unwrap();
        assert_eq!(f.requests, Some(393.0));
        assert_eq!(f.bad_responses, Some(43.0));
        assert_eq!(f.errors_timeout, Some(16.0));
        assert_eq!(f.errors_connect, Some(3.0));
        assert_eq!(f.errors_other, Some(2.0));
        assert_eq!(f.latency_p50_ms, None, "no -l, no percentiles");
        assert_eq!(f.measurements()["load.socket_errors"], 21.0);
    }

    #[test]
    fn output_that_is_not_a_result_is_an_error() {
        assert!(parse("Bombarding http://x for 10s")
            .unwrap_err()
            .contains("no JSON result"));
        assert!(parse("{\"spec\":{}}").unwrap_err().contains("no `result`"));
        assert!(parse("{\"result\":{\"req2xx\":1}}")
            .unwrap_err()
            .contains("`req1xx`"));
    }
}
