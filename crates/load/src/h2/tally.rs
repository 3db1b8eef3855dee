//! The HTTP/2 side of a run, counted per worker and reported: what the server announced and
//! how it ended streams and connections, which merges across workers and load hosts.

use super::frame::error_name;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One worker's HTTP/2 tallies.
#[derive(Debug, Default, Clone)]
pub(crate) struct H2Tally {
    pub goaways: u64,
    /// RST_STREAM and GOAWAY frames by kind and error code, e.g. `RST_STREAM REFUSED_STREAM`.
    pub codes: BTreeMap<String, u64>,
    /// The smallest SETTINGS_MAX_CONCURRENT_STREAMS a server announced.
    pub server_max_streams: Option<u32>,
    /// Why the first connection that failed at the protocol level failed.
    pub first_failure: Option<String>,
}

impl H2Tally {
    /// Counts a RST_STREAM or GOAWAY frame with its error code.
    pub fn frame(&mut self, kind: &str, code: u32) {
        *self
            .codes
            .entry(format!("{kind} {}", error_name(code)))
            .or_insert(0) += 1;
    }

    /// Notes a server's stream limit.
    pub fn limit(&mut self, max: u32) {
        self.server_max_streams = Some(self.server_max_streams.map_or(max, |m| m.min(max)));
    }

    /// Adds another worker's tallies (the first failure kept is the first one seen).
    pub fn merge(&mut self, o: &H2Tally) {
        self.goaways += o.goaways;
        for (k, n) in &o.codes {
            *self.codes.entry(k.clone()).or_insert(0) += n;
        }
        if let Some(m) = o.server_max_streams {
            self.limit(m);
        }
        if self.first_failure.is_none() {
            self.first_failure.clone_from(&o.first_failure);
        }
    }
}

/// HTTP/2 runs only: how the connections went.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct H2Report {
    /// `h2` (over TLS, chosen by ALPN) or `h2c` (cleartext, by prior knowledge).
    pub protocol: String,
    /// Concurrent streams asked for per connection.
    pub streams: usize,
    /// The smallest limit on concurrent streams a server announced (SETTINGS); `None` when
    /// none was announced.
    pub server_max_streams: Option<u32>,
    /// GOAWAY frames received: connections the server ended (gracefully or not).
    pub goaways: u64,
    /// RST_STREAM and GOAWAY frames by kind and error code (`RST_STREAM REFUSED_STREAM`: 3).
    pub codes: BTreeMap<String, u64>,
    /// Why the first connection that broke the protocol failed, when one did.
    pub first_failure: Option<String>,
}

impl H2Report {
    /// The report of `t` for a run asking `streams` per connection.
    pub(crate) fn new(t: &H2Tally, tls: bool, streams: usize) -> H2Report {
        H2Report {
            protocol: if tls { "h2" } else { "h2c" }.into(),
            streams,
            server_max_streams: t.server_max_streams,
            goaways: t.goaways,
            codes: t.codes.clone(),
            first_failure: t.first_failure.clone(),
        }
    }
}

/// The HTTP/2 sections of reports measured apart, as one: counts summed, the smallest limit.
pub(crate) fn merge_reports(parts: &[crate::LoadReport]) -> Option<H2Report> {
    let mut it = parts.iter().filter_map(|p| p.http2.as_ref());
    let mut out = it.next()?.clone();
    for o in it {
        out.goaways += o.goaways;
        for (k, n) in &o.codes {
            *out.codes.entry(k.clone()).or_insert(0) += n;
        }
        out.server_max_streams = match (out.server_max_streams, o.server_max_streams) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        out.streams = out.streams.max(o.streams);
        if out.first_failure.is_none() {
            out.first_failure.clone_from(&o.first_failure);
        }
    }
    Some(out)
}
