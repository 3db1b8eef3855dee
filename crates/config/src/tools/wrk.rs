//! wrk's text summary read into [`ToolFigures`]: the `Thread Stats` latency line (mean, max),
//! the `--latency` distribution (50/75/90/99%), `N requests in T, X read`, `Requests/sec`,
//! `Transfer/sec`, and the two lines wrk prints only when they are not zero (`Non-2xx or 3xx
//! responses`, `Socket errors`). wrk2 prints the same summary; its parser builds on this one.

use crate::tools::ToolError;

use super::figures::ToolFigures;
use super::units::{bytes, count, duration_ms, mib};
use regex::Regex;
use std::sync::OnceLock;

/// The patterns of wrk's summary lines, compiled once.
struct Lines {
    latency: Regex,
    percentile: Regex,
    total: Regex,
    rps: Regex,
    transfer: Regex,
    non2xx: Regex,
    socket: Regex,
}

fn lines() -> &'static Lines {
    static LINES: OnceLock<Lines> = OnceLock::new();
    LINES.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("a fixed pattern");
        Lines {
            latency: re(r"^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"),
            percentile: re(r"^\s*(\d+(?:\.\d+)?)%\s+(\S+)\s*$"),
            total: re(r"^\s*(\d+) requests in (\S+), (\S+) read\s*$"),
            rps: re(r"^\s*Requests/sec:\s+(\S+)\s*$"),
            transfer: re(r"^\s*Transfer/sec:\s+(\S+)\s*$"),
            non2xx: re(r"^\s*Non-2xx or 3xx responses:\s+(\d+)\s*$"),
            socket: re(
                r"^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)\s*$",
            ),
        }
    })
}

