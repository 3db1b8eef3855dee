//! The result of a run: what `rigor load` prints and `rigor run` stores, plus its measurement ids.

use crate::second::Second;
use crate::stats::ThreadStats;
use crate::tls::TlsReport;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Instant;

/// Latency summary in milliseconds, from a full-window HDR histogram.
///
/// Every request due in the measured window is in it: answered ones at their latency (answers
/// that arrive after the window closes are waited for, up to the timeout), and ones that got no
/// answer (timed out, or never sent because no connection came free) at the time they were given
/// up — a lower bound, so a stall or an overload can only raise the percentiles, never hide.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyStats {
    /// Requests in the histogram: responses plus requests given up as timeouts.
    pub count: u64,
    pub mean_ms: f64,
    pub stdev_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub p50_ms: f64,
    pub p75_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub p9999_ms: f64,
    /// (percentile, ms) pairs for plotting a latency distribution.
    pub percentiles: Vec<(f64, f64)>,
}

const PLOT_PERCENTILES: [f64; 14] = [
    0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999, 100.0,
];

impl LatencyStats {
    pub(crate) fn from_histogram(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatencyStats::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        let q = |p: f64| ms(h.value_at_percentile(p));
        LatencyStats {
            count: h.len(),
            mean_ms: h.mean() / 1000.0,
            stdev_ms: h.stdev() / 1000.0,
            min_ms: ms(h.min()),
            max_ms: ms(h.max()),
            p50_ms: q(50.0),
            p75_ms: q(75.0),
            p90_ms: q(90.0),
            p99_ms: q(99.0),
            p999_ms: q(99.9),
            p9999_ms: q(99.99),
            percentiles: PLOT_PERCENTILES.iter().map(|&p| (p, q(p))).collect(),
        }
    }
}

/// Errors by kind, counted in the measured window.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ErrorCounts {
    /// Connection refused, reset or timed out while connecting.
    pub connect: u64,
    /// Reading failed: the connection was reset, or it ended in the middle of a response.
    pub read: u64,
    pub write: u64,
    /// Requests unanswered within the timeout (each one counts; its connection is replaced), and
    /// in the open model requests that found no free connection within the timeout.
    pub timeout: u64,
    /// Responses that were not valid HTTP/1.x (or answered nothing that was asked).
    pub parse: u64,
    /// https://: handshakes that failed or timed out, and TLS sessions that broke (a bad
    /// record, an alert) once open. Absent from reports written before TLS existed: zero.
    #[serde(default)]
    pub tls: u64,
    /// HTTP/2: streams the server reset (RST_STREAM) before answering. Absent from reports
    /// written before HTTP/2 existed: zero.
    #[serde(default)]
    pub reset: u64,
    /// HTTP/2: streams the server refused by ending the connection (GOAWAY) before processing
    /// them; none is re-sent. Absent from older reports: zero.
    #[serde(default)]
    pub goaway: u64,
    /// Requests of the window lost with their connection: the server closed it (or it failed)
    /// with them outstanding, so they were never answered. Each one counts, since none is re-sent
    /// (a request may already have had its effect on the server) and none reached the latency
    /// histogram (they were not slow, they got no answer at all).
    pub closed: u64,
}

/// `7 errors: connect 0, read 2, write 0, timeout 5, parse 0, closed 0` (and `tls N` when
/// there are TLS errors), for warnings and summaries.
impl std::fmt::Display for ErrorCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} errors: connect {}, read {}, write {}, timeout {}, parse {}, closed {}",
            self.total(),
            self.connect,
            self.read,
            self.write,
            self.timeout,
            self.parse,
            self.closed
        )?;
        if self.tls > 0 {
            write!(f, ", tls {}", self.tls)?;
        }
        if self.reset > 0 {
            write!(f, ", reset {}", self.reset)?;
        }
        if self.goaway > 0 {
            write!(f, ", goaway {}", self.goaway)?;
        }
        Ok(())
    }
}

impl ErrorCounts {
    /// `load.socket_errors`: connect + read + write + timeout + parse + closed + tls + reset +
    /// goaway — every failure at the socket or protocol level, including each request lost with
    /// its connection.
    pub fn socket_errors(&self) -> u64 {
        self.connect
            + self.read
            + self.write
            + self.timeout
            + self.parse
            + self.closed
            + self.tls
            + self.reset
            + self.goaway
    }

    /// All errors (the same as [`ErrorCounts::socket_errors`]).
    pub fn total(&self) -> u64 {
        self.socket_errors()
    }
}

