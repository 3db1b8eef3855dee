//! One worker thread: its own mio event loop driving its share of the connections.
//!
//! Times are u64 nanoseconds since the run's shared t0 (a monotonic Instant). The measured window
//! is [warm_end, end): a request belongs to it when its latency clock (its intended send time)
//! starts inside it. When the window closes nothing new is sent, but the window's own requests are
//! still seen through: those in flight are waited for and, in the open model, those due but not
//! yet sent still go out, until all are answered or `timeout` after the close. Whatever gets no
//! answer is a timeout, recorded in the latency at the moment it was given up (a lower bound).

mod open_model;
mod window_end;

use crate::connection::{Conn, ConnState, Pending, WriteOutcome};
use crate::cpu;
use crate::schedule::Schedule;
use crate::stats::ThreadStats;
use crate::{Live, Phase};
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use std::collections::VecDeque;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const TIMER: Token = Token(usize::MAX - 1);
const READ_BUF: usize = 64 * 1024;
const CONNECT_RETRY_NS: u64 = 10_000_000;
const MAX_SLEEP_NS: u64 = 50_000_000;

/// What every worker shares (read-only).
pub struct Plan<'a> {
    pub addr: SocketAddr,
    pub request: &'a [u8],
    /// The request repeated `pipeline` times, so a whole pipeline goes out in one write.
    pub batch: &'a [u8],
    pub pipeline: usize,
    pub head_request: bool,
    pub warm_end: u64,
    pub end: u64,
    pub timeout_ns: u64,
    pub seconds: usize,
}

impl Plan<'_> {
    /// Whether a request with this intended send time belongs to the measured window.
    #[inline]
    pub fn in_window(&self, intended: u64) -> bool {
        intended >= self.warm_end && intended < self.end
    }
}

/// This worker's share of the work.
pub struct Share {
    pub index: usize,
    pub connections: usize,
    /// Open model: this worker's requests per second and the phase of its schedule.
    pub rate: Option<(f64, u64)>,
    pub cpu: Option<usize>,
}

#[derive(Clone, Copy)]
enum Kind {
    Connect,
    Read,
    Write,
    Parse,
}

struct Worker<'a> {
    plan: &'a Plan<'a>,
    t0: Instant,
    poll: Poll,
    conns: Vec<Conn>,
    buf: Vec<u8>,
    s: ThreadStats,
    schedule: Option<Schedule>,
    free: VecDeque<(u32, u32)>,
    reconnect: Vec<usize>,
    timer: Option<OwnedFd>,
    measuring: bool,
    live_completed: u64,
    live_errors: u64,
}

/// Runs one worker until the window closes or `cancel` is set.
pub fn run(
    plan: &Plan<'_>,
    share: &Share,
    sync: &dyn Fn() -> Instant,
    live: &Live,
    cancel: &AtomicBool,
) -> io::Result<ThreadStats> {
    // Set up, then meet the other workers so all start at the same t0 (even if setup failed).
    let setup = setup(plan, share).and_then(|mut w| {
        w.preconnect(cancel)?;
        Ok(w)
    });
    let t0 = sync();
    let mut w = setup?;
    w.t0 = t0;
    w.activate_open_connections();
    w.event_loop(share.index == 0, live, cancel)?;
    Ok(w.s)
}

