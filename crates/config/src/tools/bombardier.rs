//! bombardier's `-o json` result (`-p r -o json`) read into [`ToolFigures`]. Latencies are in
//! microseconds there; percentiles only with `-l`. bombardier counts a request that failed
//! (refused, timed out, closed early) under `others` too, with status 0, and puts its time in
//! the latency figures: responses are the status classes summed less the errors, bad responses
//! are 1xx, 4xx, 5xx and the `others` that are not errors, and each entry of `errors` is put
//! under the kind its description names (timeout, connect, read, write) or, when it names none,
//! only in `load.socket_errors`. With no response at all the latency figures are absent.

use crate::tools::ToolError;

use super::figures::{error_kind, ToolFigures};
use super::units::mib;
use serde_json::Value;

/// Reads bombardier's JSON result (the first `{` to the last `}` of its output).
pub fn parse(text: &str) -> Result<ToolFigures, ToolError> {
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
    let need = |key: &str| {
        let n = num(r, key).ok_or(format!("bombardier's `result` has no `{key}`"))?;
        (n >= 0.0)
            .then_some(n)
            .ok_or(format!("bombardier's `result` has `{key}` below zero: {n}"))
    };
    let classes = ["req1xx", "req2xx", "req3xx", "req4xx", "req5xx", "others"]
        .map(&need)
        .into_iter()
        .collect::<Result<Vec<f64>, String>>()?;
    let secs = need("timeTakenSeconds")?;
    let bytes_read = num(r, "bytesRead");
    let per_sec = |x: f64| (secs > 0.0).then(|| x / secs);
    let mut f = ToolFigures {
        measured_secs: Some(secs),
        bytes_read,
        throughput_mib_s: bytes_read.and_then(per_sec).map(mib),
        errors_connect: Some(0.0),
        errors_read: Some(0.0),
        errors_write: Some(0.0),
        errors_timeout: Some(0.0),
        errors_other: Some(0.0),
        ..Default::default()
    };
    let mut errors = 0.0;
    for e in r
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let n = num(e, "count")
            .filter(|n| *n >= 0.0)
            .ok_or_else(|| format!("bombardier's `errors` has an entry without a count: {e}"))?;
        errors += n;
        let what = e.get("description").and_then(Value::as_str);
        f.add_error(error_kind(what.unwrap_or_default()), n);
    }
    let responses = (classes.iter().sum::<f64>() - errors).max(0.0);
    let other_statuses = (classes[5] - errors).max(0.0);
    f.requests = Some(responses);
    f.rps = per_sec(responses);
    f.bad_responses = Some(classes[0] + classes[3] + classes[4] + other_statuses);
    if let Some(l) = r.get("latency").filter(|_| responses > 0.0) {
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

    // Written by hand to the shape of bombardier's JSON template (fixtures/README.md).
    const HAND: &str = include_str!("fixtures/bombardier_latency.json");
    // Recorded with bombardier v1.2.5 against testbeds/hello-server (fixtures/README.md).
    const LATENCY: &str = include_str!("fixtures/bombardier_v125_latency.json");
    const NON2XX: &str = include_str!("fixtures/bombardier_v125_non2xx.json");
    const TIMEOUT: &str = include_str!("fixtures/bombardier_v125_timeout.json");
    const REFUSED: &str = include_str!("fixtures/bombardier_v125_refused.json");

    #[test]
    fn the_result_with_latency_percentiles() {
        let f = parse(LATENCY).unwrap();
        assert_eq!(f.requests, Some(80750.0));
        assert_eq!(f.measured_secs, Some(1.999464087));
        assert!((f.rps.unwrap() - 80750.0 / 1.999464087).abs() < 1e-9);
        assert!((f.latency_mean_ms.unwrap() - 0.3950752693498452).abs() < 1e-12);
        assert_eq!(f.latency_p50_ms, Some(0.243));
        assert_eq!(f.latency_p99_ms, Some(4.152));
        assert_eq!(f.latency_max_ms, Some(12.867));
        assert_eq!(f.latency_p999_ms, None);
        assert_eq!(f.bad_responses, Some(0.0));
        assert_eq!(f.bytes_read, Some(8075000.0));
        assert_eq!(f.measurements()["load.socket_errors"], 0.0);
        let f = parse(HAND).unwrap();
        assert_eq!((f.requests, f.latency_p50_ms), (Some(85653.0), Some(0.288)));
    }

    #[test]
    fn bad_statuses_are_counted_as_responses() {
        let f = parse(NON2XX).unwrap();
        assert_eq!(f.requests, Some(109931.0 + 12214.0));
        assert_eq!(f.bad_responses, Some(12214.0));
        assert_eq!(f.measurements()["load.socket_errors"], 0.0);
    }

    #[test]
    fn failed_requests_are_errors_not_responses() {
        // bombardier counts each refused connect under `others`, with its time in the latency.
        let f = parse(REFUSED).unwrap();
        assert_eq!(f.requests, Some(0.0));
        assert_eq!(f.bad_responses, Some(0.0));
        assert_eq!(f.errors_connect, Some(21540.0));
        assert_eq!(f.measurements()["load.socket_errors"], 21540.0);
        assert_eq!(f.latency_mean_ms, None, "no response, no latency");
        // A read timeout reaches fasthttp as a connection closed before the first byte: an
        // error of no kind rigor can name.
        let f = parse(TIMEOUT).unwrap();
        assert_eq!((f.requests, f.errors_other), (Some(0.0), Some(16.0)));
        assert_eq!(f.errors_timeout, Some(0.0));
        assert_eq!(f.latency_p99_ms, None);
    }

    #[test]
    fn output_that_is_not_a_result_is_an_error() {
        assert!(parse("Bombarding http://x for 10s")
            .unwrap_err()
            .0
            .contains("no JSON result"));
        assert!(parse("{\"spec\":{}}")
            .unwrap_err()
            .0
            .contains("no `result`"));
        let e = parse(&REFUSED.replace("\"count\":21540", "\"count\":\"21540\"")).unwrap_err();
        assert!(e.0.contains("`errors` has an entry without a count"), "{e}");
        let e = parse(&LATENCY.replace("\"req2xx\":80750", "\"req2xx\":-80750")).unwrap_err();
        assert!(e.0.contains("`req2xx` below zero"), "{e}");
        assert!(parse("{\"result\":{\"req2xx\":1}}")
            .unwrap_err()
            .0
            .contains("`req1xx`"));
    }
}
