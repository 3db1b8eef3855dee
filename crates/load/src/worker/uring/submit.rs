//! Queueing submissions: a connection's multishot receive, the tail of its request batch, the
//! poll that says its connect finished, and what the shared code deferred this turn.

use super::bufring::GROUP;
use super::token::{pack, Op};
use super::Driver;
use io_uring::{opcode, squeue, types};
use std::io;
use std::os::fd::AsRawFd;

impl Driver<'_, '_> {
    /// Queues `sqe`, submitting what is queued first when the submission queue is full.
    fn push(&mut self, sqe: &squeue::Entry) {
        loop {
            // SAFETY: every buffer an entry points at outlives its operation: the request batch
            // lives for the whole run, the buffer ring until after the ring is dropped.
            if unsafe { self.ring.submission().push(sqe) }.is_ok() {
                return;
            }
            match self.ring.submit() {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // The kernel takes no more until completions are reaped (its overflow list
                // is full): handle them, which frees room, then try again.
                Err(_) => {
                    let now = self.w.now();
                    self.reap(now);
                }
            }
        }
    }

    /// The raw socket of connection `idx` and its generation, if it has one.
    fn fd(&self, idx: usize) -> Option<(types::Fd, u32)> {
        let c = &self.w.conns[idx];
        let fd = c.stream.as_ref()?.tcp().as_raw_fd();
        Some((types::Fd(fd), c.generation))
    }

    /// The flags of `idx`, reset when the connection has a new socket since they were set.
    pub(super) fn armed(&mut self, idx: usize) -> &mut super::Armed {
        let generation = self.w.conns[idx].generation;
        let a = &mut self.armed[idx];
        if a.generation != generation {
            *a = super::Armed {
                generation,
                ..Default::default()
            };
        }
        a
    }

    /// Arms `idx`'s multishot receive unless it is armed already.
    pub(super) fn arm_recv(&mut self, idx: usize) {
        let Some((fd, generation)) = self.fd(idx) else {
            return;
        };
        if std::mem::replace(&mut self.armed(idx).recv, true) {
            return;
        }
        let sqe =
            opcode::RecvMulti::new(fd, GROUP)
                .build()
                .user_data(pack(Op::Recv, idx, generation));
        self.push(&sqe);
    }

    /// Sends `idx`'s queued bytes (the tail of the request batch) unless a send is under way;
    /// its completion sends what was queued meanwhile.
    pub(super) fn send(&mut self, idx: usize) {
        let unsent = self.w.conns[idx].unsent;
        if unsent == 0 {
            return;
        }
        let Some((fd, generation)) = self.fd(idx) else {
            return;
        };
        if std::mem::replace(&mut self.armed(idx).send, true) {
            return;
        }
        let batch = self.w.plan.batch;
        let tail = &batch[batch.len() - unsent.min(batch.len())..];
        let sqe = opcode::Send::new(fd, tail.as_ptr(), tail.len() as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(pack(Op::Send, idx, generation));
        self.push(&sqe);
    }

    /// Polls `idx`'s connecting socket for writability: its connect finished (or failed).
    pub(super) fn poll_connect(&mut self, idx: usize) {
        let Some((fd, generation)) = self.fd(idx) else {
            return;
        };
        let sqe = opcode::PollAdd::new(fd, libc::POLLOUT as u32)
            .build()
            .user_data(pack(Op::Connect, idx, generation));
        self.push(&sqe);
    }

    /// Shuts down the sockets of dropped connections (their operations complete and release
    /// them) and queues the sends the shared code deferred.
    pub(super) fn take_deferred(&mut self) {
        let Some(d) = self.w.deferred.as_mut() else {
            return;
        };
        if !d.closed.is_empty() {
            for t in d.closed.drain(..) {
                // SAFETY: shutdown on a socket this transport still owns.
                unsafe { libc::shutdown(t.tcp().as_raw_fd(), libc::SHUT_RDWR) };
            }
        }
        if d.sends.is_empty() {
            return;
        }
        let mut sends = std::mem::take(&mut d.sends);
        for &idx in &sends {
            if self.w.conns[idx].state == crate::connection::ConnState::Open {
                self.send(idx);
            }
        }
        sends.clear();
        if let Some(d) = self.w.deferred.as_mut() {
            d.sends = sends;
        }
    }
}
