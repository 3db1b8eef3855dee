//! h2load's summary read into [`ToolFigures`]: `finished in T, R req/s`, the `requests:` and
//! `status codes:` counts, the exact byte count of `traffic:`, and the mean and max of `time for
//! request`. h2load prints no percentiles, so `load.latency.p*` stay absent.

use crate::tools::ToolError;

use super::figures::ToolFigures;
use super::units::{count, duration_ms, mib};
use regex::Regex;
use std::sync::OnceLock;

struct Lines {
    finished: Regex,
    requests: Regex,
    status: Regex,
    traffic: Regex,
    request_time: Regex,
}

fn lines() -> &'static Lines {
    static LINES: OnceLock<Lines> = OnceLock::new();
    LINES.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("a fixed pattern");
        Lines {
            finished: re(r"^finished in (\S+), ([0-9.]+) req/s"),
            requests: re(
                r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout",
            ),
            status: re(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx"),
            traffic: re(r"^traffic: \S+ \((\d+)\) total"),
            request_time: re(r"^time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"),
        }
    })
}

/// Reads h2load's summary; the error names the line that is missing.
pub fn parse(text: &str) -> Result<ToolFigures, ToolError> {
    let l = lines();
    let mut f = ToolFigures::default();
    let (mut finished, mut requests, mut status) = (false, false, false);
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(c) = l.finished.captures(line) {
            finished = true;
            f.measured_secs = duration_ms(&c[1]).map(|ms| ms / 1e3);
            f.rps = c[2].parse().ok();
        } else if let Some(c) = l.requests.captures(line) {
            requests = true;
            let errored = count(&c[6]);
            let timeout = count(&c[7]);
            // h2load counts a timed-out request among the errored ones.
            f.errors_timeout = timeout;
            f.errors_other = errored.zip(timeout).map(|(e, t)| (e - t).max(0.0));
        } else if let Some(c) = l.status.captures(line) {
            status = true;
            let n: Vec<f64> = (1..=4).filter_map(|i| count(&c[i])).collect();
            if n.len() == 4 {
                f.requests = Some(n.iter().sum());
                f.bad_responses = Some(n[2] + n[3]);
            }
        } else if let Some(c) = l.traffic.captures(line) {
            f.bytes_read = count(&c[1]);
        } else if let Some(c) = l.request_time.captures(line) {
            f.latency_max_ms = duration_ms(&c[2]);
            f.latency_mean_ms = duration_ms(&c[3]);
        }
    }
    for (seen, what) in [
        (finished, "`finished in T, R req/s`"),
        (requests, "`requests: …`"),
        (status, "`status codes: …`"),
    ] {
        if !seen {
            return Err(format!(
                "h2load's output has no {what} line: it is not a finished h2load summary"
            )
            .into());
        }
    }
    // `finished in` counts the warm-up too, while the counts and `req/s` cover the main
    // duration only: that duration is what the counts were divided by.
    if let (Some(n), Some(rps)) = (f.requests, f.rps.filter(|r| *r > 0.0)) {
        f.measured_secs = Some(n / rps);
    }
    if let (Some(b), Some(s)) = (f.bytes_read, f.measured_secs.filter(|s| *s > 0.0)) {
        f.throughput_mib_s = Some(mib(b / s));
    }
    if f.requests == Some(0.0) {
        f = f.without_latency();
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded with h2load (nghttp2 1.52.0) against testbeds/hello-server (fixtures/README.md).
    const H1: &str = include_str!("fixtures/h2load_h1.txt");
    const NON2XX: &str = include_str!("fixtures/h2load_non2xx.txt");
    const REFUSED: &str = include_str!("fixtures/h2load_refused.txt");
    const CRASH: &str = include_str!("fixtures/h2load_crash.txt");
    const WARMUP: &str = include_str!("fixtures/h2load_warmup.txt");

    #[test]
    fn the_summary() {
        let f = parse(H1).unwrap();
        assert_eq!(f.requests, Some(76892.0));
        assert_eq!(f.measured_secs, Some(2.0));
        assert_eq!(f.rps, Some(38446.0));
        assert_eq!(f.bytes_read, Some(7689200.0));
        assert_eq!(f.latency_mean_ms, Some(0.415));
        assert_eq!(f.latency_max_ms, Some(28.36));
        assert_eq!(f.bad_responses, Some(0.0));
        let m = f.measurements();
        assert_eq!(m["load.socket_errors"], 0.0);
        assert!((m["load.throughput"] - 7689200.0 / 2.0 / 1048576.0).abs() < 1e-9);
        for absent in [
            "load.latency.p50",
            "load.latency.p99",
            "load.errors.connect",
        ] {
            assert!(!m.contains_key(absent), "{absent}");
        }
    }

    #[test]
    fn with_a_warm_up_the_window_is_the_main_duration() {
        // `-D 2000ms --warm-up-time 1000ms`: `finished in 3.00s`, the rest over 2 s.
        let f = parse(WARMUP).unwrap();
        assert_eq!(f.requests, Some(62186.0));
        assert_eq!(f.rps, Some(31093.0));
        assert_eq!(f.measured_secs, Some(2.0));
        let mib_s = f.throughput_mib_s.unwrap();
        assert!(
            (mib_s - 6218600.0 / 2.0 / 1048576.0).abs() < 1e-9,
            "{mib_s}"
        );
    }

    #[test]
    fn failed_statuses_and_nothing_answered() {
        let f = parse(NON2XX).unwrap();
        assert_eq!(f.bad_responses, Some(7046.0));
        assert_eq!(f.requests, Some(70455.0));
        let f = parse(REFUSED).unwrap();
        assert_eq!(f.requests, Some(0.0));
        assert_eq!(
            f.latency_mean_ms, None,
            "zeros of no request are no latency"
        );
    }

    #[test]
    fn an_aborted_run_is_an_error_naming_the_missing_line() {
        let e = parse(CRASH).unwrap_err();
        assert!(e.0.contains("`finished in T, R req/s`"), "{e}");
    }
}
