//! oha's `--output-format json` summary read into [`ToolFigures`]. oha reports times in seconds,
//! responses per status code (`statusCodeDistribution`) and errors by message
//! (`errorDistribution`). Requests still in flight when `-z` ends are cancelled by oha and listed
//! as `aborted due to deadline`: they are the window's cut edge, not errors, so they are left out
//! of the error kinds (and kept, counted, in the tool's report as `aborted_at_deadline`).

use crate::tools::ToolError;

use super::figures::{error_kind, ToolFigures};
use super::units::mib;
use serde_json::Value;

/// The error oha lists for requests it cancelled when its duration ran out.
const DEADLINE: &str = "aborted due to deadline";

/// Reads oha's JSON summary.
pub fn parse(text: &str) -> Result<ToolFigures, ToolError> {
    let doc = json(text)?;
    let summary = doc
        .get("summary")
        .ok_or("oha's JSON has no `summary` object")?;
    let secs = summary
        .get("total")
        .and_then(Value::as_f64)
        .ok_or("oha's `summary` has no `total` (seconds)")?;
    let statuses = doc
        .get("statusCodeDistribution")
        .and_then(Value::as_object)
        .ok_or("oha's JSON has no `statusCodeDistribution`")?;
    let mut requests = 0.0;
    let mut bad = 0.0;
    for (code, n) in statuses {
        let n = oha_count(n).ok_or_else(|| {
            format!("oha's `statusCodeDistribution` gives `{code}` a count that is not one: {n}")
        })?;
        requests += n;
        if !code.parse::<u16>().is_ok_and(|c| (200..400).contains(&c)) {
            bad += n;
        }
    }
    let per_sec = |x: f64| (secs > 0.0).then(|| x / secs);
    let bytes = summary.get("totalData").and_then(Value::as_f64);
    let mut f = ToolFigures {
        requests: Some(requests),
        measured_secs: Some(secs),
        rps: per_sec(requests),
        bad_responses: Some(bad),
        bytes_read: bytes,
        throughput_mib_s: bytes.and_then(per_sec).map(mib),
        errors_connect: Some(0.0),
        errors_read: Some(0.0),
        errors_write: Some(0.0),
        errors_timeout: Some(0.0),
        errors_other: Some(0.0),
        ..Default::default()
    };
    for (what, n) in doc
        .get("errorDistribution")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let n = oha_count(n).ok_or_else(|| {
            format!("oha's `errorDistribution` gives `{what}` a count that is not one: {n}")
        })?;
        if !what.to_ascii_lowercase().contains(DEADLINE) {
            f.add_error(error_kind(what), n);
        }
    }
    if requests > 0.0 {
        let ms = |v: Option<&Value>| v.and_then(Value::as_f64).map(|s| s * 1e3);
        f.latency_mean_ms = ms(summary.get("average"));
        f.latency_max_ms = ms(summary.get("slowest"));
        if let Some(p) = doc.get("latencyPercentiles") {
            f.latency_p50_ms = ms(p.get("p50"));
            f.latency_p75_ms = ms(p.get("p75"));
            f.latency_p90_ms = ms(p.get("p90"));
            f.latency_p99_ms = ms(p.get("p99"));
            f.latency_p999_ms = ms(p.get("p99.9"));
        }
    }
    Ok(f)
}

/// A count of oha's JSON: a number, whole and not below zero.
fn oha_count(n: &Value) -> Option<f64> {
    n.as_f64().filter(|n| *n >= 0.0 && n.fract() == 0.0)
}

/// How many requests oha cancelled when its duration ran out (0 when it lists none).
pub fn aborted_at_deadline(text: &str) -> f64 {
    json(text)
        .ok()
        .and_then(|d| {
            d.get("errorDistribution")?
                .as_object()?
                .iter()
                .filter(|(k, _)| k.to_ascii_lowercase().contains(DEADLINE))
                .map(|(_, n)| n.as_f64())
                .sum::<Option<f64>>()
        })
        .unwrap_or(0.0)
}

/// The JSON document of oha's output (the first `{` to the last `}`).
fn json(text: &str) -> Result<Value, ToolError> {
    let body = match (text.find('{'), text.rfind('}')) {
        (Some(a), Some(b)) if a < b => &text[a..=b],
        _ => {
            return Err(
                "oha's output holds no JSON summary (run it with --output-format json)".into(),
            )
        }
    };
    serde_json::from_str(body).map_err(|e| format!("oha's JSON summary cannot be read: {e}").into())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded with oha 1.16.0 against testbeds/hello-server (fixtures/README.md).
    const PLAIN: &str = include_str!("fixtures/oha_plain.json");
    const DEADLINE: &str = include_str!("fixtures/oha_deadline.json");
    const NON2XX: &str = include_str!("fixtures/oha_non2xx.json");
    const TIMEOUT: &str = include_str!("fixtures/oha_timeout.json");
    const REFUSED: &str = include_str!("fixtures/oha_refused.json");

    #[test]
    fn the_summary_and_its_percentiles() {
        let f = parse(PLAIN).unwrap();
        assert_eq!(f.requests, Some(37090.0));
        assert_eq!(f.measured_secs, Some(2.006379747));
        assert!((f.rps.unwrap() - 37090.0 / 2.006379747).abs() < 1e-9);
        assert!((f.latency_mean_ms.unwrap() - 0.8580588992720472).abs() < 1e-12);
        assert!((f.latency_p50_ms.unwrap() - 0.503475).abs() < 1e-12);
        assert!((f.latency_p999_ms.unwrap() - 12.646043).abs() < 1e-9);
        assert!((f.latency_max_ms.unwrap() - 16.783052).abs() < 1e-9);
        assert_eq!(f.bad_responses, Some(0.0));
        assert_eq!(f.bytes_read, Some(482170.0));
        assert_eq!(f.measurements()["load.socket_errors"], 0.0);
    }

    #[test]
    fn requests_cut_at_the_deadline_are_not_errors() {
        let f = parse(DEADLINE).unwrap();
        assert_eq!(f.requests, Some(31129.0));
        assert_eq!(f.measurements()["load.socket_errors"], 0.0);
        assert_eq!(aborted_at_deadline(DEADLINE), 11.0);
        assert_eq!(aborted_at_deadline(PLAIN), 0.0);
    }

    #[test]
    fn a_count_that_is_not_a_number_is_an_error_not_zero() {
        let e = parse(&PLAIN.replace("\"200\": 37090", "\"200\": \"37090\"")).unwrap_err();
        assert!(e.0.contains("`statusCodeDistribution` gives `200`"), "{e}");
        let refused = REFUSED.replace(": 4984", ": -4984");
        assert_ne!(refused, REFUSED);
        let e = parse(&refused).unwrap_err();
        assert!(e.0.contains("`errorDistribution` gives"), "{e}");
    }

    #[test]
    fn bad_statuses_timeouts_and_refused_connects() {
        let f = parse(NON2XX).unwrap();
        assert_eq!((f.requests, f.bad_responses), (Some(20027.0), Some(2002.0)));
        let f = parse(TIMEOUT).unwrap();
        assert_eq!((f.requests, f.errors_timeout), (Some(0.0), Some(16.0)));
        assert_eq!(f.latency_mean_ms, None, "no response, no latency");
        let f = parse(REFUSED).unwrap();
        assert_eq!(f.errors_connect, Some(4984.0));
        assert_eq!(f.measurements()["load.socket_errors"], 4984.0);
        assert!(parse("Summary:\n  Success rate: 100.00%")
            .unwrap_err()
            .0
            .contains("--output-format json"));
    }
}
