//! Per-thread response timers for `--delay-us`: a deadline heap driven by a timerfd, because
//! epoll's millisecond timeout is far too coarse for microsecond delays.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

/// Deadlines for connections (by slot) with a delayed answer waiting, plus the kernel timer that
/// wakes the event loop at the earliest one.
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<(Instant, usize)>>,
    fd: OwnedFd,
    armed_for: Option<Instant>,
}

impl Timers {
    pub(crate) fn new(registry: &Registry, token: Token) -> io::Result<Self> {
        // SAFETY: timerfd_create returns a new descriptor we then own, or -1.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid descriptor owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        registry.register(&mut SourceFd(&fd.as_raw_fd()), token, Interest::READABLE)?;
        Ok(Timers {
            heap: BinaryHeap::new(),
            fd,
            armed_for: None,
        })
    }

    pub(crate) fn push(&mut self, due: Instant, slot: usize) {
        self.heap.push(Reverse((due, slot)));
    }

    /// Pops one slot whose deadline has passed.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<usize> {
        match self.heap.peek() {
            Some(Reverse((due, _))) if *due <= now => self.heap.pop().map(|Reverse((_, s))| s),
            _ => None,
        }
    }

    /// Consumes the timerfd's expiry count after it woke the loop.
    pub(crate) fn acknowledge(&mut self) {
        let mut count = [0u8; 8];
        // SAFETY: reading 8 bytes into an 8-byte buffer from our own descriptor.
        unsafe { libc::read(self.fd.as_raw_fd(), count.as_mut_ptr().cast(), 8) };
        self.armed_for = None;
    }

    /// Points the kernel timer at the earliest deadline (one syscall, only when it changed).
    pub(crate) fn arm(&mut self, now: Instant) {
        let Some(Reverse((due, _))) = self.heap.peek().copied() else {
            return;
        };
        if self.armed_for == Some(due) {
            return;
        }
        // A zero it_value would disarm the timer, so wait at least a nanosecond.
        let wait = due
            .saturating_duration_since(now)
            .max(std::time::Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: wait.as_secs() as libc::time_t,
                tv_nsec: wait.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: valid descriptor and a fully initialised itimerspec.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        self.armed_for = Some(due);
    }
}
