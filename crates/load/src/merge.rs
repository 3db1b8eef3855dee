//! Reports measured apart, merged as one: several load hosts driving one server over the same
//! wall-clock window add up to one report, with latency read from the merged histograms (never
//! from averaged percentiles). [`ReportWire`] carries a report and its histograms as JSON.

use crate::report::{
    ErrorCounts, LatencyStats, LoadReport, LoadWarning, OutsideWindow, ParseFailure, RateReport,
    TimelineSecond,
};
use crate::stats::{new_histogram, MAX_PARSE_REASONS, MAX_US};
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The CPU share above which one load client's figures may measure the client.
const SATURATED_PCT: f64 = 90.0;

/// Merges reports of load run at the same time against the same target (one per load host)
/// into the report of the whole load.
///
/// Counts (requests, bytes, statuses, errors, parse failures, requests in flight, abandoned or
/// outside the window), connections, threads, client CPU seconds and cores are summed; the
/// request rate and throughput are the sums of the parts' (each part measured the same wall
/// window), the measured window is the longest part's; latency comes from the merged histograms;
/// the timeline is summed second by second; the open model's rate report sums offered and
/// achieved rates and waits, and keeps the largest schedule lag. Warnings are decided afresh on
/// the merged figures, plus a `client_saturated` warning for any one client that was saturated.
///
/// # Panics
///
/// When `parts` is empty, or a part carries no latency histogram: every report [`crate::run`]
/// returns or [`ReportWire::decode`] reads back has them; one read from plain JSON does not.
pub fn merge(parts: &[LoadReport]) -> LoadReport {
    assert!(!parts.is_empty(), "merge of no load reports");
    let mut latency = new_histogram();
    for p in parts {
        let h = p
            .latency_histogram
            .as_ref()
            .expect("a load report to merge carries its latency histogram");
        latency
            .add(h)
            .expect("latency histograms share their bounds");
    }
    let uncorrected = if parts.iter().all(|p| p.uncorrected_histogram.is_some()) {
        let mut u = new_histogram();
        for h in parts
            .iter()
            .filter_map(|p| p.uncorrected_histogram.as_ref())
        {
            u.add(h).expect("latency histograms share their bounds");
        }
        Some(u)
    } else {
        None
    };

    let sum_u64 = |f: fn(&LoadReport) -> u64| parts.iter().map(f).sum::<u64>();
    let sum_f64 = |f: fn(&LoadReport) -> f64| parts.iter().map(f).sum::<f64>();
    let max_f64 = |f: fn(&LoadReport) -> f64| parts.iter().map(f).fold(0.0, f64::max);

    let mut status_counts = BTreeMap::new();
    for p in parts {
        for (&code, &n) in &p.status_counts {
            *status_counts.entry(code).or_insert(0) += n;
        }
    }
    let measured_secs = max_f64(|p| p.measured_secs);
    let client_cpu_secs = sum_f64(|p| p.client_cpu_secs);
    let client_cores: usize = parts.iter().map(|p| p.client_cores).sum();
    let client_cpu_pct = if measured_secs > 0.0 && client_cores > 0 {
        100.0 * client_cpu_secs / (measured_secs * client_cores as f64)
    } else {
        0.0
    };
    let cancelled = parts.iter().any(|p| p.cancelled);
    let (tls, tls_histogram) = crate::tls::merge_reports(parts);
    let mut merged = LoadReport {
        url: parts[0].url.clone(),
        connections: parts.iter().map(|p| p.connections).sum(),
        threads: parts.iter().map(|p| p.threads).sum(),
        pipeline: parts.iter().map(|p| p.pipeline).max().unwrap_or(1),
        warmup_secs: max_f64(|p| p.warmup_secs),
        measured_secs,
        cancelled,
        requests: sum_u64(|p| p.requests),
        bytes_read: sum_u64(|p| p.bytes_read),
        rps: sum_f64(|p| p.rps),
        throughput_mib_s: sum_f64(|p| p.throughput_mib_s),
        latency: LatencyStats::from_histogram(&latency),
        latency_uncorrected: uncorrected.as_ref().map(LatencyStats::from_histogram),
        status_counts,
        bad_responses: sum_u64(|p| p.bad_responses),
        errors: merge_errors(parts),
        parse_failures: merge_parse_failures(parts),
        in_flight_at_end: sum_u64(|p| p.in_flight_at_end),
        abandoned: sum_u64(|p| p.abandoned),
        drain_cut: cancelled && parts.iter().any(|p| p.drain_cut),
        outside_window: OutsideWindow {
            requests: sum_u64(|p| p.outside_window.requests),
            bytes: sum_u64(|p| p.outside_window.bytes),
        },
        timeline: merge_timelines(parts),
        window_opened_at: parts.iter().filter_map(|p| p.window_opened_at).min(),
        rate: merge_rates(parts),
        tls,
        io: merge_io(parts),
        http2: crate::h2::merge_reports(parts),
        mix: crate::mix_report::merge(&parts.iter().map(|p| p.mix.as_slice()).collect::<Vec<_>>()),
        client_cpu_pct,
        client_cpu_secs,
        client_cores,
        warnings: Vec::new(),
        latency_histogram: Some(latency),
        uncorrected_histogram: uncorrected,
        tls_histogram,
    };
    merged.warnings = merged.compute_warnings();
    add_saturated_parts(parts, &mut merged.warnings);
    merged
}

