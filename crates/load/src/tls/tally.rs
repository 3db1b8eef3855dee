//! Handshakes counted and timed: per worker while the run goes, then as the report's `tls`
//! section, which merges exactly across load hosts (counts summed, histograms added).

use crate::stats::new_histogram;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// One worker's handshakes.
pub(crate) struct TlsTally {
    /// Handshake times, µs: from TCP connect completion to handshake done.
    pub handshakes: Histogram<u64>,
    pub resumed: u64,
    /// Why the first failed handshake or TLS session failed, for the warning that counts them.
    pub first_failure: Option<String>,
}

impl TlsTally {
    /// No handshake yet.
    pub fn new() -> TlsTally {
        TlsTally {
            handshakes: new_histogram(),
            resumed: 0,
            first_failure: None,
        }
    }

    /// Adds another worker's handshakes (the first failure kept is the first one seen).
    pub fn merge(&mut self, o: &TlsTally) {
        self.handshakes
            .add(&o.handshakes)
            .expect("same histogram bounds");
        self.resumed += o.resumed;
        if self.first_failure.is_none() {
            self.first_failure.clone_from(&o.first_failure);
        }
    }
}

/// The TLS side of an https run: every handshake of the run, those that opened the connections
/// before the clock started included (a keep-alive run has no others).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TlsReport {
    /// Handshakes completed.
    pub handshakes: u64,
    /// Of those, how many resumed an earlier session (abbreviated: no certificate exchange).
    pub resumed: u64,
    /// Mean handshake time, ms (TCP connect completion to handshake done, monotonic clock);
    /// `None` when no handshake completed.
    pub handshake_mean_ms: Option<f64>,
    /// Its 99th percentile, ms.
    pub handshake_p99_ms: Option<f64>,
    /// Its maximum, ms.
    pub handshake_max_ms: Option<f64>,
    /// Why the first failed handshake (or TLS session) failed, when any did.
    pub first_failure: Option<String>,
    /// The certificate was not verified (`insecure`): the run cannot tell it reached the
    /// server it meant to.
    #[serde(default)]
    pub insecure: bool,
}

impl TlsReport {
    /// The section for `handshakes` (µs) and the resumed count.
    pub fn from_histogram(
        h: &Histogram<u64>,
        resumed: u64,
        first_failure: Option<String>,
    ) -> TlsReport {
        let ms = |us: f64| us / 1000.0;
        let some = |v: f64| (!h.is_empty()).then_some(v);
        TlsReport {
            handshakes: h.len(),
            resumed,
            handshake_mean_ms: some(ms(h.mean())),
            handshake_p99_ms: some(ms(h.value_at_quantile(0.99) as f64)),
            handshake_max_ms: some(ms(h.max() as f64)),
            first_failure,
            insecure: false,
        }
    }
}

/// The `tls` section of reports measured apart, merged: counts summed, handshake times from the
/// added histograms, the first failure of the first part that had one. `None` when no part ran
/// over TLS; parts without their histogram (read from plain JSON) add their counts only.
pub(crate) fn merge_reports(
    parts: &[crate::LoadReport],
) -> (Option<TlsReport>, Option<Histogram<u64>>) {
    let with_tls: Vec<&crate::LoadReport> = parts.iter().filter(|p| p.tls.is_some()).collect();
    if with_tls.is_empty() {
        return (None, None);
    }
    let mut h = new_histogram();
    for p in &with_tls {
        if let Some(ph) = &p.tls_histogram {
            h.add(ph).expect("handshake histograms share their bounds");
        }
    }
    let sections = || with_tls.iter().filter_map(|p| p.tls.as_ref());
    let resumed = sections().map(|t| t.resumed).sum();
    let first_failure = sections().find_map(|t| t.first_failure.clone());
    let mut report = TlsReport::from_histogram(&h, resumed, first_failure);
    report.handshakes = sections().map(|t| t.handshakes).sum();
    report.insecure = sections().any(|t| t.insecure);
    (Some(report), Some(h))
}
