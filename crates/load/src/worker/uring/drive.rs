//! The io_uring worker's loop: the same phases, periodic work and deadlines as the epoll
//! loop, with one `io_uring_enter` per turn that submits the turn's operations and waits.

use super::super::event_loop::Turns;
use super::super::Kind;
use super::Driver;
use crate::connection::ConnState;
use crate::transport::Transport;
use crate::Live;
use io_uring::types::{SubmitArgs, Timespec};
use mio::unix::SourceFd;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicBool;

impl Driver<'_, '_> {
    /// At t0: the connections `preconnect` opened leave its epoll and go to work on the ring.
    pub(super) fn start(&mut self) {
        for idx in 0..self.w.conns.len() {
            if let Some(t) = self.w.conns[idx].stream.as_ref() {
                let fd = t.tcp().as_raw_fd();
                let _ = self.w.poll.registry().deregister(&mut SourceFd(&fd));
            }
        }
        self.w.activate_open_connections();
        for idx in 0..self.w.conns.len() {
            match self.w.conns[idx].state {
                ConnState::Open => self.arm_recv(idx),
                ConnState::Connecting => self.poll_connect(idx),
                _ => {}
            }
        }
    }

    /// Runs until the window is complete and seen through, or `cancel` is set.
    pub(super) fn drive(
        &mut self,
        leader: bool,
        live: &Live,
        cancel: &AtomicBool,
    ) -> io::Result<()> {
        let mut turns = Turns::new(self.w.plan.timeout_ns, self.w.plan.end);
        self.w.announce_start(leader, live);
        let cancelled = loop {
            let now = self.w.now();
            if let Some(cancelled) = self.w.advance_phase(&mut turns, now, leader, live, cancel) {
                break cancelled;
            }
            self.periodic(&mut turns, now, live);
            self.take_deferred();
            self.wait(&turns, now)?;
            let now = self.w.now();
            self.reap(now);
            self.take_deferred();
        };
        self.w.finish(&turns, cancelled, live);
        // Shut down what the settling dropped, so the server sees the connections end now.
        self.take_deferred();
        Ok(())
    }

    /// Reconnects, timeout checks, the open model's sends and the progress counts.
    fn periodic(&mut self, turns: &mut Turns, now: u64, live: &Live) {
        if !turns.draining || self.w.schedule.is_some() {
            self.reconnects(now);
        }
        if now >= turns.next_check {
            self.w.check_timeouts(now);
            turns.next_check = now + turns.check_every;
        }
        if self.w.schedule.is_some() {
            self.w.dispatch(now);
        }
        self.w.publish(live);
    }

    /// Starts the connects that are due; a poll on the ring says when each finished.
    fn reconnects(&mut self, now: u64) {
        let mut i = 0;
        while i < self.w.reconnect.len() {
            let idx = self.w.reconnect[i];
            if self.w.conns[idx].retry_at > now {
                i += 1;
                continue;
            }
            self.w.reconnect.swap_remove(i);
            match self.w.open_stream(idx) {
                Ok(stream) => {
                    let c = &mut self.w.conns[idx];
                    c.stream = Some(Transport::plain(stream));
                    c.state = ConnState::Connecting;
                    c.since = now;
                    self.poll_connect(idx);
                }
                Err(_) => self.w.kill(idx, Some(Kind::Connect), now),
            }
        }
    }

    /// Submits the turn's operations and sleeps until a completion or the next deadline.
    fn wait(&mut self, turns: &Turns, now: u64) -> io::Result<()> {
        let close = if turns.draining {
            turns.drain_end
        } else {
            self.w.plan.end
        };
        let wait_ns = self
            .w
            .deadline(now, turns.next_check, close)
            .saturating_sub(now);
        let ts = Timespec::new()
            .sec(wait_ns / 1_000_000_000)
            .nsec((wait_ns % 1_000_000_000) as u32);
        let args = SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}