/// The I/O paths the parts ran on, each named once in sorted order (`None` when none said).
fn merge_io(parts: &[LoadReport]) -> Option<String> {
    let paths: std::collections::BTreeSet<&str> =
        parts.iter().filter_map(|p| p.io.as_deref()).collect();
    (!paths.is_empty()).then(|| paths.into_iter().collect::<Vec<_>>().join(","))
}

/// The pooled CPU share hides one saturated client among idle ones: each one says so.
fn add_saturated_parts(parts: &[LoadReport], warnings: &mut Vec<LoadWarning>) {
    if parts.len() < 2 {
        return;
    }
    for (i, p) in parts.iter().enumerate() {
        if p.client_cpu_pct >= SATURATED_PCT {
            warnings.push(LoadWarning {
                kind: Cow::Borrowed("client_saturated"),
                message: format!(
                    "load client {} of {} used {:.0}% of its {} core(s): its figures may measure \
                     the client, not the server",
                    i + 1,
                    parts.len(),
                    p.client_cpu_pct,
                    p.client_cores
                ),
            });
        }
    }
}

fn merge_errors(parts: &[LoadReport]) -> ErrorCounts {
    parts
        .iter()
        .fold(ErrorCounts::default(), |a, p| ErrorCounts {
            connect: a.connect + p.errors.connect,
            read: a.read + p.errors.read,
            write: a.write + p.errors.write,
            timeout: a.timeout + p.errors.timeout,
            parse: a.parse + p.errors.parse,
            closed: a.closed + p.errors.closed,
            tls: a.tls + p.errors.tls,
            reset: a.reset + p.errors.reset,
            goaway: a.goaway + p.errors.goaway,
        })
}

/// Counted by reason, the first example of each kept, at most as many reasons as one run keeps.
fn merge_parse_failures(parts: &[LoadReport]) -> Vec<ParseFailure> {
    let mut out: Vec<ParseFailure> = Vec::new();
    for f in parts.iter().flat_map(|p| &p.parse_failures) {
        let kept = out.len();
        match out.iter_mut().find(|m| m.reason == f.reason) {
            Some(m) => m.count += f.count,
            None if kept < MAX_PARSE_REASONS => out.push(f.clone()),
            None => {}
        }
    }
    out
}