fn setup<'a>(plan: &'a Plan<'a>, share: &Share) -> io::Result<Worker<'a>> {
    if let Some(cpu) = share.cpu {
        cpu::pin_current_thread(cpu)?;
    }
    let open = share.rate.is_some();
    let mut w = Worker {
        plan,
        t0: Instant::now(),
        poll: Poll::new()?,
        conns: (0..share.connections)
            .map(|_| Conn::new(plan.head_request, plan.pipeline))
            .collect(),
        buf: vec![0; READ_BUF],
        s: ThreadStats::new(open, plan.seconds),
        schedule: share.rate.map(|(r, phase)| Schedule::new(r, phase)),
        free: VecDeque::with_capacity((2 * share.connections * plan.pipeline).min(1 << 16)),
        reconnect: (0..share.connections).collect(),
        timer: None,
        measuring: false,
        live_completed: 0,
        live_errors: 0,
    };
    if open {
        w.timer = Some(make_timer(&w.poll)?);
        // Default timer slack (50 µs) would delay every scheduled send; ask for 1 ns.
        // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    }
    Ok(w)
}

fn make_timer(poll: &Poll) -> io::Result<OwnedFd> {
    // SAFETY: timerfd_create returns a new descriptor we take ownership of.
    let fd = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is valid and owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    poll.registry()
        .register(&mut SourceFd(&fd), TIMER, Interest::READABLE)?;
    Ok(owned)
}

impl Worker<'_> {
    /// Opens every connection before the clock starts (bounded by the timeout, and cut short by
    /// `cancel`), so neither the window nor the open-model schedule pays for TCP handshakes.
    fn preconnect(&mut self, cancel: &AtomicBool) -> io::Result<()> {
        let start = Instant::now();
        let limit = Duration::from_nanos(self.plan.timeout_ns);
        let mut pending = 0usize;
        let mut idle = Vec::new();
        for idx in std::mem::take(&mut self.reconnect) {
            match TcpStream::connect(self.plan.addr) {
                Ok(mut stream) => {
                    self.poll.registry().register(
                        &mut stream,
                        Token(idx),
                        Interest::READABLE | Interest::WRITABLE,
                    )?;
                    self.conns[idx].stream = Some(stream);
                    self.conns[idx].state = ConnState::Connecting;
                    pending += 1;
                }
                Err(_) => idle.push(idx),
            }
        }
        let mut events = Events::with_capacity(1024);
        while pending > 0 && !cancel.load(Ordering::Relaxed) {
            let left = limit.saturating_sub(start.elapsed());
            if left.is_zero() {
                break;
            }
            let slice = left.min(Duration::from_nanos(MAX_SLEEP_NS));
            match self.poll.poll(&mut events, Some(slice)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for ev in events.iter() {
                let idx = ev.token().0;
                let c = &mut self.conns[idx];
                if c.state != ConnState::Connecting {
                    continue;
                }
                let Some(stream) = c.stream.as_ref() else {
                    continue;
                };
                let failed = ev.is_error() || matches!(stream.take_error(), Ok(Some(_)) | Err(_));
                let connected = !failed && stream.peer_addr().is_ok();
                if failed {
                    c.reset();
                    idle.push(idx);
                    pending -= 1;
                } else if connected {
                    let _ = stream.set_nodelay(true);
                    c.state = ConnState::Open;
                    pending -= 1;
                }
            }
        }
        // Failed ones retry (and count) once the clock runs; slow ones time out as usual.
        self.reconnect = idle;
        Ok(())
    }

    /// At t0: put connections opened by `preconnect` to work.
    fn activate_open_connections(&mut self) {
        for idx in 0..self.conns.len() {
            if self.conns[idx].state == ConnState::Open {
                self.start_connection(idx, 0);
            }
        }
    }

    /// A connection just became usable: fill its pipeline (closed model) or offer its slots.
    fn start_connection(&mut self, idx: usize, now: u64) {
        if now >= self.plan.end && self.schedule.is_none() {
            // Closed model after the window: nothing new is sent.
            return;
        }
        if self.schedule.is_some() {
            let g = self.conns[idx].generation;
            for _ in 0..self.plan.pipeline {
                self.free.push_back((idx as u32, g));
            }
        } else {
            for _ in 0..self.plan.pipeline {
                self.enqueue(idx, now, now);
            }
            self.flush(idx, now);
        }
    }

    #[inline]
    fn now(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn event_loop(&mut self, leader: bool, live: &Live, cancel: &AtomicBool) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let check_every = (self.plan.timeout_ns / 4).clamp(1_000_000, 10_000_000);
        let mut next_check = 0u64;
        let mut cpu_start = 0.0;
        let mut timer_armed_for = u64::MAX;
        let drain_end = self.plan.end.saturating_add(self.plan.timeout_ns);
        let mut draining = false;
        if leader {
            live.set_phase(if self.plan.warm_end > 0 {
                Phase::Warmup
            } else {
                Phase::Measuring
            });
        }
        let cancelled = loop {
            let now = self.now();
            if cancel.load(Ordering::Relaxed) {
                if draining {
                    // The window is complete; only the wait for its last requests is cut short,
                    // and what is outstanding is given up now, as at the drain's deadline.
                    self.s.drain_cut = true;
                    break false;
                }
                self.s.measured_ns = now.min(self.plan.end).saturating_sub(self.plan.warm_end);
                break true;
            }
            if !self.measuring && now >= self.plan.warm_end {
                self.measuring = true;
                cpu_start = cpu::thread_cpu_secs();
                if leader {
                    live.set_phase(Phase::Measuring);
                }
            }
            if !draining && now >= self.plan.end {
                // The window closes: its CPU and length are final; what it sent is seen through.
                draining = true;
                self.s.cpu_secs = cpu::thread_cpu_secs() - cpu_start;
                self.s.measured_ns = self.plan.end - self.plan.warm_end;
                if leader {
                    live.set_phase(Phase::Done);
                }
            }
            if draining && (now >= drain_end || !self.window_outstanding()) {
                break false;
            }
            if !draining || self.schedule.is_some() {
                self.do_reconnects(now);
            }
            if now >= next_check {
                self.check_timeouts(now);
                next_check = now + check_every;
            }
            if self.schedule.is_some() {
                self.dispatch(now);
            }
            self.publish(live);

            let close = if draining { drain_end } else { self.plan.end };
            let deadline = self.deadline(now, next_check, close);
            let wait_ns = deadline.saturating_sub(now);
            let timeout = if let (Some(timer), true) = (&self.timer, wait_ns > 0) {
                if timer_armed_for != deadline {
                    arm_timer(timer, wait_ns)?;
                    timer_armed_for = deadline;
                }
                // The timerfd wakes us precisely; the poll timeout is only a backstop.
                Duration::from_nanos(wait_ns + 1_000_000)
            } else {
                Duration::from_nanos(wait_ns)
            };
            match self.poll.poll(&mut events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            let now = self.now();
            for ev in events.iter() {
                let tok = ev.token();
                if tok == TIMER {
                    if let Some(t) = &self.timer {
                        let mut b = [0u8; 8];
                        // SAFETY: reading 8 bytes into our buffer from our timerfd.
                        unsafe { libc::read(t.as_raw_fd(), b.as_mut_ptr().cast(), 8) };
                    }
                    timer_armed_for = u64::MAX;
                    continue;
                }
                let idx = tok.0;
                match self.conns[idx].state {
                    ConnState::Idle => {}
                    ConnState::Connecting => {
                        self.on_connecting_event(idx, now, ev.is_error());
                    }
                    ConnState::Open => {
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.on_readable(idx, now, ev.is_read_closed() || ev.is_error());
                        }
                        if self.conns[idx].state == ConnState::Open && self.conns[idx].unsent > 0 {
                            self.flush(idx, now);
                        }
                    }
                }
            }
        };
        if !draining && self.measuring {
            self.s.cpu_secs = cpu::thread_cpu_secs() - cpu_start;
        }
        self.settle_window(cancelled);
        self.publish(live);
        Ok(())
    }

    /// Hands this worker's new counts to the progress display.
    fn publish(&mut self, live: &Live) {
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

    fn deadline(&self, now: u64, next_check: u64, close: u64) -> u64 {
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

    fn count_error(&mut self, kind: Kind, now: u64) {
        if now < self.plan.warm_end {
            return;
        }
        let e = &mut self.s.errors;
        match kind {
            Kind::Connect => e.connect += 1,
            Kind::Read => e.read += 1,
            Kind::Write => e.write += 1,
            Kind::Parse => e.parse += 1,
        }
        self.tick_error(now, 1);
    }

    fn tick_error(&mut self, now: u64, n: u64) {
        let sec = (now.saturating_sub(self.plan.warm_end) / 1_000_000_000) as usize;
        self.s.tick(sec, 0, n);
        self.live_errors += n;
    }

    /// Drops connection `idx` and queues a reconnect. Counts `kind` if given, and each request of
    /// the window still outstanding on it as a `closed` error: nothing is re-sent (a request may
    /// already have had its effect), so these requests get no answer and must show as failures.
    /// A read, write or parse failure stands for the oldest request (the one whose exchange
    /// failed), so that one is not counted twice.
    fn kill(&mut self, idx: usize, kind: Option<Kind>, now: u64) {
        if let Some(k) = kind {
            self.count_error(k, now);
            if !matches!(k, Kind::Connect) {
                self.conns[idx].inflight.pop_front();
            }
        }
        let plan = self.plan;
        let lost = self.conns[idx]
            .inflight
            .iter()
            .filter(|p| plan.in_window(p.intended))
            .count() as u64;
        if lost > 0 {
            self.s.abandoned += lost;
            self.s.errors.closed += lost;
            self.tick_error(now, lost);
        }
        let c = &mut self.conns[idx];
        c.reset();
        c.retry_at = if matches!(kind, Some(Kind::Connect)) {
            now + CONNECT_RETRY_NS
        } else {
            now
        };
        self.reconnect.push(idx);
    }

    fn do_reconnects(&mut self, now: u64) {
        let mut i = 0;
        while i < self.reconnect.len() {
            let idx = self.reconnect[i];
            if self.conns[idx].retry_at > now {
                i += 1;
                continue;
            }
            self.reconnect.swap_remove(i);
            self.connect(idx, now);
        }
    }

    fn connect(&mut self, idx: usize, now: u64) {
        match TcpStream::connect(self.plan.addr) {
            Ok(mut stream) => {
                if self
                    .poll
                    .registry()
                    .register(
                        &mut stream,
                        Token(idx),
                        Interest::READABLE | Interest::WRITABLE,
                    )
                    .is_err()
                {
                    self.kill(idx, Some(Kind::Connect), now);
                    return;
                }
                let c = &mut self.conns[idx];
                c.stream = Some(stream);
                c.state = ConnState::Connecting;
                c.since = now;
            }
            Err(_) => self.kill(idx, Some(Kind::Connect), now),
        }
    }

    fn on_connecting_event(&mut self, idx: usize, now: u64, is_error: bool) {
        let c = &mut self.conns[idx];
        let Some(stream) = c.stream.as_ref() else {
            return;
        };
        if is_error || matches!(stream.take_error(), Ok(Some(_)) | Err(_)) {
            self.kill(idx, Some(Kind::Connect), now);
            return;
        }
        match stream.peer_addr() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotConnected => return,
            Err(_) => {
                self.kill(idx, Some(Kind::Connect), now);
                return;
            }
        }
        let _ = stream.set_nodelay(true);
        c.state = ConnState::Open;
        self.start_connection(idx, now);
    }

    /// Queues one request on `idx`; the caller flushes.
    #[inline]
    fn enqueue(&mut self, idx: usize, intended: u64, now: u64) {
        let len = self.plan.request.len();
        let c = &mut self.conns[idx];
        c.inflight.push_back(Pending {
            intended,
            sent: now,
        });
        c.unsent += len;
        if intended < self.plan.warm_end {
            self.s.warmup_sent += 1;
            self.s.warmup_bytes += len as u64;
        }
    }

    fn flush(&mut self, idx: usize, now: u64) {
        if let WriteOutcome::Failed = self.conns[idx].flush(self.plan.batch) {
            self.kill(idx, Some(Kind::Write), now);
        }
    }

    fn on_readable(&mut self, idx: usize, now: u64, closing: bool) {
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
                    // A short read drained the socket; new data will raise a new event.
                    if n < self.buf.len() && !closing {
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.kill(idx, Some(Kind::Read), now);
                    return;
                }
            }
        }
    }

    fn on_eof(&mut self, idx: usize, now: u64) {
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
    fn on_data(&mut self, idx: usize, n: usize, now: u64) -> bool {
        let mut off = 0;
        while off < n {
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
    fn parse_failed(&mut self, reason: &'static str, bytes: std::ops::Range<usize>, now: u64) {
        if now >= self.plan.warm_end {
            let buf = &self.buf;
            self.s
                .parse_failure(reason, || crate::parser::excerpt(&buf[bytes], 48));
        }
    }

    #[inline]
    fn on_response(&mut self, idx: usize, status: u16, bytes: u64, now: u64) {
        let Some(p) = self.conns[idx].inflight.pop_front() else {
            return;
        };
        if self.schedule.is_some() {
            self.free
                .push_back((idx as u32, self.conns[idx].generation));
        }
        if !self.plan.in_window(p.intended) {
            return;
        }
        let sec = (now.saturating_sub(self.plan.warm_end) / 1_000_000_000) as usize;
        let s = &mut self.s;
        s.requests += 1;
        s.bytes_read += bytes;
        s.status[usize::from(status).min(999)] += 1;
        s.latency
            .saturating_record((now.saturating_sub(p.intended)) / 1000);
        if let Some(u) = s.uncorrected.as_mut() {
            u.saturating_record((now.saturating_sub(p.sent)) / 1000);
        }
        s.tick(sec, 1, 0);
        self.live_completed += 1;
    }

    fn check_timeouts(&mut self, now: u64) {
        let limit = self.plan.timeout_ns;
        for idx in 0..self.conns.len() {
            let c = &self.conns[idx];
            match c.state {
                ConnState::Connecting if now.saturating_sub(c.since) > limit => {
                    self.kill(idx, Some(Kind::Connect), now);
                }
                ConnState::Open => {
                    let Some(front) = c.inflight.front() else {
                        continue;
                    };
                    if now.saturating_sub(front.sent) > limit {
                        // Timed-out requests are counted as timeouts, not also as abandoned.
                        self.give_up_in_flight(idx, now);
                    }
                }
                _ => {}
            }
        }
    }
}

fn arm_timer(timer: &OwnedFd, ns: u64) -> io::Result<()> {
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        },
    };
    // SAFETY: arming our own timerfd with a valid itimerspec.
    let rc = unsafe { libc::timerfd_settime(timer.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