/// Reads wrk's summary; `tool` names the tool in errors. The error says which line is missing
/// when the text is not a wrk summary.
pub fn parse(text: &str, tool: &str) -> Result<ToolFigures, ToolError> {
    let l = lines();
    let mut f = ToolFigures {
        // wrk prints these two lines only when something went wrong: without them, zero.
        bad_responses: Some(0.0),
        errors_connect: Some(0.0),
        errors_read: Some(0.0),
        errors_write: Some(0.0),
        errors_timeout: Some(0.0),
        ..Default::default()
    };
    let mut saw_total = false;
    let mut empty_histogram = false;
    let mut in_distribution = false;
    let mut distribution_done = false;
    for line in text.lines() {
        if line.trim_start().starts_with("Latency Distribution") {
            // wrk2 with -U prints a second (uncorrected) distribution: the first one counts.
            in_distribution = !distribution_done;
            continue;
        }
        if in_distribution {
            match l.percentile.captures(line) {
                Some(c) => {
                    let ms = duration_ms(&c[2]);
                    match &c[1] {
                        "50" | "50.000" => f.latency_p50_ms = ms,
                        "75" | "75.000" => f.latency_p75_ms = ms,
                        "90" | "90.000" => f.latency_p90_ms = ms,
                        "99" | "99.000" => f.latency_p99_ms = ms,
                        "99.900" => f.latency_p999_ms = ms,
                        _ => {}
                    }
                    continue;
                }
                None => {
                    in_distribution = false;
                    distribution_done = true;
                }
            }
        }
        if let Some(c) = l.latency.captures(line) {
            f.latency_mean_ms = duration_ms(&c[1]);
            f.latency_max_ms = duration_ms(&c[3]);
            // An empty histogram (every request timed out) prints zeros and `-nan%`.
            empty_histogram = c[4].contains("nan");
        } else if let Some(c) = l.total.captures(line) {
            saw_total = true;
            f.requests = count(&c[1]);
            f.measured_secs = duration_ms(&c[2]).map(|ms| ms / 1e3);
            f.bytes_read = bytes(&c[3]);
        } else if let Some(c) = l.rps.captures(line) {
            f.rps = c[1].parse().ok();
        } else if let Some(c) = l.transfer.captures(line) {
            f.throughput_mib_s = bytes(&c[1]).map(mib);
        } else if let Some(c) = l.non2xx.captures(line) {
            f.bad_responses = count(&c[1]);
        } else if let Some(c) = l.socket.captures(line) {
            f.errors_connect = count(&c[1]);
            f.errors_read = count(&c[2]);
            f.errors_write = count(&c[3]);
            f.errors_timeout = count(&c[4]);
        }
    }
    if !saw_total {
        return Err(format!(
            "{tool}'s output has no `N requests in T, X read` line: it is not a finished {tool} \
             summary"
        )
        .into());
    }
    if f.rps.is_none() {
        return Err(format!("{tool}'s output has no `Requests/sec:` line").into());
    }
    if empty_histogram || f.requests == Some(0.0) {
        f = f.without_latency();
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded with wrk 4.1.0 (Debian 4.1.0-3+b2) against testbeds/hello-server on loopback
    // (fixtures/README.md says how each was made).
    const PLAIN: &str = include_str!("fixtures/wrk_plain.txt");
    const LATENCY: &str = include_str!("fixtures/wrk_latency.txt");
    const NON2XX: &str = include_str!("fixtures/wrk_non2xx.txt");
    const TIMEOUT: &str = include_str!("fixtures/wrk_timeout.txt");
    const REFUSED: &str = include_str!("fixtures/wrk_refused.txt");

    #[test]
    fn the_plain_summary() {
        let f = parse(PLAIN, "wrk").unwrap();
        assert_eq!(f.requests, Some(85645.0));
        assert_eq!(f.measured_secs, Some(2.01));
        assert_eq!(f.rps, Some(42673.80));
        assert_eq!(f.latency_mean_ms, Some(0.55212));
        assert_eq!(f.latency_max_ms, Some(19.37));
        assert_eq!(f.latency_p50_ms, None, "no --latency, no percentiles");
        assert_eq!(f.throughput_mib_s, Some(4.07));
        assert_eq!(f.bad_responses, Some(0.0));
        assert_eq!(f.errors_timeout, Some(0.0));
        let m = f.measurements();
        assert_eq!(m["load.socket_errors"], 0.0);
        assert!(!m.contains_key("load.latency.p99"));
        assert!(!m.contains_key("load.errors.parse"));
    }

    #[test]
    fn the_latency_distribution() {
        let f = parse(LATENCY, "wrk").unwrap();
        assert_eq!(f.latency_p50_ms, Some(0.35));
        assert_eq!(f.latency_p75_ms, Some(0.538));
        assert_eq!(f.latency_p90_ms, Some(2.24));
        assert_eq!(f.latency_p99_ms, Some(9.24));
        assert_eq!(f.latency_p999_ms, None);
        assert_eq!(f.requests, Some(77695.0));
        assert_eq!(f.measured_secs, Some(2.11));
    }

    #[test]
    fn non_2xx_responses_and_timeouts() {
        let f = parse(NON2XX, "wrk").unwrap();
        assert_eq!(f.bad_responses, Some(7228.0));
        let f = parse(TIMEOUT, "wrk").unwrap();
        assert_eq!(f.errors_timeout, Some(16.0));
        assert_eq!(f.requests, Some(16.0));
        // Every request timed out: wrk's histogram is empty and its zeros are no latency.
        assert_eq!(f.latency_mean_ms, None);
        assert_eq!(f.latency_p99_ms, None);
        assert_eq!(f.measurements()["load.socket_errors"], 16.0);
    }

    #[test]
    fn what_is_not_a_summary_is_an_error_naming_the_line() {
        let e = parse(REFUSED, "wrk").unwrap_err();
        assert!(e.0.contains("`N requests in T, X read`"), "{e}");
        assert!(parse("", "wrk2")
            .unwrap_err()
            .0
            .starts_with("wrk2's output"));
    }
}