/// One reason responses failed to parse, with how often and what the first such answer began
/// with, so "parse 5000" comes with its why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ParseFailure {
    /// The parser's fixed wording; owned only when the report was read back from JSON.
    pub reason: Cow<'static, str>,
    pub count: u64,
    /// The start of the bytes that failed (escaped, at most a few dozen characters).
    pub example: String,
}

/// Requests outside the measured window: warmup requests the application answered (those it
/// refused or never got, under a closed connection or a GOAWAY, are not counted), and the
/// window's requests still unanswered when the run ended.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct OutsideWindow {
    pub requests: u64,
    /// Bytes sent for those requests.
    pub bytes: u64,
}

/// One second of the measured window. Responses and errors count in the second they happened;
/// the window's requests answered (or given up) after it closed count in its last second, so
/// the seconds add up to the window's totals.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct TimelineSecond {
    pub second: u32,
    /// Responses completed in this second.
    pub requests: u64,
    pub errors: u64,
    /// Mean latency of the window's requests answered or given up in this second (the
    /// population of `latency`), ms; `None` when there were none.
    pub latency_mean_ms: Option<f64>,
    /// Their 99th percentile, ms: read from a log histogram with eighth-of-an-octave buckets, so
    /// up to 12.5% above the exact value, never below it and never above `latency_max_ms`.
    pub latency_p99_ms: Option<f64>,
    /// Their exact maximum, ms.
    pub latency_max_ms: Option<f64>,
}

impl TimelineSecond {
    fn new(second: usize, s: &Second) -> TimelineSecond {
        // µs recorded: ms with three decimals says all there is.
        let ms = |us: f64| (us).round() / 1000.0;
        TimelineSecond {
            second: second as u32,
            requests: s.responses,
            errors: s.errors,
            latency_mean_ms: s.latency.mean_us().map(ms),
            latency_p99_ms: s.latency.percentile_us(99.0).map(|us| ms(us as f64)),
            latency_max_ms: s.latency.max_us().map(|us| ms(us as f64)),
        }
    }
}

/// Open-model bookkeeping: was the offered rate delivered?
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct RateReport {
    pub offered: f64,
    pub achieved: f64,
    /// Requests that were due but found every connection busy.
    pub waited_for_connection: u64,
    /// Requests due in the window that found no free connection within the timeout and were
    /// never sent (counted as timeouts too; the backlog of due requests is bounded by this).
    pub not_sent: u64,
    /// Largest delay between a request's intended and actual send time.
    pub max_schedule_lag_ms: f64,
}

/// Everything one load run measured.
///
/// Read back from JSON it lacks what JSON does not carry (the histograms, `window_opened_at`);
/// [`crate::ReportWire`] carries the histograms too.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadReport {
    pub url: String,
    pub connections: usize,
    pub threads: usize,
    pub pipeline: usize,
    pub warmup_secs: f64,
    pub measured_secs: f64,
    pub cancelled: bool,
    /// Responses completed in the measured window, any status.
    pub requests: u64,
    pub bytes_read: u64,
    pub rps: f64,
    pub throughput_mib_s: f64,
    /// Corrected (from intended send time) in the open model; the only latency in the closed model.
    pub latency: LatencyStats,
    /// Open model only: latency from the actual send time.
    pub latency_uncorrected: Option<LatencyStats>,
    #[serde(deserialize_with = "status_keys")]
    pub status_counts: BTreeMap<u16, u64>,
    /// Responses whose status is not 2xx or 3xx.
    pub bad_responses: u64,
    pub errors: ErrorCounts,
    /// Why responses failed to parse: the first few reasons, counted.
    pub parse_failures: Vec<ParseFailure>,
    /// Requests due in the window still unanswered when the run stopped. Only a cancelled run
    /// leaves any: otherwise the window's requests are waited for (up to the timeout) after it
    /// closes, and what gets no answer is a timeout.
    pub in_flight_at_end: u64,
    /// Requests sent in the window whose connection failed before they were answered (the same
    /// requests `errors.closed` counts).
    pub abandoned: u64,
    /// The run was cancelled after the window had closed, while its last requests were being
    /// waited for: the window is complete, and what was still outstanding was given up then as
    /// timeouts (as at the drain's deadline), so `in_flight_at_end` stays 0.
    pub drain_cut: bool,
    pub outside_window: OutsideWindow,
    pub timeline: Vec<TimelineSecond>,
    /// When the measured window opened (the start of `timeline`'s first second), so callers
    /// can put the seconds on their own clock; `None` when no worker started.
    #[serde(skip)]
    pub window_opened_at: Option<Instant>,
    pub rate: Option<RateReport>,
    /// https:// only: the run's handshakes; `None` for http://, so TLS figures are absent
    /// rather than zero. Absent from reports written before TLS existed.
    #[serde(default)]
    pub tls: Option<TlsReport>,
    /// The I/O path the engine's workers ran on, `epoll` or `io_uring` (`epoll,io_uring` when
    /// merged hosts differed), so a figure can be traced to the path that produced it. Absent
    /// from reports written before there was a choice: epoll.
    #[serde(default)]
    pub io: Option<String>,
    /// HTTP/2 runs only (`None` for HTTP/1.1): limits, goodbyes and resets.
    #[serde(default)]
    pub http2: Option<crate::h2::H2Report>,
    /// A request mix: each request's own figures, in the mix's order (empty without a mix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<crate::RequestReport>,
    pub client_cpu_pct: f64,
    pub client_cpu_secs: f64,
    pub client_cores: usize,
    pub warnings: Vec<LoadWarning>,
    /// The histogram `latency` was computed from (µs): kept so reports measured apart (on
    /// several hosts) merge exactly. `None` only in a report read back from plain JSON.
    #[serde(skip)]
    pub latency_histogram: Option<Histogram<u64>>,
    /// The histogram of `latency_uncorrected` (open model only), likewise.
    #[serde(skip)]
    pub uncorrected_histogram: Option<Histogram<u64>>,
    /// The histogram of `tls`'s handshake times (µs, https:// only), likewise.
    #[serde(skip)]
    pub tls_histogram: Option<Histogram<u64>>,
}

