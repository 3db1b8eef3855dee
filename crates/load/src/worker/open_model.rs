//! The open model's side of a worker: sending what the schedule says is due on free connections,
//! counting requests that wait for one, and giving up those that waited a whole timeout.

use super::Worker;
use crate::connection::ConnState;

impl Worker<'_> {
    /// Open model: sends every request that is due on a connection with a free slot. Requests
    /// that have waited a whole timeout for a connection are given up, so however far behind the
    /// client falls, the backlog stays within one timeout of the schedule.
    pub(super) fn dispatch(&mut self, now: u64) {
        if let Some(sched) = self.schedule.as_ref() {
            let cutoff = now.saturating_sub(self.plan.timeout_ns);
            if cutoff > 0 && sched.intended(sched.next) < cutoff {
                let (from, to) = (sched.next, sched.first_at(cutoff));
                self.give_up_unsent(from, to, now);
            }
        }
        loop {
            let Some(sched) = self.schedule.as_ref() else {
                return;
            };
            let intended = sched.intended(sched.next);
            if intended > now || intended >= self.plan.end {
                return;
            }
            let Some(idx) = self.pop_free() else {
                self.count_waiting(now);
                return;
            };
            if let Some(s) = self.schedule.as_mut() {
                s.next += 1;
            }
            if intended >= self.plan.warm_end {
                self.s.max_lag_ns = self.s.max_lag_ns.max(now - intended);
            }
            self.enqueue(idx, intended, now);
            self.flush(idx, now);
        }
    }

    fn pop_free(&mut self) -> Option<usize> {
        while let Some((i, g)) = self.free.pop_front() {
            let c = &self.conns[i as usize];
            if c.generation == g
                && c.state == ConnState::Open
                && c.inflight.len() < c.capacity(self.plan.pipeline)
            {
                return Some(i as usize);
            }
        }
        None
    }

    /// Every due request found all connections busy: count each such request of the window once
    /// (in constant time, however many are due).
    fn count_waiting(&mut self, now: u64) {
        let (warm_end, end) = (self.plan.warm_end, self.plan.end);
        let Some(sched) = self.schedule.as_mut() else {
            return;
        };
        if let Some(last) = sched.last_due(now) {
            let from = sched.next.max(sched.waited_upto);
            self.s.waited += sched.count_due_between(from, last + 1, warm_end, end);
            sched.waited_upto = sched.waited_upto.max(last + 1);
        }
    }
    /// Open model: requests `from..to` of the schedule will never be sent. Those due in the window
    /// are timeouts that waited the whole timeout for a connection, and are recorded so.
    pub(super) fn give_up_unsent(&mut self, from: u64, to: u64, now: u64) {
        let Some(sched) = self.schedule.as_ref() else {
            return;
        };
        let n = sched.count_due_between(from, to, self.plan.warm_end, self.plan.end);
        if let Some(s) = self.schedule.as_mut() {
            s.next = s.next.max(to);
        }
        if n == 0 {
            return;
        }
        self.s.not_sent += n;
        self.s.errors.timeout += n;
        let waited_us = (self.plan.timeout_ns / 1000).clamp(1, self.s.latency.high());
        let _ = self.s.latency.record_n(waited_us, n);
        let sec = self.second_of(now);
        self.s.second(sec).latency.record_n(waited_us, n);
        self.tick_error(now, n);
    }
}
