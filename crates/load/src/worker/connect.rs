//! Connections: opened (TLS handshakes included) before the clock starts, reopened after a
//! failure, dropped when they fail or time out (counting what the window loses with them).

use super::handshake::Step;
use super::{Kind, Worker, CONNECT_RETRY_NS, MAX_SLEEP_NS};
use crate::connection::ConnState;
use crate::transport::Transport;
use mio::{Events, Interest, Token};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

impl Worker<'_> {
    /// Opens every connection before the clock starts (bounded by the timeout, and cut short by
    /// `cancel`), so neither the window nor the open-model schedule pays for TCP or TLS
    /// handshakes.
    pub(super) fn preconnect(&mut self, cancel: &AtomicBool) -> io::Result<()> {
        let start = Instant::now();
        let limit = Duration::from_nanos(self.plan.timeout_ns);
        let mut pending = 0usize;
        let mut idle = Vec::new();
        for idx in std::mem::take(&mut self.reconnect) {
            match self.open_stream(idx) {
                Ok(mut stream) => {
                    self.poll.registry().register(
                        &mut stream,
                        Token(idx),
                        Interest::READABLE | Interest::WRITABLE,
                    )?;
                    self.conns[idx].stream = Some(Transport::plain(stream));
                    self.conns[idx].state = ConnState::Connecting;
                    pending += 1;
                }
                Err(_) => idle.push(idx),
            }
        }
        let mut events = Events::with_capacity(1024);
        while pending > 0 && !cancel.load(Ordering::Relaxed) {
            let left = limit.saturating_sub(start.elapsed());
            if left.is_zero() {
                break;
            }
            let slice = left.min(Duration::from_nanos(MAX_SLEEP_NS));
            match self.poll.poll(&mut events, Some(slice)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in events.iter() {
                let idx = ev.token().0;
                let step = match self.conns[idx].state {
                    ConnState::Connecting => {
                        let Some(stream) = self.conns[idx].stream.as_ref().map(|s| s.tcp()) else {
                            continue;
                        };
                        let failed =
                            ev.is_error() || matches!(stream.take_error(), Ok(Some(_)) | Err(_));
                        if failed {
                            Step::Failed
                        } else if stream.peer_addr().is_ok() {
                            self.tcp_connected(idx)
                        } else {
                            Step::Pending
                        }
                    }
                    ConnState::Handshaking => self.advance_handshake(idx),
                    _ => continue,
                };
                match step {
                    Step::Pending => {}
                    Step::Open => pending -= 1,
                    Step::Failed => {
                        self.conns[idx].reset();
                        idle.push(idx);
                        pending -= 1;
                    }
                }
            }
        }
        // Failed ones retry (and count) once the clock runs; slow ones time out as usual.
        self.reconnect = idle;
        Ok(())
    }

    /// At t0: put connections opened by `preconnect` to work.
    pub(super) fn activate_open_connections(&mut self) {
        for idx in 0..self.conns.len() {
            if self.conns[idx].state == ConnState::Open {
                self.start_connection(idx, 0);
            }
        }
    }

    /// A connection just became usable: fill its pipeline (closed model) or offer its slots.
    pub(super) fn start_connection(&mut self, idx: usize, now: u64) {
        if self.conns[idx].h2.as_ref().is_some_and(|s| !s.settled()) {
            // HTTP/2 starts once the server's SETTINGS (and its stream limit) arrive. They may
            // be here already: readiness reported while the connection was connecting or
            // handshaking (or before the clock) is not reported again, and the handshake's last
            // read can leave them in TLS's buffer. Reading now starts the connection if so.
            self.on_readable(idx, now, false);
            return;
        }
        if now >= self.plan.end && self.schedule.is_none() {
            // Closed model after the window: nothing new is sent.
            return;
        }
        if self.schedule.is_some() {
            let g = self.conns[idx].generation;
            for _ in 0..self.plan.pipeline {
                self.free.push_back((idx as u32, g));
            }
        } else {
            for _ in 0..self.conns[idx].capacity(self.plan.pipeline) {
                self.enqueue(idx, now, now);
            }
            self.flush(idx, now);
        }
    }

    /// Drops connection `idx` and queues a reconnect. Counts `kind` if given, and each request of
    /// the window still outstanding on it as a `closed` error: nothing is re-sent (a request may
    /// already have had its effect), so these requests get no answer and must show as failures.
    /// A read, write or parse failure stands for the oldest request (the one whose exchange
    /// failed), so that one is not counted twice.
    pub(super) fn kill(&mut self, idx: usize, kind: Option<Kind>, now: u64) {
        if let Some(k) = kind {
            self.count_error(k, now);
            if !matches!(k, Kind::Connect) {
                if let Some(p) = self.conns[idx].inflight.pop_front() {
                    self.request_failed(&p, None);
                }
            }
        }
        if self.plan.mix.is_some() {
            let lost: Vec<_> = self.conns[idx].inflight.iter().copied().collect();
            for p in &lost {
                self.request_failed(p, None);
            }
        }
        let plan = self.plan;
        let lost = self.conns[idx]
            .inflight
            .iter()
            .filter(|p| plan.in_window(p.intended))
            .count() as u64;
        if lost > 0 {
            self.s.abandoned += lost;
            self.s.errors.closed += lost;
            self.tick_error(now, lost);
        }
        self.hand_over_socket(idx);
        let c = &mut self.conns[idx];
        c.reset();
        c.retry_at = if matches!(kind, Some(Kind::Connect | Kind::Tls)) {
            now + CONNECT_RETRY_NS
        } else {
            now
        };
        self.reconnect.push(idx);
    }

    pub(super) fn do_reconnects(&mut self, now: u64) {
        let mut i = 0;
        while i < self.reconnect.len() {
            let idx = self.reconnect[i];
            if self.conns[idx].retry_at > now {
                i += 1;
                continue;
            }
            self.reconnect.swap_remove(i);
            self.connect(idx, now);
        }
    }

    pub(super) fn connect(&mut self, idx: usize, now: u64) {
        match self.open_stream(idx) {
            Ok(mut stream) => {
                if self
                    .poll
                    .registry()
                    .register(
                        &mut stream,
                        Token(idx),
                        Interest::READABLE | Interest::WRITABLE,
                    )
                    .is_err()
                {
                    self.kill(idx, Some(Kind::Connect), now);
                    return;
                }
                let c = &mut self.conns[idx];
                c.stream = Some(Transport::plain(stream));
                c.state = ConnState::Connecting;
                c.since = now;
            }
            Err(_) => self.kill(idx, Some(Kind::Connect), now),
        }
    }

    pub(super) fn on_connecting_event(&mut self, idx: usize, now: u64, is_error: bool) {
        let c = &mut self.conns[idx];
        let Some(stream) = c.stream.as_ref().map(|s| s.tcp()) else {
            return;
        };
        if is_error || matches!(stream.take_error(), Ok(Some(_)) | Err(_)) {
            self.kill(idx, Some(Kind::Connect), now);
            return;
        }
        match stream.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return,
            Err(_) => {
                self.kill(idx, Some(Kind::Connect), now);
                return;
            }
        }
        match self.tcp_connected(idx) {
            Step::Open => self.start_connection(idx, now),
            Step::Pending => {}
            Step::Failed => self.kill(idx, Some(Kind::Tls), now),
        }
    }

    pub(super) fn check_timeouts(&mut self, now: u64) {
        let limit = self.plan.timeout_ns;
        for idx in 0..self.conns.len() {
            let c = &self.conns[idx];
            match c.state {
                ConnState::Connecting if now.saturating_sub(c.since) > limit => {
                    self.kill(idx, Some(Kind::Connect), now);
                }
                ConnState::Handshaking if now.saturating_sub(c.since) > limit => {
                    self.kill(idx, Some(Kind::Tls), now);
                }
                ConnState::Open
                    if c.h2.as_ref().is_some_and(|s| !s.settled())
                        && now.saturating_sub(c.since) > limit =>
                {
                    // The server never sent its SETTINGS.
                    self.kill(idx, Some(Kind::Read), now);
                }
                ConnState::Open => {
                    let Some(front) = c.inflight.front() else {
                        continue;
                    };
                    if now.saturating_sub(front.sent) > limit {
                        // Timed-out requests are counted as timeouts, not also as abandoned.
                        self.give_up_in_flight(idx, now);
                    }
                }
                _ => {}
            }
        }
    }
}
