//! After the measured window closes: what of the window is still outstanding, and giving up
//! (as timeouts recorded in the latency) what gets no answer in time.

use super::Worker;

impl Worker<'_> {
    /// After the window: does any request of the window still await an answer or a send?
    pub(super) fn window_outstanding(&self) -> bool {
        let unsent = self
            .schedule
            .as_ref()
            .is_some_and(|s| s.intended(s.next) < self.plan.end);
        unsent
            || self
                .conns
                .iter()
                .any(|c| c.inflight.iter().any(|p| self.plan.in_window(p.intended)))
    }

    /// Gives up every request in flight on `idx` as a timeout (each of the window's recorded at
    /// the time given up) and replaces the connection.
    pub(super) fn give_up_in_flight(&mut self, idx: usize, now: u64) {
        if self.conns[idx].inflight.is_empty() {
            return;
        }
        let mut n = 0;
        let sec = self.second_of(now);
        // Taken and put back emptied, so the queue keeps its capacity for the new connection.
        let mut inflight = std::mem::take(&mut self.conns[idx].inflight);
        for p in inflight.drain(..) {
            if !self.plan.in_window(p.intended) {
                continue;
            }
            n += 1;
            let waited_us = now.saturating_sub(p.intended) / 1000;
            self.request_failed(&p, Some(waited_us));
            self.s.latency.saturating_record(waited_us);
            self.s.second(sec).latency.record_n(waited_us, 1);
            if let Some(u) = self.s.uncorrected.as_mut() {
                u.saturating_record(now.saturating_sub(p.sent) / 1000);
            }
        }
        self.conns[idx].inflight = inflight;
        self.s.errors.timeout += n;
        if n > 0 {
            self.tick_error(now, n);
        }
        self.kill(idx, None, now);
    }

    /// The run is over: when cancelled inside the window, what of the window is still out is
    /// reported as in flight; otherwise the drain's deadline passed (or a cancel cut the drain
    /// short) and everything of the window still unanswered is a timeout, given up now.
    pub(super) fn settle_window(&mut self, cancelled: bool) {
        let now = self.now();
        if cancelled {
            // Asked to stop: what is still out is reported as such, not waited for.
            let plan = self.plan;
            for c in &self.conns {
                let sent = c.fully_sent(|p| plan.request_len(p.variant));
                for p in c.inflight.iter().take(sent) {
                    if plan.in_window(p.intended) {
                        self.s.in_flight_at_end += 1;
                        self.s.in_flight_bytes += plan.request_len(p.variant) as u64;
                    }
                }
            }
        } else {
            // The drain's deadline passed: every request of the window still unanswered (sent
            // or not) is a timeout.
            for idx in 0..self.conns.len() {
                self.give_up_in_flight(idx, now);
            }
            if let Some(sched) = self.schedule.as_ref() {
                let to = sched.first_at(self.plan.end);
                let from = sched.next;
                self.give_up_unsent(from, to, now);
            }
        }
    }
}