/// Status counts read back from JSON, whose keys are strings: parsed here rather than by the
/// format, so the report also reads back from inside a tagged message (where serde buffers it
/// and would not turn `"200"` into a number).
pub(crate) fn status_keys<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<u16, u64>, D::Error> {
    let raw = BTreeMap::<String, u64>::deserialize(d)?;
    raw.into_iter()
        .map(|(k, n)| {
            k.parse::<u16>()
                .map(|code| (code, n))
                .map_err(|_| serde::de::Error::custom(format!("status {k:?} is not a number")))
        })
        .collect()
}

/// Something that makes the figures suspect, decided once here for every caller: `kind` is a
/// stable code (`client_saturated`, `rate_not_met`, `waited_for_connection`, `load_errors`,
/// `bad_responses`, `no_responses`, `cancelled`, `insecure_tls`, `streams_limited`,
/// `http2_failure`), `message` says it with the
/// numbers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadWarning {
    /// A fixed code; owned only when the report was read back from JSON.
    pub kind: Cow<'static, str>,
    pub message: String,
}

/// A fraction as a percentage that stays readable when tiny (`0.0000078%`, not `0%`).
fn percent(f: f64) -> String {
    let p = 100.0 * f;
    if p >= 1.0 || p == 0.0 {
        format!("{p:.0}%")
    } else {
        let decimals = ((-p.log10()).ceil() as usize + 1).min(15);
        format!("{p:.decimals$}%")
    }
}

pub(crate) struct ReportInput<'a> {
    pub url: &'a str,
    pub connections: usize,
    pub threads: usize,
    pub pipeline: usize,
    pub warmup_secs: f64,
    pub rate: Option<f64>,
    pub cancelled: bool,
    pub insecure: bool,
    /// The I/O path(s) the workers ran on.
    pub io: &'a str,
    /// https://.
    pub tls: bool,
    /// HTTP/2: the concurrent streams asked for per connection.
    pub streams: Option<usize>,
    /// A request mix: its requests' names, in its order.
    pub request_names: Option<&'a [String]>,
    pub cores: usize,
    pub window_opened_at: Option<Instant>,
}