/// Second by second: responses and errors summed, the maximum the largest, the mean weighted by
/// each part's responses, and the 99th percentile the largest of the parts' (an upper bound of
/// the union's, as each part's is already: the per-second histograms do not travel).
fn merge_timelines(parts: &[LoadReport]) -> Vec<TimelineSecond> {
    let seconds = parts.iter().map(|p| p.timeline.len()).max().unwrap_or(0);
    (0..seconds)
        .map(|i| {
            let here: Vec<&TimelineSecond> =
                parts.iter().filter_map(|p| p.timeline.get(i)).collect();
            let max_of = |f: fn(&TimelineSecond) -> Option<f64>| {
                here.iter().filter_map(|s| f(s)).reduce(f64::max)
            };
            let with_mean: Vec<(f64, f64)> = here
                .iter()
                .filter_map(|s| s.latency_mean_ms.map(|m| (m, s.requests as f64)))
                .collect();
            let weight: f64 = with_mean.iter().map(|(_, w)| w).sum();
            let latency_mean_ms = match with_mean.len() {
                0 => None,
                n if weight == 0.0 => {
                    Some(with_mean.iter().map(|(m, _)| m).sum::<f64>() / n as f64)
                }
                _ => Some(with_mean.iter().map(|(m, w)| m * w).sum::<f64>() / weight),
            };
            TimelineSecond {
                second: i as u32,
                requests: here.iter().map(|s| s.requests).sum(),
                errors: here.iter().map(|s| s.errors).sum(),
                latency_mean_ms: latency_mean_ms.map(|ms| (ms * 1000.0).round() / 1000.0),
                latency_p99_ms: max_of(|s| s.latency_p99_ms),
                latency_max_ms: max_of(|s| s.latency_max_ms),
            }
        })
        .collect()
}

fn merge_rates(parts: &[LoadReport]) -> Option<RateReport> {
    let rates: Vec<&RateReport> = parts.iter().filter_map(|p| p.rate.as_ref()).collect();
    if rates.is_empty() {
        return None;
    }
    Some(RateReport {
        offered: rates.iter().map(|r| r.offered).sum(),
        achieved: rates.iter().map(|r| r.achieved).sum(),
        waited_for_connection: rates.iter().map(|r| r.waited_for_connection).sum(),
        not_sent: rates.iter().map(|r| r.not_sent).sum(),
        max_schedule_lag_ms: rates
            .iter()
            .map(|r| r.max_schedule_lag_ms)
            .fold(0.0, f64::max),
    })
}

/// A load report as it travels between hosts in JSON: the report, and its latency histograms
/// in HdrHistogram's standard V2 compressed encoding, base64. `window_opened_at` (a monotonic
/// instant of the host that measured) does not travel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReportWire {
    pub report: LoadReport,
    /// The corrected latency histogram (µs).
    pub latency_hdr: String,
    /// The uncorrected one, open model only.
    pub uncorrected_hdr: Option<String>,
    /// The TLS handshake times (µs), https:// only.
    #[serde(default)]
    pub tls_hdr: Option<String>,
    /// A request mix: each request's latency histogram (µs), in the mix's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix_hdr: Vec<String>,
}

impl ReportWire {
    /// The wire form of `report`; fails when it carries no latency histogram.
    pub fn encode(report: &LoadReport) -> Result<ReportWire, WireError> {
        let latency = report
            .latency_histogram
            .as_ref()
            .ok_or(WireError::NoHistogram)?;
        Ok(ReportWire {
            report: LoadReport {
                latency_histogram: None,
                uncorrected_histogram: None,
                window_opened_at: None,
                tls_histogram: None,
                mix: report
                    .mix
                    .iter()
                    .map(|r| crate::RequestReport {
                        latency_histogram: None,
                        ..r.clone()
                    })
                    .collect(),
                ..report.clone()
            },
            latency_hdr: encode_histogram(latency)?,
            uncorrected_hdr: report
                .uncorrected_histogram
                .as_ref()
                .map(encode_histogram)
                .transpose()?,
            tls_hdr: report
                .tls_histogram
                .as_ref()
                .map(encode_histogram)
                .transpose()?,
            mix_hdr: report
                .mix
                .iter()
                .filter_map(|r| r.latency_histogram.as_ref())
                .map(encode_histogram)
                .collect::<Result<_, _>>()?,
        })
    }

