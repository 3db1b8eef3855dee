//! The open model's wake-up: a timerfd registered with the worker's poll, so a scheduled send
//! is not late by the poll timeout's millisecond granularity.

use super::TIMER;
use mio::unix::SourceFd;
use mio::{Interest, Poll};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// A one-shot monotonic timer that wakes the worker's poll.
pub(super) struct Timer {
    fd: TimerFd,
}

impl Timer {
    /// Creates the timer and registers it with `poll` under [`TIMER`].
    pub(super) fn new(poll: &Poll) -> io::Result<Timer> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        poll.registry().register(
            &mut SourceFd(&fd.as_fd().as_raw_fd()),
            TIMER,
            Interest::READABLE,
        )?;
        Ok(Timer { fd })
    }

    /// Fires once, `ns` nanoseconds from now (replacing any earlier setting).
    pub(super) fn arm(&self, ns: u64) -> io::Result<()> {
        let at = TimeSpec::from_duration(Duration::from_nanos(ns));
        self.fd
            .set(Expiration::OneShot(at), TimerSetTimeFlags::empty())?;
        Ok(())
    }

    /// Consumes the expiry that made the timer readable, so it does not wake the poll again.
    pub(super) fn clear(&self) {
        // Non-blocking: with nothing to read this fails at once, which is fine.
        let _ = self.fd.wait();
    }
}
