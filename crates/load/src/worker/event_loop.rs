//! The worker's loop: each turn moves through the run's phases (warm-up, measuring, seeing the
//! window's requests through), does the periodic work, sleeps until the next thing is due and
//! handles what woke it.

use super::{Worker, MAX_SLEEP_NS, TIMER};
use crate::connection::ConnState;
use crate::cpu;
use crate::{Live, Phase};
use mio::Events;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the loop keeps between turns (the io_uring path's loop keeps the same).
pub(super) struct Turns {
    /// How often timeouts are checked, and when next.
    pub(super) check_every: u64,
    pub(super) next_check: u64,
    /// This thread's CPU clock when the window opened.
    pub(super) cpu_start: f64,
    /// The deadline the timer is set for (`u64::MAX`: not set).
    timer_armed_for: u64,
    /// The window has closed and its outstanding requests are being waited for, until this.
    pub(super) draining: bool,
    pub(super) drain_end: u64,
}

impl Turns {
    /// The first turn's: nothing checked yet, the window not yet closed.
    pub(super) fn new(timeout_ns: u64, end: u64) -> Turns {
        Turns {
            check_every: (timeout_ns / 4).clamp(1_000_000, 10_000_000),
            next_check: 0,
            cpu_start: 0.0,
            timer_armed_for: u64::MAX,
            draining: false,
            drain_end: end.saturating_add(timeout_ns),
        }
    }
}

impl Worker<'_> {
    /// Runs until the window is complete and seen through, or `cancel` is set.
    pub(super) fn event_loop(
        &mut self,
        leader: bool,
        live: &Live,
        cancel: &AtomicBool,
    ) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut turns = Turns::new(self.plan.timeout_ns, self.plan.end);
        self.announce_start(leader, live);
        let cancelled = loop {
            let now = self.now();
            if let Some(cancelled) = self.advance_phase(&mut turns, now, leader, live, cancel) {
                break cancelled;
            }
            self.periodic(&mut turns, now, live);
            if self.wait(&mut turns, now, &mut events)? {
                self.handle_events(&mut turns, &events);
            }
        };
        self.finish(&turns, cancelled, live);
        Ok(())
    }

    /// After the last turn: the CPU of a window cut short, what the window left outstanding
    /// settled, the last counts published.
    pub(super) fn finish(&mut self, turns: &Turns, cancelled: bool, live: &Live) {
        if !turns.draining && self.measuring {
            self.s.cpu_secs = cpu::thread_cpu_secs() - turns.cpu_start;
        }
        self.settle_window(cancelled);
        self.publish(live);
    }

    /// The leader tells the progress display the run began (in warm-up, or measuring).
    pub(super) fn announce_start(&self, leader: bool, live: &Live) {
        if leader {
            live.set_phase(if self.plan.warm_end > 0 {
                Phase::Warmup
            } else {
                Phase::Measuring
            });
        }
    }

    /// Moves into the window and out of it as the clock passes its edges; `Some` ends the loop
    /// (true when cancelled before the window was complete).
    pub(super) fn advance_phase(
        &mut self,
        turns: &mut Turns,
        now: u64,
        leader: bool,
        live: &Live,
        cancel: &AtomicBool,
    ) -> Option<bool> {
        if cancel.load(Ordering::Relaxed) {
            if turns.draining {
                // The window is complete; only the wait for its last requests is cut short,
                // and what is outstanding is given up now, as at the drain's deadline.
                self.s.drain_cut = true;
                return Some(false);
            }
            self.s.measured_ns = now.min(self.plan.end).saturating_sub(self.plan.warm_end);
            return Some(true);
        }
        if !self.measuring && now >= self.plan.warm_end {
            self.measuring = true;
            turns.cpu_start = cpu::thread_cpu_secs();
            if leader {
                live.set_phase(Phase::Measuring);
            }
        }
        if !turns.draining && now >= self.plan.end {
            // The window closes: its CPU and length are final; what it sent is seen through.
            turns.draining = true;
            self.s.cpu_secs = cpu::thread_cpu_secs() - turns.cpu_start;
            self.s.measured_ns = self.plan.end - self.plan.warm_end;
            if leader {
                live.set_phase(Phase::Done);
            }
        }
        if turns.draining && (now >= turns.drain_end || !self.window_outstanding()) {
            return Some(false);
        }
        None
    }

    /// Reconnects, timeout checks, the open model's sends and the progress counts.
    fn periodic(&mut self, turns: &mut Turns, now: u64, live: &Live) {
        if !turns.draining || self.schedule.is_some() {
            self.do_reconnects(now);
        }
        if now >= turns.next_check {
            self.check_timeouts(now);
            turns.next_check = now + turns.check_every;
        }
        if self.schedule.is_some() {
            self.dispatch(now);
        }
        self.publish(live);
    }

    /// Sleeps until the next deadline or an event; false when interrupted by a signal.
    fn wait(&mut self, turns: &mut Turns, now: u64, events: &mut Events) -> io::Result<bool> {
        let close = if turns.draining {
            turns.drain_end
        } else {
            self.plan.end
        };
        let deadline = self.deadline(now, turns.next_check, close);
        let wait_ns = deadline.saturating_sub(now);
        let timeout = if let (Some(timer), true) = (&self.timer, wait_ns > 0) {
            if turns.timer_armed_for != deadline {
                timer.arm(wait_ns)?;
                turns.timer_armed_for = deadline;
            }
            // The timerfd wakes us precisely; the poll timeout is only a backstop.
            Duration::from_nanos(wait_ns + 1_000_000)
        } else {
            Duration::from_nanos(wait_ns)
        };
        match self.poll.poll(events, Some(timeout)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Handles each readiness event: the timer, a connection completing, data or room to write.
    fn handle_events(&mut self, turns: &mut Turns, events: &Events) {
        let now = self.now();
        for ev in events.iter() {
            let tok = ev.token();
            if tok == TIMER {
                if let Some(t) = &self.timer {
                    t.clear();
                }
                turns.timer_armed_for = u64::MAX;
                continue;
            }
            let idx = tok.0;
            match self.conns[idx].state {
                ConnState::Idle => {}
                ConnState::Connecting => {
                    self.on_connecting_event(idx, now, ev.is_error());
                }
                ConnState::Handshaking => self.on_handshake_event(idx, now),
                ConnState::Open => {
                    if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                        self.on_readable(idx, now, ev.is_read_closed() || ev.is_error());
                    }
                    if self.conns[idx].state == ConnState::Open && self.conns[idx].wants_write() {
                        self.flush(idx, now);
                    }
                }
            }
        }
    }

    /// Hands this worker's new counts to the progress display.
    pub(super) fn publish(&mut self, live: &Live) {
        if self.live_completed > 0 {
            live.completed
                .fetch_add(self.live_completed, Ordering::Relaxed);
            self.live_completed = 0;
        }
        if self.live_errors > 0 {
            live.errors.fetch_add(self.live_errors, Ordering::Relaxed);
            self.live_errors = 0;
        }
    }

    pub(super) fn deadline(&self, now: u64, next_check: u64, close: u64) -> u64 {
        let mut d = close.min(next_check).min(now + MAX_SLEEP_NS);
        if !self.measuring {
            d = d.min(self.plan.warm_end);
        }
        for &i in &self.reconnect {
            d = d.min(self.conns[i].retry_at);
        }
        if let Some(s) = &self.schedule {
            let due = s.intended(s.next);
            if !self.free.is_empty() && due < self.plan.end {
                d = d.min(due);
            }
        }
        d.max(now)
    }
}
