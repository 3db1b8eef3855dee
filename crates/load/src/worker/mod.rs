//! One worker thread: its own mio event loop driving its share of the connections.
//!
//! Times are u64 nanoseconds since the run's shared t0 (a monotonic Instant). The measured window
//! is [warm_end, end): a request belongs to it when its latency clock (its intended send time)
//! starts inside it. When the window closes nothing new is sent, but the window's own requests are
//! still seen through: those in flight are waited for and, in the open model, those due but not
//! yet sent still go out, until all are answered or `timeout` after the close. Whatever gets no
//! answer is a timeout, recorded in the latency at the moment it was given up (a lower bound).
//!
//! The work is split by job: `connect` opens, reopens and drops connections, `exchange` writes
//! requests and reads responses, `event_loop` drives the phases and sleeps, `open_model` sends
//! on the schedule, `window_end` settles what the window left outstanding, `timer` wakes the
//! open model on time.

mod connect;
mod event_loop;
mod exchange;
mod h2;
mod handshake;
mod open_model;
mod timer;
mod uring;
mod window_end;

pub(crate) use uring::probe_io_uring;

use crate::connection::Conn;
use crate::cpu;
use crate::schedule::Schedule;
use crate::stats::ThreadStats;
use crate::tls::TlsClient;
use crate::Live;
use mio::{Poll, Token};
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::time::Instant;
use timer::Timer;

const TIMER: Token = Token(usize::MAX - 1);
const READ_BUF: usize = 64 * 1024;
const CONNECT_RETRY_NS: u64 = 10_000_000;
const MAX_SLEEP_NS: u64 = 50_000_000;

/// What every worker shares (read-only).
pub struct Plan<'a> {
    pub addr: SocketAddr,
    /// Source addresses connections take in turn (empty: the kernel's choice).
    pub sources: &'a [std::net::IpAddr],
    pub request: &'a [u8],
    /// The request repeated `pipeline` times, so a whole pipeline goes out in one write.
    pub batch: &'a [u8],
    pub pipeline: usize,
    pub head_request: bool,
    pub warm_end: u64,
    pub end: u64,
    pub timeout_ns: u64,
    pub seconds: usize,
    /// https://: the run's TLS client, shared by every connection opened once the clock runs
    /// (its session cache lets reconnects resume).
    pub tls: Option<&'a TlsClient>,
    /// https://: the client for the connections opened before the clock, without resumption.
    pub tls_fresh: Option<&'a TlsClient>,
    /// Drive the sockets with io_uring rather than epoll (http:// only, checked by the caller).
    pub io_uring: bool,
    /// A worker whose ring cannot be set up runs on epoll instead of failing (`io = auto`).
    pub io_fallback: bool,
    /// HTTP/2: the request every stream sends, or with a mix each variant's (`pipeline` is
    /// then the streams per connection).
    pub h2: Option<&'a [crate::h2::H2Request]>,
    /// A request mix: what each request sends, chosen per connection by weight.
    pub mix: Option<&'a crate::mix::PreparedMix>,
    /// The seed of the mix's choices.
    pub seed: u64,
    /// Stages: the offered rate over time (empty without stages).
    pub segments: &'a [crate::schedule::Segment],
}

impl Plan<'_> {
    /// Whether a request with this intended send time belongs to the measured window.
    #[inline]
    pub fn in_window(&self, intended: u64) -> bool {
        intended >= self.warm_end && intended < self.end
    }

    /// Bytes request variant `v` takes on the wire (the one request's without a mix).
    #[inline]
    pub fn request_len(&self, v: u32) -> usize {
        let v = v as usize;
        match (self.h2, self.mix) {
            (Some(r), _) => r[v].wire_len(),
            (None, Some(m)) => m.h1[v].len(),
            (None, None) => self.request.len(),
        }
    }

    /// The mix's request variant `v` belongs to.
    #[inline]
    pub fn entry_of(&self, v: u32) -> Option<usize> {
        self.mix.map(|m| m.entry_of[v as usize] as usize)
    }
}

/// This worker's share of the work.
pub struct Share {
    pub index: usize,
    pub connections: usize,
    /// Open model: this worker's requests per second and the phase of its schedule.
    pub rate: Option<(f64, u64)>,
    /// Stages: this worker's share of their requests and its phase (0 to 1 of a request).
    pub ramps: Option<(f64, f64)>,
    pub cpu: Option<usize>,
}

#[derive(Clone, Copy)]
enum Kind {
    Connect,
    Read,
    Write,
    Parse,
    /// A handshake that failed or timed out, or a TLS session that broke.
    Tls,
    /// HTTP/2: a stream the server reset.
    Reset,
    /// HTTP/2: a stream the server refused by ending the connection.
    GoAway,
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
    timer: Option<Timer>,
    measuring: bool,
    live_completed: u64,
    live_errors: u64,
    /// Where this worker's connections start in the turn of source addresses.
    source_offset: usize,
    /// Connections are being opened before the clock (TLS without resumption).
    preconnecting: bool,
    /// On the io_uring path: the sends and dropped sockets the shared code hands to the ring.
    deferred: Option<uring::Deferred>,
    /// HTTP/2: what the last read produced (kept to reuse its allocation).
    h2_events: Vec<crate::h2::Event>,
    /// A mix: for each request, the next of its bodies to send.
    next_body: Vec<u64>,
}