    /// The report with its histograms, checked against the figures that came with them.
    pub fn decode(self) -> Result<LoadReport, WireError> {
        let latency = decode_histogram(&self.latency_hdr)?;
        if latency.len() != self.report.latency.count {
            return Err(WireError::LatencyCount {
                holds: latency.len(),
                says: self.report.latency.count,
            });
        }
        let uncorrected = self
            .uncorrected_hdr
            .as_deref()
            .map(decode_histogram)
            .transpose()?;
        if uncorrected.is_some() != self.report.latency_uncorrected.is_some() {
            return Err(WireError::UncorrectedMismatch);
        }
        let tls = self.tls_hdr.as_deref().map(decode_histogram).transpose()?;
        match (&tls, &self.report.tls) {
            (None, None) => {}
            (Some(h), Some(t)) if h.len() == t.handshakes => {}
            (Some(h), Some(t)) => {
                return Err(WireError::TlsCount {
                    holds: h.len(),
                    says: t.handshakes,
                })
            }
            _ => return Err(WireError::TlsMismatch),
        }
        let mut report = self.report;
        if report.mix.len() == self.mix_hdr.len() {
            for (r, text) in report.mix.iter_mut().zip(&self.mix_hdr) {
                let h = decode_histogram(text)?;
                if h.len() != r.latency.count {
                    return Err(WireError::LatencyCount {
                        holds: h.len(),
                        says: r.latency.count,
                    });
                }
                r.latency_histogram = Some(h);
            }
        }
        Ok(LoadReport {
            latency_histogram: Some(latency),
            uncorrected_histogram: uncorrected,
            tls_histogram: tls,
            window_opened_at: None,
            ..report
        })
    }
}

fn encode_histogram(h: &Histogram<u64>) -> Result<String, WireError> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .map_err(|e| WireError::Encode(format!("{e:?}")))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A histogram with the engine's bounds, so it merges with any other report's.
fn decode_histogram(text: &str) -> Result<Histogram<u64>, WireError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(WireError::NotBase64)?;
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| WireError::Decode(format!("{e:?}")))?;
    let reference = new_histogram();
    if h.low() != reference.low()
        || h.high() != reference.high()
        || h.sigfig() != reference.sigfig()
    {
        return Err(WireError::Bounds {
            low: h.low(),
            high: h.high(),
            sigfig: h.sigfig(),
            want_sigfig: reference.sigfig(),
        });
    }
    Ok(h)
}

/// Why a report could not cross the wire: its histograms are missing, unreadable, or disagree
/// with the figures sent beside them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The report to send has no latency histogram.
    #[error("the load report carries no latency histogram")]
    NoHistogram,
    /// A histogram could not be serialized (the serializer's own words).
    #[error("encoding a latency histogram: {0}")]
    Encode(String),
    /// A histogram's text is not base64.
    #[error("a latency histogram is not valid base64: {0}")]
    NotBase64(base64::DecodeError),
    /// A histogram's bytes do not deserialize (the deserializer's own words).
    #[error("a latency histogram does not decode: {0}")]
    Decode(String),
    /// A histogram made with other bounds than the engine's, which would not merge.
    #[error("a latency histogram has bounds {low}..{high} µs at {sigfig} digits, not 1..{MAX_US} at {want_sigfig}")]
    Bounds {
        low: u64,
        high: u64,
        sigfig: u8,
        want_sigfig: u8,
    },
    /// The latency histogram's count differs from the report's.
    #[error("the latency histogram holds {holds} requests but the report says {says}")]
    LatencyCount { holds: u64, says: u64 },
    /// An uncorrected histogram without uncorrected figures, or the reverse.
    #[error("the uncorrected latency histogram does not match the report")]
    UncorrectedMismatch,
    /// The TLS histogram's count differs from the report's handshakes.
    #[error("the TLS handshake histogram holds {holds} handshakes but the report says {says}")]
    TlsCount { holds: u64, says: u64 },
    /// A TLS histogram without TLS figures, or the reverse.
    #[error("the TLS handshake histogram does not match the report")]
    TlsMismatch,
}

#[cfg(test)]
mod tests;
