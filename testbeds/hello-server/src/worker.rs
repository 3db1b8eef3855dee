//! One event loop per thread: accepts (thread 0 only), reads, parses every complete pipelined
//! request, answers in order into one buffer and writes it with one call.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use crate::http::{self, Head, Parsed, Route};
use crate::metrics;
use crate::response::{put_json, put_status, Connection, CONTINUE, GARBAGE};
use crate::shared::Shared;
use crate::stats::WorkerStats;
use crate::timer::Timers;

pub(crate) const LISTENER: Token = Token(0);
pub(crate) const WAKER: Token = Token(1);
const TIMER: Token = Token(2);
const FIRST_CONN: usize = 3;

/// Initial read buffer per connection; grows (doubling) only for huge request heads.
const READ_BUF: usize = 16 * 1024;
/// Largest request head accepted; beyond it the answer is 431 and the connection closes.
const MAX_READ_BUF: usize = 1 << 20;
/// Stop parsing while this much output is unsent: a client that pipelines but never reads must
/// not make the server buffer without bound.
const HIGH_WATER: usize = 1 << 20;
/// Same bound for requests parsed but waiting out `--delay-us`.
const MAX_PENDING: usize = 4096;

/// A request whose answer waits for its delay to pass.
struct Pending {
    due: Instant,
    route: Route,
    head_only: bool,
    connection: Connection,
}

struct Conn {
    stream: TcpStream,
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    pending: VecDeque<Pending>,
    /// Requests parsed on this connection (for `--close-after`).
    parsed: u64,
    /// Request body bytes still to skip.
    skip: u64,
    /// No more requests will be parsed; close once everything queued is written.
    closing: bool,
    /// Our write side is shut; reading only to drain until the peer closes (lingering close,
    /// so unread request bytes do not turn our close into a reset that loses the last answer).
    lingering: bool,
    read_closed: bool,
    timer_armed: bool,
    /// This connection answered the request `--exit-after-requests` waits for.
    exit_now: bool,
}

impl Conn {
    fn new(stream: TcpStream) -> Self {
        Conn {
            stream,
            rbuf: vec![0; READ_BUF],
            rpos: 0,
            rend: 0,
            wbuf: Vec::with_capacity(READ_BUF),
            wpos: 0,
            pending: VecDeque::new(),
            parsed: 0,
            skip: 0,
            closing: false,
            lingering: false,
            read_closed: false,
            timer_armed: false,
            exit_now: false,
        }
    }

    /// Reads once into the free end of the buffer, compacting or growing it first if needed.
    /// Returns the bytes read and whether that was less than the room offered (a short read).
    fn read_some(&mut self, stats: &WorkerStats) -> io::Result<(usize, bool)> {
        if self.rpos == self.rend {
            self.rpos = 0;
            self.rend = 0;
        } else if self.rpos > 0
            && (self.rend == self.rbuf.len() || self.rpos >= self.rbuf.len() / 2)
        {
            self.rbuf.copy_within(self.rpos..self.rend, 0);
            self.rend -= self.rpos;
            self.rpos = 0;
        }
        if self.rend == self.rbuf.len() {
            if self.rbuf.len() >= MAX_READ_BUF {
                return Err(io::Error::other("request head too large"));
            }
            self.rbuf.resize(self.rbuf.len() * 2, 0);
        }
        let room = self.rbuf.len() - self.rend;
        let n = self.stream.read(&mut self.rbuf[self.rend..])?;
        self.rend += n;
        stats.received(n);
        Ok((n, n < room))
    }

