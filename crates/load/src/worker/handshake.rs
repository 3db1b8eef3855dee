//! https://: the TLS handshake between TCP's connect and the first request, timed from the
//! connect's completion to the handshake's end (the monotonic clock) and counted, resumed or
//! full; a failure noted with its reason for the warning that counts it.

use super::Worker;
use crate::connection::ConnState;
use crate::transport::Transport;
use std::io;
use std::time::Instant;

/// Where a connection stands after its TCP connect completed or its handshake advanced.
pub(super) enum Step {
    /// Ready for requests.
    Open,
    /// The handshake waits for the socket.
    Pending,
    /// The handshake failed (its reason noted); the caller drops the connection.
    Failed,
}

impl Worker<'_> {
    /// TCP is connected: a plain connection is open; a TLS one starts its handshake.
    pub(super) fn tcp_connected(&mut self, idx: usize) -> Step {
        let c = &mut self.conns[idx];
        let Some(transport) = c.stream.take() else {
            return Step::Failed;
        };
        let _ = transport.tcp().set_nodelay(true);
        let client = if self.preconnecting {
            self.plan.tls_fresh
        } else {
            self.plan.tls
        };
        let Some(tls) = client else {
            c.stream = Some(transport);
            c.state = ConnState::Open;
            return self.open_protocol(idx);
        };
        let session = match tls.connection() {
            Ok(s) => s,
            Err(e) => {
                let why = crate::tls::describe(&e, tls.insecure);
                self.note_tls_failure(|| why);
                return Step::Failed;
            }
        };
        let c = &mut self.conns[idx];
        c.stream = Some(Transport::tls(transport.into_tcp(), session));
        c.state = ConnState::Handshaking;
        c.handshake_from = Some(Instant::now());
        self.advance_handshake(idx)
    }

    /// Moves the handshake on as far as the socket allows; records it once complete.
    pub(super) fn advance_handshake(&mut self, idx: usize) -> Step {
        let c = &mut self.conns[idx];
        let Some(transport) = c.stream.as_mut() else {
            return Step::Failed;
        };
        match transport.handshake() {
            Ok(true) => {
                let resumed = transport.resumed();
                c.state = ConnState::Open;
                if let (Some(from), Some(t)) = (c.handshake_from.take(), self.s.tls.as_mut()) {
                    let us = from.elapsed().as_micros() as u64;
                    t.handshakes.saturating_record(us);
                    t.resumed += u64::from(resumed);
                }
                self.open_protocol(idx)
            }
            Ok(false) => Step::Pending,
            Err(e) => {
                self.note_tls_error(&e);
                Step::Failed
            }
        }
    }

    /// In the run: a handshake event; the connection goes to work, waits, or is replaced.
    pub(super) fn on_handshake_event(&mut self, idx: usize, now: u64) {
        match self.advance_handshake(idx) {
            Step::Open => {
                self.start_connection(idx, now);
                if self.conns[idx].state == ConnState::Open && self.conns[idx].wants_write() {
                    self.flush(idx, now);
                }
            }
            Step::Pending => {}
            Step::Failed => self.kill(idx, Some(super::Kind::Tls), now),
        }
    }

    /// Keeps the reason of the worker's first TLS failure.
    pub(super) fn note_tls_error(&mut self, e: &io::Error) {
        let insecure = self.plan.tls.is_some_and(|t| t.insecure);
        self.note_tls_failure(|| match crate::tls::rustls_error(e) {
            Some(t) => crate::tls::describe(t, insecure),
            None => e.to_string(),
        });
    }

    fn note_tls_failure(&mut self, why: impl FnOnce() -> String) {
        if let Some(t) = self.s.tls.as_mut() {
            if t.first_failure.is_none() {
                t.first_failure = Some(why());
            }
        }
    }
}
