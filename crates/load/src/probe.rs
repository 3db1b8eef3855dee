//! One blocking request on a fresh connection: readiness checks, validation, first-request latency.

use crate::parser::ResponseParser;
use crate::{request, url, LoadError};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Body bytes a probe keeps; the rest is read (to time the whole response) and discarded, so a
/// huge answer costs no memory.
pub const PROBE_BODY_KEPT: usize = 64 * 1024;

/// What one probe saw.
#[derive(Debug, Clone)]
pub struct ProbeResponse {
    pub status: u16,
    /// The first [`PROBE_BODY_KEPT`] bytes of the body.
    pub body: Vec<u8>,
    /// The whole body's length (more than `body.len()` when the rest was discarded).
    pub body_len: u64,
    /// Whether the text searched for (see [`probe_request_finding`]) occurs anywhere in the
    /// whole body; None when nothing was searched for.
    pub found: Option<bool>,
    /// From just before connecting to the last byte of the response.
    pub latency: Duration,
    pub bytes_sent: u64,
    pub bytes_read: u64,
}

/// Sends one request on a new connection and reads the whole response, all within `timeout`.
pub fn probe_request(
    url: &str,
    method: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
) -> Result<ProbeResponse, LoadError> {
    probe_request_finding(url, method, headers, body, timeout, None)
}

/// [`probe_request`], also searching the whole body for `find` as it streams past (the body is
/// never held in full, so validation works on answers of any size).
pub fn probe_request_finding(
    url: &str,
    method: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
    find: Option<&[u8]>,
) -> Result<ProbeResponse, LoadError> {
    let target = url::parse(url)?;
    let req = request::serialize(&target, method, headers, body, true)?;
    let start = Instant::now();
    let deadline = start + timeout;
    let timed_out = || LoadError::Timeout {
        url: url.to_string(),
        timeout_ms: timeout.as_millis() as u64,
    };
    let io_err = |source: std::io::Error| {
        if matches!(
            source.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            timed_out()
        } else {
            LoadError::Io {
                url: url.to_string(),
                source,
            }
        }
    };
    let mut stream = None;
    let mut last = None;
    for addr in &target.addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        match TcpStream::connect_timeout(addr, left) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some((*addr, e)),
        }
    }
    let Some(mut stream) = stream else {
        let (addr, source) = last.expect("at least one address");
        return Err(LoadError::Connect {
            url: url.to_string(),
            addr,
            source,
        });
    };
    let _ = stream.set_nodelay(true);
    let left = |d: Instant| {
        let l = d.saturating_duration_since(Instant::now());
        if l.is_zero() {
            None
        } else {
            Some(l)
        }
    };
    stream
        .set_write_timeout(Some(left(deadline).ok_or_else(timed_out)?))
        .map_err(io_err)?;
    stream.write_all(&req).map_err(io_err)?;
    let mut parser = ResponseParser::new(method == "HEAD");
    let mut sink = BodySink::new(find);
    let mut buf = vec![0u8; 16 * 1024];
    let mut bytes_read = 0u64;
    let sent = req.len() as u64;
    let done = |status: u16, sink: BodySink, bytes_read: u64| ProbeResponse {
        status,
        body: sink.kept,
        body_len: sink.len,
        found: sink.find.map(|_| sink.found),
        latency: start.elapsed(),
        bytes_sent: sent,
        bytes_read,
    };
    loop {
        stream
            .set_read_timeout(Some(left(deadline).ok_or_else(timed_out)?))
            .map_err(io_err)?;
        let n = match stream.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(e)),
        };
        if n == 0 {
            if let Some(r) = parser.eof() {
                return Ok(done(r.status, sink, bytes_read));
            }
            return Err(LoadError::Protocol {
                url: url.to_string(),
                reason: "connection closed before the response was complete".into(),
            });
        }
        bytes_read += n as u64;
        let mut off = 0;
        while off < n {
            let (used, resp) = parser
                .feed(&buf[off..n], &mut |b: &[u8]| sink.take(b))
                .map_err(|e| LoadError::Protocol {
                    url: url.to_string(),
                    reason: e.to_string(),
                })?;
            off += used;
            if let Some(r) = resp {
                return Ok(done(r.status, sink, bytes_read));
            }
        }
    }
}

/// Where a probe's body goes: a bounded prefix kept, the length counted, a search run across
/// chunk boundaries (keeping only the needle's length of tail between chunks).
struct BodySink<'a> {
    kept: Vec<u8>,
    len: u64,
    find: Option<&'a [u8]>,
    found: bool,
    tail: Vec<u8>,
}

impl<'a> BodySink<'a> {
    fn new(find: Option<&'a [u8]>) -> Self {
        BodySink {
            kept: Vec::new(),
            len: 0,
            find,
            found: find.is_some_and(|f| f.is_empty()),
            tail: Vec::new(),
        }
    }

    fn take(&mut self, b: &[u8]) {
        self.len += b.len() as u64;
        let room = PROBE_BODY_KEPT.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&b[..room.min(b.len())]);
        let Some(needle) = self.find.filter(|_| !self.found) else {
            return;
        };
        self.tail.extend_from_slice(b);
        self.found = self.tail.windows(needle.len()).any(|w| w == needle);
        let keep = needle.len() - 1;
        if self.tail.len() > keep {
            self.tail.drain(..self.tail.len() - keep);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_sink_keeps_a_prefix_and_finds_across_chunks() {
        let mut s = BodySink::new(Some(b"needle"));
        for _ in 0..100 {
            s.take(&[b'x'; 1000]);
        }
        s.take(b"...nee");
        assert!(!s.found);
        s.take(b"dle...");
        assert!(s.found);
        assert_eq!(s.kept.len(), PROBE_BODY_KEPT);
        assert_eq!(s.len, 100_000 + 12);
    }
}
