//! One blocking request on a fresh connection: readiness checks, validation, first-request latency.
//! https:// URLs are reached over TLS (ALPN `http/1.1`); readiness and metrics accept any
//! certificate (they ask whether the application answers), validation follows the load's
//! `insecure`.

use crate::parser::ResponseParser;
use crate::tls::{BlockingStream, TlsClient};
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
    /// From just before connecting to the last byte of the response (a TLS handshake included).
    pub latency: Duration,
    pub bytes_sent: u64,
    pub bytes_read: u64,
}

/// Sends one request on a new connection and reads the whole response, all within `timeout`.
/// Over https:// any certificate is accepted: this asks whether the server answers.
pub fn probe_request(
    url: &str,
    method: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
) -> Result<ProbeResponse, LoadError> {
    let sink = BodySink::new(None);
    exchange(url, method, headers, body, timeout, true, sink)
}

/// [`probe_request`], also searching the whole body for `find` as it streams past (the body is
/// never held in full, so validation works on answers of any size). Over https:// the
/// certificate is verified unless `insecure`, as the load verifies it.
pub fn probe_request_finding(
    url: &str,
    method: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
    find: Option<&[u8]>,
    insecure: bool,
) -> Result<ProbeResponse, LoadError> {
    let sink = BodySink::new(find);
    exchange(url, method, headers, body, timeout, insecure, sink)
}

/// [`probe_request_finding`] or [`probe_request_http2`], as one signature.
pub type ProbeFn = fn(
    &str,
    &str,
    &[(String, String)],
    Option<&[u8]>,
    Duration,
    Option<&[u8]>,
    bool,
) -> Result<ProbeResponse, LoadError>;

/// The probe that speaks as the load will: [`probe_request_http2`] for an HTTP/2 load, else
/// [`probe_request_finding`].
pub fn probe_request_as(http2: bool) -> ProbeFn {
    if http2 {
        probe_request_http2
    } else {
        probe_request_finding
    }
}

