//! Each request of a mix reported on its own (`load.req.NAME.*`) beside the mix's totals: its
//! rate, latency, errors and statuses over the same measured window.

use crate::report::LatencyStats;
use crate::stats::{new_histogram, RequestStats};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The prefix of a mix's per-request measurement ids: `load.req.NAME.rps`.
pub const REQUEST_ID_PREFIX: &str = "load.req.";

/// The figures of one request of a mix.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RequestReport {
    pub name: String,
    /// Its responses completed in the measured window, any status.
    pub requests: u64,
    pub rps: f64,
    /// Its answers' latency and its requests given up, as the run's `latency` counts them.
    pub latency: LatencyStats,
    /// Its requests of the window that got no answer (timed out, lost with their connection,
    /// reset or refused). Requests the open model gave up before sending (no connection came
    /// free) were never chosen, so they count in the run's totals only.
    pub errors: u64,
    #[serde(deserialize_with = "crate::report::status_keys")]
    pub status_counts: BTreeMap<u16, u64>,
    /// Its responses whose status is not 2xx or 3xx.
    pub bad_responses: u64,
    /// The histogram `latency` was read from (µs), so reports measured apart merge exactly.
    #[serde(skip)]
    pub latency_histogram: Option<Histogram<u64>>,
}

impl RequestReport {
    /// The report of request `name` from what the workers measured over `measured_secs`.
    pub(crate) fn build(name: &str, s: &RequestStats, measured_secs: f64) -> RequestReport {
        let status_counts: BTreeMap<u16, u64> = s.status.iter().copied().collect();
        RequestReport {
            name: name.to_string(),
            requests: s.requests,
            rps: per_sec(s.requests, measured_secs),
            latency: LatencyStats::from_histogram(&s.latency),
            errors: s.errors,
            bad_responses: bad(&status_counts),
            status_counts,
            latency_histogram: Some(s.latency.clone()),
        }
    }

    /// Its measurement ids and values (latency ids absent when nothing was recorded).
    pub fn measurements(&self) -> Vec<(String, f64)> {
        let id = |figure: &str| format!("{REQUEST_ID_PREFIX}{}.{figure}", self.name);
        let mut m = vec![
            (id("rps"), self.rps),
            (id("requests"), self.requests as f64),
            (id("errors"), self.errors as f64),
            (id("bad_responses"), self.bad_responses as f64),
        ];
        if self.latency.count > 0 {
            let l = &self.latency;
            m.push((id("latency.p50"), l.p50_ms));
            m.push((id("latency.p90"), l.p90_ms));
            m.push((id("latency.p99"), l.p99_ms));
            m.push((id("latency.max"), l.max_ms));
        }
        m
    }
}

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn bad(status: &BTreeMap<u16, u64>) -> u64 {
    status
        .iter()
        .filter(|(&code, _)| !(200..400).contains(&code))
        .map(|(_, &n)| n)
        .sum()
}

/// The mixes of reports measured apart (one per load host), request by request: counts and
/// rates summed, latency from the merged histograms (from the largest part's figures when a
/// part carries none).
pub(crate) fn merge(parts: &[&[RequestReport]]) -> Vec<RequestReport> {
    let Some(first) = parts.first() else {
        return Vec::new();
    };
    first
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let same: Vec<&RequestReport> = parts
                .iter()
                .filter_map(|p| p.get(i).filter(|o| o.name == r.name))
                .collect();
            let mut status_counts = BTreeMap::new();
            for o in &same {
                for (&code, &n) in &o.status_counts {
                    *status_counts.entry(code).or_insert(0) += n;
                }
            }
            let histogram = same.iter().all(|o| o.latency_histogram.is_some()).then(|| {
                let mut h = new_histogram();
                for o in &same {
                    if let Some(p) = &o.latency_histogram {
                        h.add(p).expect("latency histograms share their bounds");
                    }
                }
                h
            });
            let latency = match &histogram {
                Some(h) => LatencyStats::from_histogram(h),
                None => same
                    .iter()
                    .max_by_key(|o| o.latency.count)
                    .map(|o| o.latency.clone())
                    .unwrap_or_default(),
            };
            RequestReport {
                name: r.name.clone(),
                requests: same.iter().map(|o| o.requests).sum(),
                rps: same.iter().map(|o| o.rps).sum(),
                latency,
                errors: same.iter().map(|o| o.errors).sum(),
                bad_responses: bad(&status_counts),
                status_counts,
                latency_histogram: histogram,
            }
        })
        .collect()
}
