//! What a tool's output said, before it becomes measurement ids: every figure is optional,
//! because a tool that does not report a figure must leave its id absent, never zero.

use crate::measurements::ids;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The figures one run of a load tool reported, in rigor's units (ms, MiB/s, counts).
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolFigures {
    /// Responses completed in the run, any status.
    pub requests: Option<f64>,
    /// How long the tool says its measured run lasted, seconds.
    pub measured_secs: Option<f64>,
    /// Requests per second as the tool computed it.
    pub rps: Option<f64>,
    pub latency_mean_ms: Option<f64>,
    pub latency_p50_ms: Option<f64>,
    pub latency_p75_ms: Option<f64>,
    pub latency_p90_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub latency_p999_ms: Option<f64>,
    pub latency_max_ms: Option<f64>,
    /// Responses with a status outside 200–399.
    pub bad_responses: Option<f64>,
    pub errors_connect: Option<f64>,
    pub errors_read: Option<f64>,
    pub errors_write: Option<f64>,
    pub errors_timeout: Option<f64>,
    /// Errors the tool counts without saying their kind (they are only in `load.socket_errors`).
    pub errors_other: Option<f64>,
    /// Bytes the tool read in the run.
    pub bytes_read: Option<f64>,
    /// MiB read per second.
    pub throughput_mib_s: Option<f64>,
}

/// Which `load.errors.*` kind a tool's error message names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Connect,
    Read,
    Write,
    Timeout,
    /// A message that names none of the kinds: counted in `load.socket_errors` only.
    Other,
}

/// The kind an error message (bombardier's, oha's) names: a timeout, a refused or failed
/// connect, a failed write or read; anything else (a connection closed early, a TLS error) is
/// `Other`.
pub fn error_kind(message: &str) -> ErrorKind {
    let m = message.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| m.contains(w));
    if has(&["timeout", "timed out"]) {
        ErrorKind::Timeout
    } else if has(&[
        "refused",
        "dial tcp",
        "connect error",
        "trying to connect",
        "connect:",
    ]) {
        ErrorKind::Connect
    } else if has(&["write", "broken pipe"]) {
        ErrorKind::Write
    } else if has(&["read", "reset by peer", "eof"]) {
        ErrorKind::Read
    } else {
        ErrorKind::Other
    }
}

/// A request count a tool printed, as a whole number: `None` unless it is finite, not below
/// zero and at most 2^53 (past it no float holds an exact count, and no run sends that many).
pub fn whole_count(n: f64) -> Option<u64> {
    (n.is_finite() && (0.0..=9_007_199_254_740_992.0).contains(&n)).then_some(n as u64)
}

impl ToolFigures {
    /// Adds `n` errors of `kind`.
    pub fn add_error(&mut self, kind: ErrorKind, n: f64) {
        let slot = match kind {
            ErrorKind::Connect => &mut self.errors_connect,
            ErrorKind::Read => &mut self.errors_read,
            ErrorKind::Write => &mut self.errors_write,
            ErrorKind::Timeout => &mut self.errors_timeout,
            ErrorKind::Other => &mut self.errors_other,
        };
        *slot = Some(slot.unwrap_or(0.0) + n);
    }

