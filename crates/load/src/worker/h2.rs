//! HTTP/2 connections: the session started when a connection opens (its ALPN checked over TLS),
//! and what each read produced turned into the worker's usual accounting — a response recorded
//! like any other, a reset stream or a stream refused by GOAWAY counted as an error of its kind,
//! the connection replaced once the server has said goodbye and its last streams are done.

use super::handshake::Step;
use super::{Kind, Worker};
use crate::connection::Pending;
use crate::h2::{Event, Session, ALPN_H2};

impl Worker<'_> {
    /// A connection is open: HTTP/2 connections start their session (over TLS only when ALPN
    /// chose h2) and send its preface at once, so the server's SETTINGS come back early.
    pub(super) fn open_protocol(&mut self, idx: usize) -> Step {
        if self.plan.h2.is_none() {
            return Step::Open;
        }
        let c = &mut self.conns[idx];
        let Some(stream) = c.stream.as_ref() else {
            return Step::Failed;
        };
        if stream.is_tls() && stream.alpn() != Some(ALPN_H2) {
            let chose = stream.alpn().map_or("none".to_string(), |p| {
                String::from_utf8_lossy(p).into_owned()
            });
            self.note_h2_failure(format!(
                "the server did not agree to HTTP/2: ALPN chose {chose}, not h2"
            ));
            return Step::Failed;
        }
        c.h2 = Some(Box::new(Session::new()));
        let _ = c.flush(self.plan.batch);
        Step::Open
    }

    /// Handles `n` bytes read on an HTTP/2 connection; false if the connection was dropped.
    pub(super) fn on_h2_data(&mut self, idx: usize, n: usize, now: u64) -> bool {
        let Some(reqs) = self.plan.h2 else {
            return false;
        };
        let mut events = std::mem::take(&mut self.h2_events);
        events.clear();
        let room_before = self.conns[idx].capacity(self.plan.pipeline);
        let (fed, was_settled) = match self.conns[idx].h2.as_mut() {
            Some(session) => {
                let was = session.settled();
                (session.feed_mix(&self.buf[..n], reqs, &mut events), was)
            }
            None => return false,
        };
        if let Some(max) = self.conns[idx]
            .h2
            .as_ref()
            .and_then(|s| s.announced_max_streams)
        {
            if let Some(t) = self.s.h2.as_mut() {
                t.limit(max);
            }
        }
        for ev in events.drain(..) {
            match ev {
                Event::Response {
                    stream,
                    status,
                    bytes,
                } => {
                    if let Some(p) = self.take_stream(idx, stream) {
                        self.record(idx, p, status, bytes, now);
                    }
                }
                Event::Reset { stream, code } => {
                    if let Some(t) = self.s.h2.as_mut() {
                        t.frame("RST_STREAM", code);
                    }
                    if let Some(p) = self.take_stream(idx, stream) {
                        self.stream_failed(idx, p, Kind::Reset, now);
                    }
                }
                Event::GoAway { last, code } => {
                    if let Some(t) = self.s.h2.as_mut() {
                        t.goaways += 1;
                        t.frame("GOAWAY", code);
                    }
                    // Streams above `last` were never processed: each is refused.
                    while let Some(i) = self.conns[idx]
                        .inflight
                        .iter()
                        .position(|p| p.stream > last)
                    {
                        if let Some(p) = self.conns[idx].inflight.remove(i) {
                            self.stream_failed(idx, p, Kind::GoAway, now);
                        }
                    }
                }
            }
        }
        self.h2_events = events;
        if let Err(why) = fed {
            self.note_h2_failure(why.into_owned());
            self.kill(idx, Some(Kind::Parse), now);
            return false;
        }
        let c = &self.conns[idx];
        if !was_settled && c.h2.as_ref().is_some_and(|s| s.settled()) {
            // The server's SETTINGS came: the connection goes to work (unless a goodbye came
            // with them, which the check below sees).
            self.start_connection(idx, now);
            if self.conns[idx].stream.is_none() {
                return false;
            }
        }
        let c = &self.conns[idx];
        if c.h2.as_ref().is_some_and(|s| s.spent()) && c.inflight.is_empty() {
            // The server said goodbye (or the ids ran out) and nothing is left: a new one.
            self.kill(idx, None, now);
            return false;
        }
        // Closed model: every answered stream is replaced at once, up to what the server
        // allows; the writes go out together when the read is done.
        if self.schedule.is_none() && now < self.plan.end {
            let room = c.capacity(self.plan.pipeline);
            for _ in c.inflight.len()..room {
                self.enqueue(idx, now, now);
            }
        }
        // Open model: streams new SETTINGS allow are offered to the schedule (slots a lower
        // limit left unused were dropped as they came up).
        let c = &self.conns[idx];
        if self.schedule.is_some() && was_settled {
            let (g, room) = (c.generation, c.capacity(self.plan.pipeline));
            for _ in room_before..room {
                self.free.push_back((idx as u32, g));
            }
        }
        true
    }

    /// Removes stream `id`'s request from what is in flight on `idx`.
    fn take_stream(&mut self, idx: usize, id: u32) -> Option<Pending> {
        let q = &mut self.conns[idx].inflight;
        let i = q.iter().position(|p| p.stream == id)?;
        q.remove(i)
    }

    /// A stream ended without an answer: an error of `kind` if it belonged to the window; its
    /// slot is free again in the open model.
    fn stream_failed(&mut self, idx: usize, p: Pending, kind: Kind, now: u64) {
        if self.schedule.is_some() {
            self.free
                .push_back((idx as u32, self.conns[idx].generation));
        }
        if self.plan.in_window(p.intended) {
            self.count_error(kind, now.max(self.plan.warm_end));
        }
        self.request_failed(&p, None);
    }

    /// Keeps the reason of the worker's first HTTP/2 failure.
    fn note_h2_failure(&mut self, why: String) {
        if let Some(t) = self.s.h2.as_mut() {
            if t.first_failure.is_none() {
                t.first_failure = Some(why);
            }
        }
    }
}
