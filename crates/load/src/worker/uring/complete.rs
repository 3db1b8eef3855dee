//! Completions: each is matched to its connection's current socket (stale ones, from a socket
//! since dropped, only give back their buffer) and handed to the shared worker code, which
//! parses, records and decides what to send next.

use super::super::Kind;
use super::token::{current, unpack, Op};
use super::Driver;
use crate::connection::ConnState;
use io_uring::cqueue;

impl Driver<'_, '_> {
    /// Handles every completion waiting in the queue; `now` is the time they are recorded at.
    pub(super) fn reap(&mut self, now: u64) {
        let mut offered = false;
        loop {
            let Some(cqe) = self.ring.completion().next() else {
                break;
            };
            let (res, flags) = (cqe.result(), cqe.flags());
            let Some((op, idx, generation)) = unpack(cqe.user_data()) else {
                continue;
            };
            let live =
                idx < self.w.conns.len() && current(generation, self.w.conns[idx].generation);
            match op {
                Op::Recv => {
                    offered |= cqueue::buffer_select(flags).is_some();
                    self.on_recv(idx, live, res, flags, now);
                }
                Op::Send if live => self.on_send(idx, res, now),
                Op::Connect if live => self.on_connected(idx, res, now),
                _ => {}
            }
        }
        if offered {
            self.bufs.publish();
        }
    }

    /// A receive completed: bytes (parsed), the end of the stream, or an error; a receive
    /// that will not fire again is re-armed while the connection lives.
    fn on_recv(&mut self, idx: usize, live: bool, res: i32, flags: u32, now: u64) {
        let more = cqueue::more(flags);
        if let Some(bid) = cqueue::buffer_select(flags) {
            if live && res > 0 {
                let n = res as usize;
                self.w.buf[..n].copy_from_slice(self.bufs.bytes(bid, n));
                self.bufs.offer(bid);
                if self.w.conns[idx].state == ConnState::Open && self.w.on_data(idx, n, now) {
                    // The closed model queues its next batch as the last answer arrives.
                    self.send(idx);
                }
            } else {
                self.bufs.offer(bid);
            }
        }
        if !live || self.w.conns[idx].state != ConnState::Open {
            return;
        }
        if res == 0 {
            self.w.on_eof(idx, now);
            return;
        }
        if res < 0 && res != -libc::ENOBUFS && res != -libc::ECANCELED {
            self.w.kill(idx, Some(Kind::Read), now);
            return;
        }
        if !more {
            self.armed(idx).recv = false;
            self.arm_recv(idx);
        }
    }

    /// A send completed: the bytes it took leave the queue and the rest goes next; a failed
    /// send (or one that took nothing) drops the connection as a write error.
    fn on_send(&mut self, idx: usize, res: i32, now: u64) {
        self.armed(idx).send = false;
        if self.w.conns[idx].state != ConnState::Open {
            return;
        }
        if res <= 0 {
            self.w.kill(idx, Some(Kind::Write), now);
            return;
        }
        let c = &mut self.w.conns[idx];
        c.unsent = c.unsent.saturating_sub(res as usize);
        self.send(idx);
    }

    /// The connect's poll fired: the shared code checks the socket and starts the connection
    /// (queueing its first sends), or drops it; a spurious wake polls again.
    fn on_connected(&mut self, idx: usize, res: i32, now: u64) {
        if self.w.conns[idx].state != ConnState::Connecting {
            return;
        }
        let failed = res < 0 || (res as i16 & (libc::POLLERR | libc::POLLHUP)) != 0;
        self.w.on_connecting_event(idx, now, failed);
        match self.w.conns[idx].state {
            ConnState::Open => self.arm_recv(idx),
            ConnState::Connecting => self.poll_connect(idx),
            _ => {}
        }
    }
}