/// [`probe_request_finding`] over HTTP/2: h2 by ALPN for https://, h2c by prior knowledge for
/// http://, as an HTTP/2 load would speak to the server.
pub fn probe_request_http2(
    url: &str,
    method: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
    find: Option<&[u8]>,
    insecure: bool,
) -> Result<ProbeResponse, LoadError> {
    let target = url::parse(url)?;
    let req = crate::h2::H2Request::new(&target, method, headers, body)?;
    let (probe, mut stream, start) = Probe::open(url, &target, timeout, insecure, true)?;
    let mut session = crate::h2::Session::new();
    session.captured = Some(Vec::new());
    let mut sink = BodySink::new(find);
    let protocol = |reason: String| LoadError::Protocol {
        url: url.to_string(),
        reason,
    };
    let mut opened = false;
    let mut events = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut bytes_read = 0u64;
    loop {
        if !opened && session.room(1) > 0 {
            session.open_stream(&req);
            opened = true;
        }
        if !session.pending().is_empty() {
            stream
                .tcp()
                .set_write_timeout(Some(probe.left()?))
                .map_err(|e| probe.io_err(e))?;
            stream
                .write_all(session.pending())
                .map_err(|e| probe.io_err(e))?;
            let n = session.pending().len();
            session.written(n);
            stream.flush().map_err(|e| probe.io_err(e))?;
            // The first write completed the handshake: ALPN has chosen.
            if let BlockingStream::Tls(t) = &stream {
                if t.conn.alpn_protocol() != Some(crate::h2::ALPN_H2) {
                    return Err(LoadError::Tls {
                        url: url.to_string(),
                        reason: "the server did not agree to HTTP/2 (ALPN did not choose h2)"
                            .into(),
                    });
                }
            }
        }
        stream
            .tcp()
            .set_read_timeout(Some(probe.left()?))
            .map_err(|e| probe.io_err(e))?;
        let n = match stream.read(&mut buf) {
            Ok(0) if bytes_read == 0 => {
                return Err(LoadError::Closed {
                    url: url.to_string(),
                })
            }
            Ok(0) => {
                return Err(protocol(
                    "connection closed before the HTTP/2 response was complete".into(),
                ))
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(probe.io_err(e)),
        };
        bytes_read += n as u64;
        session
            .feed(&buf[..n], &req, &mut events)
            .map_err(|e| protocol(e.into_owned()))?;
        if let Some(kept) = session.captured.as_mut() {
            sink.take(kept);
            kept.clear();
        }
        for ev in events.drain(..) {
            match ev {
                crate::h2::Event::Response { status, .. } => {
                    return Ok(probe_response(
                        status,
                        sink,
                        start,
                        req.wire_len(),
                        bytes_read,
                    ))
                }
                crate::h2::Event::Reset { code, .. } => {
                    return Err(protocol(format!(
                        "the server reset the stream ({})",
                        crate::h2::error_name(code)
                    )))
                }
                // A goodbye that still covers the probe's stream (1): its answer follows.
                crate::h2::Event::GoAway { last, .. } if last >= 1 => {}
                crate::h2::Event::GoAway { code, .. } => {
                    return Err(protocol(format!(
                        "the server ended the connection (GOAWAY {})",
                        crate::h2::error_name(code)
                    )))
                }
            }
        }
    }
}

/// A GET whose whole body is kept, for endpoints read rather than loaded (a metrics page):
/// chunked or not, within `timeout`; a body larger than `max_body` bytes is an error, raised
/// as soon as it is exceeded (nothing more is read).
pub fn fetch_body(
    url: &str,
    timeout: Duration,
    max_body: usize,
) -> Result<ProbeResponse, LoadError> {
    let mut sink = BodySink::new(None);
    sink.keep = max_body;
    sink.max = Some(max_body as u64);
    exchange(url, "GET", &[], None, timeout, true, sink)
}

/// One request on a new connection, its response's body going to `sink`.
fn exchange(
    url: &str,
    method: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    timeout: Duration,
    insecure: bool,
    mut sink: BodySink<'_>,
) -> Result<ProbeResponse, LoadError> {
    let target = url::parse(url)?;
    let req = request::serialize(&target, method, headers, body, true)?;
    let (probe, mut stream, start) = Probe::open(url, &target, timeout, insecure, false)?;
    stream
        .tcp()
        .set_write_timeout(Some(probe.left()?))
        .map_err(|e| probe.io_err(e))?;
    stream.write_all(&req).map_err(|e| probe.io_err(e))?;
    let (status, bytes_read) = probe.read_response(&mut stream, method == "HEAD", &mut sink)?;
    Ok(probe_response(status, sink, start, req.len(), bytes_read))
}

fn probe_response(
    status: u16,
    sink: BodySink<'_>,
    start: Instant,
    sent: usize,
    bytes_read: u64,
) -> ProbeResponse {
    ProbeResponse {
        status,
        body: sink.kept,
        body_len: sink.len,
        found: sink.find.map(|_| sink.found),
        latency: start.elapsed(),
        bytes_sent: sent as u64,
        bytes_read,
    }
}

/// One probe's URL and deadline, which every step's errors and timeouts refer to.
struct Probe<'a> {
    url: &'a str,
    timeout: Duration,
    deadline: Instant,
    insecure: bool,
}

impl<'a> Probe<'a> {
    /// Starts the clock and opens `target`'s connection (TLS over it for https://, offering h2
    /// by ALPN when `http2`): the probe, its stream and when it started.
    fn open(
        url: &'a str,
        target: &url::Target,
        timeout: Duration,
        insecure: bool,
        http2: bool,
    ) -> Result<(Probe<'a>, BlockingStream, Instant), LoadError> {
        let tls = match target.tls {
            true => Some(TlsClient::new(url, target, insecure, 0, http2)?),
            false => None,
        };
        let start = Instant::now();
        let probe = Probe {
            url,
            timeout,
            deadline: start + timeout,
            insecure,
        };
        let tcp = probe.connect(target)?;
        let _ = tcp.set_nodelay(true);
        let stream = BlockingStream::new(tcp, tls.as_ref()).map_err(|e| LoadError::Tls {
            url: url.to_string(),
            reason: crate::tls::describe(&e, insecure),
        })?;
        Ok((probe, stream, start))
    }

