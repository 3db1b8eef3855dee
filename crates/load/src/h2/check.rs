//! The first cleartext HTTP/2 exchange, before any worker starts: a server that does not speak
//! h2c on the port stops the run with the reason, instead of a run whose every connection fails.

use super::frame::{self, FrameHeader, HEADER_LEN};
use crate::LoadError;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Sends the connection preface on `tcp` (connected, blocking) and waits (at most `timeout`,
/// giving up when `cancel` is set) for the server's SETTINGS: what every HTTP/2 server sends
/// first.
pub(crate) fn check_h2c(
    url: &str,
    mut tcp: TcpStream,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<(), LoadError> {
    let refused = |reason: String| LoadError::Protocol {
        url: url.to_string(),
        reason,
    };
    let io_err = |source: io::Error| LoadError::Io {
        url: url.to_string(),
        source,
    };
    let start = Instant::now();
    let slice = Duration::from_millis(50);
    tcp.set_read_timeout(Some(slice)).map_err(io_err)?;
    tcp.set_write_timeout(Some(timeout)).map_err(io_err)?;
    let mut hello = frame::PREFACE.to_vec();
    frame::put_settings(&mut hello, &[(frame::SETTINGS_ENABLE_PUSH, 0)]);
    tcp.write_all(&hello).map_err(io_err)?;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < HEADER_LEN {
        if cancel.load(Ordering::Relaxed) {
            return Err(LoadError::Interrupted);
        }
        if start.elapsed() > timeout {
            return Err(LoadError::Timeout {
                url: url.to_string(),
                timeout_ms: timeout.as_millis() as u64,
            });
        }
        match tcp.read(&mut buf) {
            Ok(0) => {
                return Err(refused(
                    "the server closed the connection after HTTP/2's preface: it does not \
                     speak cleartext HTTP/2 (h2c by prior knowledge) on this port"
                        .into(),
                ))
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if crate::preflight::slice_ended(&e) => {}
            Err(e) => return Err(io_err(e)),
        }
    }
    if got.starts_with(b"HTTP/") {
        return Err(refused(
            "the server answered HTTP/2's preface in HTTP/1.x: it does not speak cleartext \
             HTTP/2 (h2c by prior knowledge) on this port"
                .into(),
        ));
    }
    let h = FrameHeader::parse(&got);
    if h.kind != frame::SETTINGS || h.stream != 0 || h.flags & frame::ACK != 0 {
        return Err(refused(format!(
            "the server's first frame was not SETTINGS (type {}): it does not speak HTTP/2",
            h.kind
        )));
    }
    // A polite end: GOAWAY, no error.
    let mut bye = Vec::new();
    frame::put_header(&mut bye, 8, frame::GOAWAY, 0, 0);
    bye.extend_from_slice(&[0; 8]);
    let _ = tcp.write_all(&bye);
    Ok(())
}
