//! Requests out and responses in on one connection: queueing and writing requests, reading
//! and parsing responses, and recording each answered request of the window.

use super::{Kind, Worker};
use crate::connection::{Pending, WriteOutcome};
use std::io;

impl Worker<'_> {
    /// Queues one request on `idx` (with a mix, the next the connection's sequence picks);
    /// the caller flushes.
    #[inline]
    pub(super) fn enqueue(&mut self, idx: usize, intended: u64, now: u64) {
        let variant = self.choose(idx);
        let len = self.plan.request_len(variant);
        let c = &mut self.conns[idx];
        let stream = match (c.h2.as_mut(), self.plan.h2) {
            (Some(session), Some(reqs)) => session.open_stream_of(reqs, variant as usize),
            _ => {
                c.unsent += len;
                if let Some(m) = self.plan.mix {
                    c.out.extend_from_slice(&m.h1[variant as usize]);
                }
                0
            }
        };
        c.inflight.push_back(Pending {
            intended,
            sent: now,
            stream,
            variant,
        });
    }

    /// The variant connection `idx` sends next: its sequence picks the request by weight, and
    /// the request's next body is taken in turn (0 without a mix).
    #[inline]
    fn choose(&mut self, idx: usize) -> u32 {
        let Some(m) = self.plan.mix else {
            return 0;
        };
        let draw = crate::mix::splitmix(&mut self.conns[idx].rng);
        let entry = m.pick(draw);
        let (first, count) = m.variants[entry];
        if count == 1 {
            return first as u32;
        }
        let next = &mut self.next_body[entry];
        let v = first + (*next % count as u64) as usize;
        *next = next.wrapping_add(1);
        v as u32
    }

    pub(super) fn flush(&mut self, idx: usize, now: u64) {
        if self.defer_send(idx) {
            return;
        }
        if let WriteOutcome::Failed = self.conns[idx].flush(self.plan.batch) {
            self.kill(idx, Some(Kind::Write), now);
        }
    }

    pub(super) fn on_readable(&mut self, idx: usize, now: u64, closing: bool) {
        loop {
            let Some(stream) = self.conns[idx].stream.as_mut() else {
                return;
            };
            match stream.read(&mut self.buf) {
                Ok(0) => {
                    self.on_eof(idx, now);
                    return;
                }
                Ok(n) => {
                    if !self.on_data(idx, n, now) {
                        return;
                    }
                    // A short read drained the socket; new data will raise a new event. Not over
                    // TLS: rustls takes the socket's bytes a record at a time, so a short read
                    // of plaintext says nothing of what still waits there, and the event that
                    // woke us will not come again for it.
                    if n < self.buf.len() && !closing && !self.conns[idx].is_tls() {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if crate::tls::rustls_error(&e).is_some() => {
                    self.note_tls_error(&e);
                    self.kill(idx, Some(Kind::Tls), now);
                    return;
                }
                Err(_) => {
                    self.kill(idx, Some(Kind::Read), now);
                    return;
                }
            }
        }
    }

    pub(super) fn on_eof(&mut self, idx: usize, now: u64) {
        if self.conns[idx].h2.is_some() {
            // Between frames or not, what is still outstanding is lost with the connection.
            self.kill(idx, None, now);
            return;
        }
        if let Some(r) = self.conns[idx].parser.eof() {
            self.on_response(idx, r.status, r.bytes, now);
        }
        // A close between responses loses only the requests still outstanding, which `kill`
        // counts as `closed`; a close in the middle of a response is also a read error.
        let kind = if self.conns[idx].parser.is_idle() {
            None
        } else {
            Some(Kind::Read)
        };
        self.kill(idx, kind, now);
    }

    /// Parses `n` bytes from the read buffer; false if the connection was dropped.
    pub(super) fn on_data(&mut self, idx: usize, n: usize, now: u64) -> bool {
        if self.conns[idx].h2.is_some() {
            return self.on_h2_data(idx, n, now);
        }
        let mut off = 0;
        while off < n {
            if let (Some(m), Some(p)) = (self.plan.mix, self.conns[idx].inflight.front()) {
                // The answer being read is the oldest request's: a HEAD's has no body.
                let head = m.head[m.entry_of[p.variant as usize] as usize];
                self.conns[idx].parser.set_head_request(head);
            }
            let res = self.conns[idx]
                .parser
                .feed(&self.buf[off..n], &mut |_: &[u8]| {});
            match res {
                Ok((used, resp)) => {
                    off += used;
                    if let Some(r) = resp {
                        if self.conns[idx].inflight.is_empty() {
                            self.parse_failed("a response to no request", off - used..n, now);
                            self.kill(idx, Some(Kind::Parse), now);
                            return false;
                        }
                        self.on_response(idx, r.status, r.bytes, now);
                        if r.close {
                            self.kill(idx, None, now);
                            return false;
                        }
                    }
                }
                Err(e) => {
                    self.parse_failed(e.reason(), off..n, now);
                    self.kill(idx, Some(Kind::Parse), now);
                    return false;
                }
            }
        }
        // Closed model: the next batch of N goes out in one write once all N are answered, as with
        // wrk's pipeline script (refilling per response costs a syscall per response).
        let out = self.conns[idx].inflight.len();
        if self.schedule.is_none() && out == 0 && now < self.plan.end {
            for _ in out..self.plan.pipeline {
                self.enqueue(idx, now, now);
            }
        }
        true
    }

    /// Notes why a response failed to parse, with the start of the read buffer's `bytes` as an
    /// example (the error itself is counted by `kill`).
    pub(super) fn parse_failed(
        &mut self,
        reason: &'static str,
        bytes: std::ops::Range<usize>,
        now: u64,
    ) {
        if now >= self.plan.warm_end {
            let buf = &self.buf;
            self.s
                .parse_failure(reason, || crate::parser::excerpt(&buf[bytes], 48));
        }
    }

    #[inline]
    pub(super) fn on_response(&mut self, idx: usize, status: u16, bytes: u64, now: u64) {
        let Some(p) = self.conns[idx].inflight.pop_front() else {
            return;
        };
        self.record(idx, p, status, bytes, now);
    }

    /// Accounts request `p`'s response: a free slot again (open model), and, for a request of
    /// the window, its latency, status and bytes.
    #[inline]
    pub(super) fn record(&mut self, idx: usize, p: Pending, status: u16, bytes: u64, now: u64) {
        if self.schedule.is_some() {
            self.free
                .push_back((idx as u32, self.conns[idx].generation));
        }
        if p.intended < self.plan.warm_end {
            // A warmup request reached the application only if it was answered: one the
            // server refused (a connection closed under a pipeline, an HTTP/2 GOAWAY) did not.
            self.s.warmup_answered += 1;
            self.s.warmup_bytes += self.plan.request_len(p.variant) as u64;
        }
        if !self.plan.in_window(p.intended) {
            return;
        }
        if let Some(e) = self.plan.entry_of(p.variant) {
            self.s.requests_of[e].record(status, now.saturating_sub(p.intended) / 1000);
        }
        let sec = self.second_of(now);
        let latency_us = now.saturating_sub(p.intended) / 1000;
        let s = &mut self.s;
        s.requests += 1;
        s.bytes_read += bytes;
        s.status[usize::from(status).min(999)] += 1;
        s.latency.saturating_record(latency_us);
        if let Some(u) = s.uncorrected.as_mut() {
            u.saturating_record((now.saturating_sub(p.sent)) / 1000);
        }
        let second = s.second(sec);
        second.responses += 1;
        second.latency.record_n(latency_us, 1);
        self.live_completed += 1;
    }
}