/// Runs one worker until the window closes or `cancel` is set; says whether it ran on io_uring.
pub fn run(
    plan: &Plan<'_>,
    share: &Share,
    sync: &dyn Fn() -> Instant,
    live: &Live,
    cancel: &AtomicBool,
) -> io::Result<(ThreadStats, bool)> {
    // Set up, then meet the other workers so all start at the same t0 (even if setup failed).
    let setup = setup(plan, share).and_then(|mut w| {
        w.preconnecting = true;
        w.preconnect(cancel)?;
        w.preconnecting = false;
        Ok(w)
    });
    if plan.io_uring {
        let mut w = match setup {
            Ok(w) => w,
            Err(e) => {
                sync();
                return Err(e);
            }
        };
        let leader = share.index == 0;
        let on_uring = uring::run(&mut w, sync, leader, live, cancel, plan.io_fallback)?;
        return Ok((w.s, on_uring));
    }
    let t0 = sync();
    let mut w = setup?;
    w.t0 = t0;
    w.activate_open_connections();
    w.event_loop(share.index == 0, live, cancel)?;
    Ok((w.s, false))
}

fn setup<'a>(plan: &'a Plan<'a>, share: &Share) -> io::Result<Worker<'a>> {
    if let Some(cpu) = share.cpu {
        cpu::pin_current_thread(cpu)?;
    }
    let open = share.rate.is_some() || share.ramps.is_some();
    let schedule = match (share.rate, share.ramps) {
        (Some((r, phase)), _) => Some(Schedule::new(r, phase)),
        (None, Some((part, offset))) => Some(Schedule::ramps(plan.segments, part, offset)),
        (None, None) => None,
    };
    let seed = |i: usize| crate::mix::connection_seed(plan.seed, share.index, i);
    let mut w = Worker {
        plan,
        t0: Instant::now(),
        poll: Poll::new()?,
        conns: (0..share.connections)
            .map(|i| Conn::new(plan.head_request, plan.pipeline).with_seed(seed(i)))
            .collect(),
        buf: vec![0; READ_BUF],
        s: ThreadStats::new(open, plan.seconds)
            .with_tls(plan.tls.is_some())
            .with_h2(plan.h2.is_some())
            .with_requests(plan.mix.map_or(0, |m| m.names.len())),
        schedule,
        free: VecDeque::with_capacity((2 * share.connections * plan.pipeline).min(1 << 16)),
        reconnect: (0..share.connections).collect(),
        timer: None,
        measuring: false,
        live_completed: 0,
        live_errors: 0,
        source_offset: share.index,
        preconnecting: false,
        deferred: None,
        h2_events: Vec::new(),
        // Each worker starts its bodies at its own place, so workers send different lines.
        next_body: plan.mix.map_or(Vec::new(), |m| {
            m.variants
                .iter()
                .map(|&(_, n)| (share.index as u64 * 7919) % n.max(1) as u64)
                .collect()
        }),
    };
    if open {
        w.timer = Some(Timer::new(&w.poll)?);
        // Default timer slack (50 µs) would delay every scheduled send; ask for 1 ns. Best
        // effort: without it sends are only a little later.
        let _ = nix::sys::prctl::set_timerslack(1);
    }
    Ok(w)
}

impl Worker<'_> {
    /// Starts connection `idx`'s TCP connect, from its source address when some are given.
    fn open_stream(&self, idx: usize) -> io::Result<mio::net::TcpStream> {
        let sources = self.plan.sources;
        let from =
            (!sources.is_empty()).then(|| sources[(idx + self.source_offset) % sources.len()]);
        crate::source::connect_from(self.plan.addr, from)
    }

    #[inline]
    fn now(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
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
            Kind::Tls => e.tls += 1,
            Kind::Reset => e.reset += 1,
            Kind::GoAway => e.goaway += 1,
        }
        self.tick_error(now, 1);
    }

    /// A mix's request of the window got no answer: an error of that request, and (when it was
    /// given up after `waited_us`) a latency too.
    fn request_failed(&mut self, p: &crate::connection::Pending, waited_us: Option<u64>) {
        if !self.plan.in_window(p.intended) {
            return;
        }
        if let Some(e) = self.plan.entry_of(p.variant) {
            let r = &mut self.s.requests_of[e];
            r.errors += 1;
            if let Some(us) = waited_us {
                r.latency.saturating_record(us);
            }
        }
    }

    fn tick_error(&mut self, now: u64, n: u64) {
        self.s.tick_errors(self.second_of(now), n);
        self.live_errors += n;
    }

    /// The second of the window `now` falls in (the timeline puts later ones in its last).
    #[inline]
    fn second_of(&self, now: u64) -> usize {
        (now.saturating_sub(self.plan.warm_end) / 1_000_000_000) as usize
    }
}