    /// Writes as much queued output as the socket takes.
    fn flush(&mut self) -> io::Result<()> {
        while self.wpos < self.wbuf.len() {
            match self.stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        } else if self.wpos >= self.wbuf.len() / 2 {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
        Ok(())
    }
}

/// Appends the answer for one request to `out` and counts it. Returns `true` when this answer
/// is the one `--exit-after-requests` waits for.
fn answer(
    shared: &Shared,
    stats: &WorkerStats,
    out: &mut Vec<u8>,
    route: Route,
    head_only: bool,
    connection: Connection,
) -> bool {
    let r = &shared.responses;
    let before = out.len();
    let status = match route {
        Route::Plaintext | Route::Json => {
            if shared.config.garbage {
                out.extend_from_slice(GARBAGE);
                None
            } else if shared.errors.next_is_error() {
                Some(r.error.put(out, head_only, connection))
            } else if route == Route::Plaintext {
                Some(r.plaintext.put(out, head_only, connection))
            } else {
                Some(r.json.put(out, head_only, connection))
            }
        }
        Route::Health => {
            let canned = if shared.ready() {
                &r.health_ok
            } else {
                &r.not_ready
            };
            Some(canned.put(out, head_only, connection))
        }
        Route::Stats => {
            let body = serde_json::to_vec(&shared.snapshot()).unwrap_or_default();
            Some(put_json(out, &body, head_only, connection))
        }
        Route::Metrics => {
            let page = metrics::render(&shared.snapshot(), shared.hold.held_bytes());
            Some(metrics::put(out, &page, head_only, connection))
        }
        Route::Continue => Some(r.continued.put(out, head_only, connection)),
        Route::BigHeader => Some(r.big_header.put(out, head_only, connection)),
        Route::NotFound => Some(r.not_found.put(out, head_only, connection)),
        Route::Status(code) => Some(put_status(out, code, head_only, connection)),
        Route::BadRequest => Some(r.bad_request.put(out, false, Connection::Close)),
        Route::TooLarge => Some(r.too_large.put(out, false, Connection::Close)),
    };
    stats.answered(route, status);
    stats.sent(out.len() - before);
    match shared.config.exit_after_requests {
        Some(n) if route.counts_as_request() => {
            shared.answered.fetch_add(1, Ordering::Relaxed) + 1 == n
        }
        _ => false,
    }
}

/// One thread's event loop and the connections it owns.
pub(crate) struct Worker {
    id: usize,
    shared: Arc<Shared>,
    poll: Poll,
    listener: Option<TcpListener>,
    inbox: Receiver<TcpStream>,
    peers: Vec<Sender<TcpStream>>,
    next_peer: usize,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    timers: Timers,
}

impl Worker {
    /// `listener` and `peers` are given to the accepting worker only: it hands connections
    /// round-robin to every worker (itself included), which balances better than SO_REUSEPORT
    /// hashing for the few connections benchmarks use and keeps "port in use" a real error.
    pub(crate) fn new(
        id: usize,
        shared: Arc<Shared>,
        poll: Poll,
        mut listener: Option<TcpListener>,
        inbox: Receiver<TcpStream>,
        peers: Vec<Sender<TcpStream>>,
    ) -> io::Result<Self> {
        if let Some(l) = listener.as_mut() {
            poll.registry().register(l, LISTENER, Interest::READABLE)?;
        }
        let timers = Timers::new(poll.registry(), TIMER)?;
        Ok(Worker {
            id,
            shared,
            poll,
            listener,
            inbox,
            peers,
            next_peer: 0,
            conns: Vec::new(),
            free: Vec::new(),
            timers,
        })
    }

