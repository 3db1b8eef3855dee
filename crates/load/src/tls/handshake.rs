//! The first handshake, before any worker starts: a certificate or protocol the client refuses
//! stops the run with the reason, instead of a run whose every connection fails in silence.

use super::{describe, TlsClient};
use crate::LoadError;
use std::io::{self, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Completes one handshake on `tcp` (connected, blocking) within `timeout`, giving up when
/// `cancel` is set (checked every 50 ms). The client should not resume sessions, so the run's
/// own first handshakes are full ones.
pub(crate) fn check_handshake(
    url: &str,
    mut tcp: TcpStream,
    client: &TlsClient,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<(), LoadError> {
    let fail = |reason: String| LoadError::Tls {
        url: url.to_string(),
        reason,
    };
    let start = Instant::now();
    let _ = tcp.set_nodelay(true);
    let slice = Duration::from_millis(50);
    tcp.set_read_timeout(Some(slice))
        .and_then(|()| tcp.set_write_timeout(Some(slice)))
        .map_err(|e| fail(e.to_string()))?;
    let mut session = client
        .connection()
        .map_err(|e| fail(describe(&e, client.insecure)))?;
    while session.is_handshaking() {
        if cancel.load(Ordering::Relaxed) {
            return Err(LoadError::Interrupted);
        }
        if start.elapsed() > timeout {
            return Err(fail(format!(
                "the handshake did not complete within {} ms",
                timeout.as_millis()
            )));
        }
        match session.complete_io(&mut tcp) {
            Ok((0, 0)) if session.is_handshaking() => {
                return Err(fail(
                    "the server closed the connection during the handshake".into(),
                ))
            }
            Ok(_) => {}
            Err(e) if crate::preflight::slice_ended(&e) => {}
            Err(e) => {
                return Err(fail(match super::rustls_error(&e) {
                    Some(t) => describe(t, client.insecure),
                    None if e.kind() == io::ErrorKind::UnexpectedEof => {
                        "the server closed the connection during the handshake".into()
                    }
                    None => e.to_string(),
                }))
            }
        }
    }
    if client.http2 && session.alpn_protocol() != Some(crate::h2::ALPN_H2) {
        let chose = session
            .alpn_protocol()
            .map_or("no protocol".to_string(), |p| {
                String::from_utf8_lossy(p).into_owned()
            });
        return Err(fail(format!(
            "the server did not agree to HTTP/2: ALPN chose {chose}, not h2 (does it serve \
             HTTP/2 on this port?)"
        )));
    }
    // A polite end: the server sees a closed session, not a reset. Its own end is awaited:
    // a TLS 1.3 server judges the client after the client's side of the handshake is done (a
    // certificate it requires and was not given), and its refusal is an alert that comes then.
    session.send_close_notify();
    let _ = session.complete_io(&mut tcp);
    let until = start.elapsed() + CLOSE_WAIT.min(timeout);
    let mut sink = [0u8; 4096];
    while start.elapsed() < until && !cancel.load(Ordering::Relaxed) {
        match session.read_tls(&mut tcp) {
            Ok(0) => break,
            Ok(_) => match session.process_new_packets() {
                Err(e) => return Err(fail(describe(&e, client.insecure))),
                Ok(state) if state.peer_has_closed() => break,
                Ok(_) => while matches!(session.reader().read(&mut sink), Ok(n) if n > 0) {},
            },
            Err(e) if crate::preflight::slice_ended(&e) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// How long the check waits for the server to end the session after the client ended it (a
/// server that keeps the connection open is not waited for longer).
const CLOSE_WAIT: Duration = Duration::from_millis(500);
