//! One blocking request on a fresh connection: readiness checks, validation, first-request latency.

use crate::parser::ResponseParser;
use crate::{request, url, LoadError};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// What one probe saw.
#[derive(Debug, Clone)]
pub struct ProbeResponse {
    pub status: u16,
    pub body: Vec<u8>,
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
    let mut parser = ResponseParser::new(method.eq_ignore_ascii_case("HEAD"));
    let mut body_out = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut bytes_read = 0u64;
    let sent = req.len() as u64;
    let done = |status: u16, body: Vec<u8>, bytes_read: u64| ProbeResponse {
        status,
        body,
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
                return Ok(done(r.status, body_out, bytes_read));
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
                .feed(&buf[off..n], &mut |b: &[u8]| body_out.extend_from_slice(b))
                .map_err(|e| LoadError::Protocol {
                    url: url.to_string(),
                    reason: e.to_string(),
                })?;
            off += used;
            if let Some(r) = resp {
                return Ok(done(r.status, body_out, bytes_read));
            }
        }
    }
}