impl LoadReport {
    pub(crate) fn build(inp: ReportInput<'_>, s: &ThreadStats) -> LoadReport {
        let measured_secs = s.measured_ns as f64 / 1e9;
        let per_sec = |x: f64| {
            if measured_secs > 0.0 {
                x / measured_secs
            } else {
                0.0
            }
        };
        let status_counts: BTreeMap<u16, u64> = s
            .status
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(code, &n)| (code as u16, n))
            .collect();
        let bad_responses = status_counts
            .iter()
            .filter(|(&code, _)| !(200..400).contains(&code))
            .map(|(_, &n)| n)
            .sum();
        let seconds = (measured_secs.ceil() as usize).min(s.timeline.len());
        let timeline = s.timeline[..seconds]
            .iter()
            .enumerate()
            .map(|(i, second)| TimelineSecond::new(i, second))
            .collect();
        let client_cpu_pct = if measured_secs > 0.0 && inp.cores > 0 {
            100.0 * s.cpu_secs / (measured_secs * inp.cores as f64)
        } else {
            0.0
        };
        let rps = per_sec(s.requests as f64);
        let rate = inp.rate.map(|offered| RateReport {
            offered,
            achieved: rps,
            waited_for_connection: s.waited,
            not_sent: s.not_sent,
            max_schedule_lag_ms: s.max_lag_ns as f64 / 1e6,
        });
        let mut r = LoadReport {
            url: inp.url.to_string(),
            connections: inp.connections,
            threads: inp.threads,
            pipeline: inp.pipeline,
            warmup_secs: inp.warmup_secs,
            measured_secs,
            cancelled: inp.cancelled,
            requests: s.requests,
            bytes_read: s.bytes_read,
            rps,
            throughput_mib_s: per_sec(s.bytes_read as f64) / (1024.0 * 1024.0),
            latency: LatencyStats::from_histogram(&s.latency),
            latency_uncorrected: s.uncorrected.as_ref().map(LatencyStats::from_histogram),
            status_counts,
            bad_responses,
            errors: s.errors,
            parse_failures: s.parse_failures.clone(),
            in_flight_at_end: s.in_flight_at_end,
            abandoned: s.abandoned,
            drain_cut: inp.cancelled && s.drain_cut,
            outside_window: OutsideWindow {
                requests: s.warmup_answered + s.in_flight_at_end,
                bytes: s.warmup_bytes + s.in_flight_bytes,
            },
            timeline,
            window_opened_at: inp.window_opened_at,
            rate,
            tls: s.tls.as_ref().map(|t| TlsReport {
                insecure: inp.insecure,
                ..TlsReport::from_histogram(&t.handshakes, t.resumed, t.first_failure.clone())
            }),
            io: Some(inp.io.to_string()),
            http2: s
                .h2
                .as_ref()
                .map(|t| crate::h2::H2Report::new(t, inp.tls, inp.streams.unwrap_or(1))),
            mix: inp
                .request_names
                .unwrap_or_default()
                .iter()
                .zip(&s.requests_of)
                .map(|(name, r)| crate::RequestReport::build(name, r, measured_secs))
                .collect(),
            client_cpu_pct,
            client_cpu_secs: s.cpu_secs,
            client_cores: inp.cores,
            warnings: Vec::new(),
            latency_histogram: Some(s.latency.clone()),
            uncorrected_histogram: s.uncorrected.clone(),
            tls_histogram: s.tls.as_ref().map(|t| t.handshakes.clone()),
        };
        r.warnings = r.compute_warnings();
        r
    }

    pub(crate) fn compute_warnings(&self) -> Vec<LoadWarning> {
        let mut w = Vec::new();
        let mut say = |kind: &'static str, message: String| {
            w.push(LoadWarning {
                kind: Cow::Borrowed(kind),
                message,
            })
        };
        if let Some(message) = self.cancel_message() {
            say("cancelled", message);
        }
        if self.client_cpu_pct >= 90.0 {
            say(
                "client_saturated",
                format!(
                    "the load client used {:.0}% of its {} core(s): the figures may measure the client, not the server",
                    self.client_cpu_pct, self.client_cores
                ),
            );
        }
        if let Some(rate) = &self.rate {
            self.rate_warnings(rate, &mut say);
        }
        if let Some(h2) = &self.http2 {
            if let Some(max) = h2.server_max_streams.filter(|&m| (m as usize) < h2.streams) {
                say(
                    "streams_limited",
                    format!(
                        "the server announced a limit as low as {max} concurrent streams per \
                         connection and {} were asked for: while that limit held, no more than \
                         {max} requests were in flight on a connection",
                        h2.streams
                    ),
                );
            }
            if let Some(why) = &h2.first_failure {
                say(
                    "http2_failure",
                    format!("an HTTP/2 connection failed: {why}"),
                );
            }
        }
        if self.tls.as_ref().is_some_and(|t| t.insecure) {
            say(
                "insecure_tls",
                format!(
                    "the certificate of {} was not verified (insecure): any server could have answered",
                    self.url
                ),
            );
        }
        if self.errors.total() > 0 {
            say("load_errors", self.errors_message());
        }
        if self.bad_responses > 0 {
            say(
                "bad_responses",
                format!("{} responses were not 2xx or 3xx", self.bad_responses),
            );
        }
        if self.requests == 0 && !self.cancelled {
            say(
                "no_responses",
                "no response completed in the measured window".to_string(),
            );
        }
        w
    }

    /// Why the run ended early, if it was cancelled.
    fn cancel_message(&self) -> Option<String> {
        if self.drain_cut {
            Some(format!(
                "run cancelled after the {:.1}s measured window had closed, while its last \
                 requests were awaited: the wait was cut short and what was still \
                 outstanding was given up as timeouts",
                self.measured_secs
            ))
        } else if self.cancelled {
            Some(format!(
                "run cancelled after {:.1}s of the measured window",
                self.measured_secs
            ))
        } else {
            None
        }
    }

    /// The open model's warnings: the rate not reached, requests that waited for a connection.
    fn rate_warnings(&self, rate: &RateReport, say: &mut impl FnMut(&'static str, String)) {
        if self.measured_secs > 0.0 && rate.achieved < rate.offered * 0.95 {
            say(
                "rate_not_met",
                format!(
                    "offered {:.0} req/s but achieved {:.0} req/s ({}){}",
                    rate.offered,
                    rate.achieved,
                    percent(rate.achieved / rate.offered),
                    if rate.not_sent > 0 {
                        format!(
                            "; {} requests due in the window were never sent (no connection came free within the timeout)",
                            rate.not_sent
                        )
                    } else {
                        String::new()
                    }
                ),
            );
        }
        if rate.waited_for_connection > 0 {
            say(
                "waited_for_connection",
                format!(
                    "{} requests waited for a free connection (max schedule lag {:.1} ms): their latency includes the wait",
                    rate.waited_for_connection, rate.max_schedule_lag_ms
                ),
            );
        }
    }

    /// The error counts, with why responses failed to parse and what `closed` means.
    fn errors_message(&self) -> String {
        let mut msg = self.errors.to_string();
        if !self.parse_failures.is_empty() {
            let why: Vec<String> = self
                .parse_failures
                .iter()
                .map(|f| format!("{} ×{} (e.g. {})", f.reason, f.count, f.example))
                .collect();
            msg.push_str(&format!("; parse failures: {}", why.join(", ")));
        }
        if let Some(why) = self.tls.as_ref().and_then(|t| t.first_failure.as_ref()) {
            if self.errors.tls > 0 {
                msg.push_str(&format!("; tls: the first failure: {why}"));
            }
        }
        if self.errors.closed > 0 {
            msg.push_str(&format!(
                "; closed: {} requests were outstanding when the server closed their \
                 connection (never answered, not re-sent, not in the latency)",
                self.errors.closed
            ));
        }
        msg
    }

    /// A mix's per-request ids (`load.req.NAME.*`), none without a mix.
    pub fn request_measurements(&self) -> Vec<(String, f64)> {
        self.mix.iter().flat_map(|r| r.measurements()).collect()
    }

    /// The `load.*` measurement ids; latency ids are absent when no request was recorded.
    pub fn measurements(&self) -> BTreeMap<&'static str, f64> {
        let mut m = BTreeMap::new();
        m.insert("load.rps", self.rps);
        m.insert("load.requests", self.requests as f64);
        if self.latency.count > 0 {
            let l = &self.latency;
            m.insert("load.latency.mean", l.mean_ms);
            m.insert("load.latency.p50", l.p50_ms);
            m.insert("load.latency.p75", l.p75_ms);
            m.insert("load.latency.p90", l.p90_ms);
            m.insert("load.latency.p99", l.p99_ms);
            m.insert("load.latency.p999", l.p999_ms);
            m.insert("load.latency.max", l.max_ms);
        }
        m.insert("load.bad_responses", self.bad_responses as f64);
        m.insert("load.socket_errors", self.errors.socket_errors() as f64);
        m.insert("load.errors.connect", self.errors.connect as f64);
        m.insert("load.errors.read", self.errors.read as f64);
        m.insert("load.errors.write", self.errors.write as f64);
        m.insert("load.errors.timeout", self.errors.timeout as f64);
        m.insert("load.errors.parse", self.errors.parse as f64);
        m.insert("load.errors.closed", self.errors.closed as f64);
        m.insert("load.errors.tls", self.errors.tls as f64);
        m.insert("load.errors.reset", self.errors.reset as f64);
        m.insert("load.errors.goaway", self.errors.goaway as f64);
        if let Some(t) = &self.tls {
            m.insert("load.tls.handshakes", t.handshakes as f64);
            m.insert("load.tls.resumed", t.resumed as f64);
            if let (Some(mean), Some(p99)) = (t.handshake_mean_ms, t.handshake_p99_ms) {
                m.insert("load.tls.handshake.mean", mean);
                m.insert("load.tls.handshake.p99", p99);
            }
        }
        m.insert("load.throughput", self.throughput_mib_s);
        if self.measured_secs > 0.0 {
            m.insert("load.cpu", self.client_cpu_pct);
        }
        m
    }
}