    /// The figures under rigor's `load.*` ids; what the tool did not report stays absent, and
    /// so does a reading that is not finite or is below zero (no count, rate, latency or
    /// throughput is). `load.socket_errors` is the sum of the error kinds
    /// the tool reported (absent when it reported none).
    pub fn measurements(&self) -> BTreeMap<String, f64> {
        let kinds = [
            self.errors_connect,
            self.errors_read,
            self.errors_write,
            self.errors_timeout,
            self.errors_other,
        ];
        let valid = |v: &f64| v.is_finite() && *v >= 0.0;
        // A kind that cannot be read leaves the sum unknown, not smaller.
        let socket_errors = kinds
            .iter()
            .flatten()
            .all(valid)
            .then(|| kinds.iter().flatten().copied().reduce(|a, b| a + b))
            .flatten();
        let pairs = [
            (ids::LOAD_RPS, self.rps),
            (ids::LOAD_REQUESTS, self.requests),
            (ids::LOAD_LATENCY_MEAN, self.latency_mean_ms),
            (ids::LOAD_LATENCY_P50, self.latency_p50_ms),
            (ids::LOAD_LATENCY_P75, self.latency_p75_ms),
            (ids::LOAD_LATENCY_P90, self.latency_p90_ms),
            (ids::LOAD_LATENCY_P99, self.latency_p99_ms),
            (ids::LOAD_LATENCY_P999, self.latency_p999_ms),
            (ids::LOAD_LATENCY_MAX, self.latency_max_ms),
            (ids::LOAD_BAD_RESPONSES, self.bad_responses),
            (ids::LOAD_SOCKET_ERRORS, socket_errors),
            (ids::LOAD_ERRORS_CONNECT, self.errors_connect),
            (ids::LOAD_ERRORS_READ, self.errors_read),
            (ids::LOAD_ERRORS_WRITE, self.errors_write),
            (ids::LOAD_ERRORS_TIMEOUT, self.errors_timeout),
            (ids::LOAD_THROUGHPUT, self.throughput_mib_s),
        ];
        pairs
            .into_iter()
            .filter_map(|(id, v)| Some((id.to_string(), v.filter(valid)?)))
            .collect()
    }

    /// Drops every latency figure: the tool recorded no latency (every request failed), and its
    /// zeros are not a measurement.
    pub fn without_latency(mut self) -> Self {
        self.latency_mean_ms = None;
        self.latency_p50_ms = None;
        self.latency_p75_ms = None;
        self.latency_p90_ms = None;
        self.latency_p99_ms = None;
        self.latency_p999_ms = None;
        self.latency_max_ms = None;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_are_sorted_by_the_kind_they_name() {
        use ErrorKind::*;
        for (m, k) in [
            ("timeout", Timeout),
            ("dial tcp 127.0.0.1:9: connect: connection refused", Connect),
            (
                "error trying to connect: tcp connect error: Connection refused (os error 111)",
                Connect,
            ),
            ("connection closed before message completed", Other),
            (
                "the server closed connection before returning the first response byte",
                Other,
            ),
            ("write: broken pipe", Write),
            ("read: connection reset by peer", Read),
        ] {
            assert_eq!(error_kind(m), k, "{m}");
        }
    }

    #[test]
    fn absent_figures_stay_absent_and_socket_errors_sum_the_reported_kinds() {
        let f = ToolFigures {
            rps: Some(10.0),
            errors_timeout: Some(2.0),
            errors_other: Some(1.0),
            latency_p99_ms: Some(f64::NAN),
            ..Default::default()
        };
        let m = f.measurements();
        assert_eq!(m["load.rps"], 10.0);
        assert_eq!(m["load.socket_errors"], 3.0);
        assert_eq!(m["load.errors.timeout"], 2.0);
        for absent in ["load.latency.p99", "load.errors.connect", "load.requests"] {
            assert!(!m.contains_key(absent), "{absent}: {m:?}");
        }
        assert!(!ToolFigures::default()
            .measurements()
            .contains_key("load.socket_errors"));
    }

    #[test]
    fn a_count_is_whole_only_within_what_a_float_holds_exactly() {
        assert_eq!(whole_count(77695.0), Some(77695));
        assert_eq!(whole_count(0.0), Some(0));
        for absurd in [1e26, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(whole_count(absurd), None, "{absurd}");
        }
    }

    #[test]
    fn a_negative_reading_is_absent_not_a_figure() {
        let f = ToolFigures {
            rps: Some(-36896.94),
            latency_mean_ms: Some(-0.88),
            latency_max_ms: Some(16.65),
            errors_read: Some(-3.0),
            errors_connect: Some(5.0),
            ..Default::default()
        };
        let m = f.measurements();
        assert_eq!(m["load.errors.connect"], 5.0);
        for absent in [
            "load.rps",
            "load.latency.mean",
            "load.errors.read",
            "load.socket_errors",
        ] {
            assert!(!m.contains_key(absent), "{absent}: {m:?}");
        }
        assert_eq!(m["load.latency.max"], 16.65);
    }
}