    pub(crate) fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        loop {
            if let Err(e) = self.poll.poll(&mut events, None) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                eprintln!("hello-server: worker {} poll failed: {e}", self.id);
                return;
            }
            if self.shared.stop.load(Ordering::Acquire) {
                return;
            }
            if let Some(stall) = &self.shared.stall {
                stall.wait();
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept(),
                    WAKER => self.take_inbox(),
                    TIMER => self.timers.acknowledge(),
                    // After a FIN no new event will come, so then read until EOF is seen.
                    Token(t) => self.drive_or_close(t - FIRST_CONN, !event.is_read_closed()),
                }
            }
            let now = Instant::now();
            while let Some(slot) = self.timers.pop_due(now) {
                if let Some(conn) = self.conns.get_mut(slot).and_then(Option::as_mut) {
                    conn.timer_armed = false;
                    self.drive_or_close(slot, false);
                }
            }
            self.timers.arm(Instant::now());
        }
    }

    fn accept(&mut self) {
        let Some(listener) = self.listener.take() else {
            return;
        };
        loop {
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // WouldBlock, or out of descriptors: wait for the next connection.
                Err(_) => break,
            };
            let target = self.next_peer % self.peers.len().max(1);
            self.next_peer = self.next_peer.wrapping_add(1);
            if target == self.id {
                self.add(stream);
            } else if self.peers[target].send(stream).is_ok() {
                let _ = self.shared.wakers[target].wake();
            }
        }
        self.listener = Some(listener);
    }

    fn take_inbox(&mut self) {
        while let Ok(stream) = self.inbox.try_recv() {
            self.add(stream);
        }
    }

    fn add(&mut self, mut stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let slot = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self
            .poll
            .registry()
            .register(&mut stream, Token(FIRST_CONN + slot), interest)
            .is_err()
        {
            self.free.push(slot);
            return;
        }
        self.shared.stats[self.id].connection();
        self.conns[slot] = Some(Conn::new(stream));
    }

    fn drive_or_close(&mut self, slot: usize, short_read_ends: bool) {
        if self.conns.get(slot).is_some_and(Option::is_some) && !self.drive(slot, short_read_ends) {
            self.conns[slot] = None;
            self.shared.stats[self.id].closed();
            self.free.push(slot);
        }
    }

    /// Moves a connection forward as far as it can go without blocking; `false` means close it.
    /// With `short_read_ends`, a short read is taken to mean the socket is empty (see below).
    fn drive(&mut self, slot: usize, short_read_ends: bool) -> bool {
        let shared = &*self.shared;
        let stats = &shared.stats[self.id];
        let Some(conn) = self.conns[slot].as_mut() else {
            return false;
        };
        let mut now = None;
        // A short read means the socket was empty at that moment, and Linux epoll reports every
        // later arrival, so the extra read that would only say WouldBlock can be skipped.
        let mut drained = false;
        loop {
            let blocked = process(shared, stats, conn, slot, &mut self.timers, &mut now);
            let flushed = conn.flush();
            if conn.exit_now {
                let n = shared.config.exit_after_requests.unwrap_or_default();
                eprintln!(
                    "hello-server: exiting with code 3 after answering {n} requests \
                     (--exit-after-requests)"
                );
                std::process::exit(3);
            }
            if flushed.is_err() {
                return false;
            }
            if conn.wpos < conn.wbuf.len() {
                return true; // wait until writable
            }
            if conn.closing {
                // Nothing more will be parsed: linger once the last answer is out, else wait
                // for the timer that releases the delayed answers still queued.
                return if conn.pending.is_empty() {
                    conn.linger(stats)
                } else {
                    true
                };
            }
            if conn.read_closed {
                return !conn.pending.is_empty();
            }
            if blocked || drained {
                return true; // a timer or the next event picks it up
            }
            // Requests in what comes next are delayed from when they arrive, not from a
            // time cached earlier in this loop.
            now = None;
            match conn.read_some(stats) {
                Ok((0, _)) => conn.read_closed = true,
                Ok((_, short)) => drained = short && short_read_ends,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }
}

/// Answers delayed requests that are due, then parses every complete request in the read
/// buffer, answering at once or queueing behind the delay. Returns `true` when it stopped
/// because too much is queued (so reading more now would only pile up).
fn process(
    shared: &Shared,
    stats: &WorkerStats,
    conn: &mut Conn,
    slot: usize,
    timers: &mut Timers,
    now: &mut Option<Instant>,
) -> bool {
    if !conn.pending.is_empty() {
        let t = *now.get_or_insert_with(Instant::now);
        while conn.pending.front().is_some_and(|p| p.due <= t) {
            if let Some(p) = conn.pending.pop_front() {
                conn.exit_now |= answer(
                    shared,
                    stats,
                    &mut conn.wbuf,
                    p.route,
                    p.head_only,
                    p.connection,
                );
            }
        }
    }
    let delay = shared.config.delay;
    let mut blocked = false;
    while !conn.closing {
        if conn.wbuf.len() - conn.wpos >= HIGH_WATER || conn.pending.len() >= MAX_PENDING {
            blocked = true;
            break;
        }
        if conn.skip > 0 {
            let take = conn.skip.min((conn.rend - conn.rpos) as u64);
            conn.rpos += take as usize;
            conn.skip -= take;
            if conn.skip > 0 {
                break;
            }
        }
        if conn.rpos == conn.rend {
            break;
        }
        let hold = &shared.hold;
        let head = match http::parse(&conn.rbuf[conn.rpos..conn.rend], |p| hold.on_path(p)) {
            Parsed::Complete(head) => head,
            Parsed::Partial if conn.rpos == 0 && conn.rend >= MAX_READ_BUF => {
                bad_head(conn.rend, Route::TooLarge)
            }
            Parsed::Partial => break,
            Parsed::Bad => bad_head(conn.rend - conn.rpos, Route::BadRequest),
        };
        conn.rpos += head.len;
        conn.skip = head.body_len;
        if head.expect_continue && conn.pending.is_empty() {
            // The body is not sent until we say so; without this the client stalls, or skips
            // the body after our answer and the next request is misread as body bytes.
            conn.wbuf.extend_from_slice(CONTINUE);
        }
        conn.parsed += 1;
        if head.route.counts_as_request() {
            spin(shared.config.work);
            if !shared.config.block.is_zero() {
                std::thread::sleep(shared.config.block);
            }
        }
        let close = head.close
            || matches!(head.route, Route::BadRequest | Route::TooLarge)
            || shared.config.close_after.is_some_and(|n| conn.parsed >= n);
        conn.closing = close;
        let connection = match (close, head.http10) {
            (true, _) => Connection::Close,
            (false, true) => Connection::KeepAlive,
            (false, false) => Connection::Default,
        };
        if delay.is_zero() && conn.pending.is_empty() {
            conn.exit_now |= answer(
                shared,
                stats,
                &mut conn.wbuf,
                head.route,
                head.head_only,
                connection,
            );
        } else {
            conn.pending.push_back(Pending {
                due: *now.get_or_insert_with(Instant::now) + delay,
                route: head.route,
                head_only: head.head_only,
                connection,
            });
        }
    }
    if let Some(front) = conn.pending.front() {
        if !conn.timer_armed {
            timers.push(front.due, slot);
            conn.timer_armed = true;
        }
    }
    blocked
}

fn bad_head(len: usize, route: Route) -> Head {
    Head {
        len,
        route,
        head_only: false,
        close: true,
        http10: false,
        body_len: 0,
        expect_continue: false,
    }
}

impl Conn {
    /// Everything is written and the connection should end: shut our side, then drain whatever
    /// the client still sends until it closes. Returns `false` once the connection can go.
    fn linger(&mut self, stats: &WorkerStats) -> bool {
        if !self.lingering {
            self.lingering = true;
            if self.stream.shutdown(Shutdown::Write).is_err() {
                return false;
            }
        }
        loop {
            self.rpos = 0;
            self.rend = 0;
            match self.read_some(stats) {
                Ok((0, _)) => return false,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }
}

/// Keeps this thread busy for `work` of wall time (`--work-us`): the request's cost is held
/// even when the thread is preempted, so the server's capacity stays 1/work per thread.
fn spin(work: Duration) {
    if work.is_zero() {
        return;
    }
    let until = Instant::now() + work;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}