    fn timed_out(&self) -> LoadError {
        LoadError::Timeout {
            url: self.url.to_string(),
            timeout_ms: self.timeout.as_millis() as u64,
        }
    }

    /// An I/O failure; a socket timeout is the probe's timeout, a TLS failure says what failed.
    fn io_err(&self, source: std::io::Error) -> LoadError {
        if let Some(e) = crate::tls::rustls_error(&source) {
            return LoadError::Tls {
                url: self.url.to_string(),
                reason: crate::tls::describe(e, self.insecure),
            };
        }
        if matches!(
            source.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            self.timed_out()
        } else {
            LoadError::Io {
                url: self.url.to_string(),
                source,
            }
        }
    }

    /// Time left before the deadline; none left is the timeout.
    fn left(&self) -> Result<Duration, LoadError> {
        let l = self.deadline.saturating_duration_since(Instant::now());
        if l.is_zero() {
            Err(self.timed_out())
        } else {
            Ok(l)
        }
    }

    /// Connects to the first of the target's addresses that answers.
    fn connect(&self, target: &url::Target) -> Result<TcpStream, LoadError> {
        let mut last = None;
        for addr in &target.addrs {
            match TcpStream::connect_timeout(addr, self.left()?) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some((*addr, e)),
            }
        }
        let (addr, source) = last.expect("at least one address");
        Err(LoadError::Connect {
            url: self.url.to_string(),
            addr,
            source,
        })
    }

    /// Reads until one response is complete; its status and the bytes read.
    fn read_response(
        &self,
        stream: &mut BlockingStream,
        head_request: bool,
        sink: &mut BodySink<'_>,
    ) -> Result<(u16, u64), LoadError> {
        let mut parser = ResponseParser::new(head_request);
        let mut buf = vec![0u8; 16 * 1024];
        let mut bytes_read = 0u64;
        let protocol = |reason: String| LoadError::Protocol {
            url: self.url.to_string(),
            reason,
        };
        loop {
            stream
                .tcp()
                .set_read_timeout(Some(self.left()?))
                .map_err(|e| self.io_err(e))?;
            let n = match stream.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_err(e)),
            };
            if n == 0 {
                return match parser.eof() {
                    Some(r) => Ok((r.status, bytes_read)),
                    None if bytes_read == 0 => Err(LoadError::Closed {
                        url: self.url.to_string(),
                    }),
                    None => Err(protocol(
                        "connection closed before the response was complete".into(),
                    )),
                };
            }
            bytes_read += n as u64;
            let mut off = 0;
            while off < n {
                let (used, resp) = parser
                    .feed(&buf[off..n], &mut |b: &[u8]| sink.take(b))
                    .map_err(|e| protocol(e.to_string()))?;
                off += used;
                if let Some(max) = sink.max.filter(|&m| sink.len > m) {
                    return Err(protocol(format!("the body is larger than {max} bytes")));
                }
                if let Some(r) = resp {
                    return Ok((r.status, bytes_read));
                }
            }
        }
    }
}

/// Where a probe's body goes: a bounded prefix kept, the length counted, a search run across
/// chunk boundaries (keeping only the needle's length of tail between chunks).
struct BodySink<'a> {
    kept: Vec<u8>,
    /// How much of the body is kept.
    keep: usize,
    /// A body longer than this is refused.
    max: Option<u64>,
    len: u64,
    find: Option<&'a [u8]>,
    found: bool,
    tail: Vec<u8>,
}

impl<'a> BodySink<'a> {
    fn new(find: Option<&'a [u8]>) -> Self {
        BodySink {
            kept: Vec::new(),
            keep: PROBE_BODY_KEPT,
            max: None,
            len: 0,
            find,
            found: find.is_some_and(|f| f.is_empty()),
            tail: Vec::new(),
        }
    }

    fn take(&mut self, b: &[u8]) {
        self.len += b.len() as u64;
        let room = self.keep.saturating_sub(self.kept.len());
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
