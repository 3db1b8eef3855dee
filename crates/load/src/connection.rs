//! One client connection as an explicit state machine: idle → connecting → (handshaking →)
//! open → (dead → idle).

use crate::h2::Session;
use crate::parser::ResponseParser;
use crate::transport::Transport;
use std::collections::VecDeque;
use std::io;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnState {
    /// No socket; waiting in the worker's reconnect list.
    Idle,
    Connecting,
    /// https://: TCP is connected, the TLS handshake is under way.
    Handshaking,
    Open,
}

/// A request handed to the socket: when it should have gone (intended) and when it did (sent).
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    pub intended: u64,
    pub sent: u64,
    /// HTTP/2: the request's stream (0 for HTTP/1.1).
    pub stream: u32,
    /// Which request variant was sent (0 without a mix).
    pub variant: u32,
}

pub struct Conn {
    pub stream: Option<Transport>,
    pub state: ConnState,
    /// Bumped on every reconnect so stale free-slot entries can be recognised.
    pub generation: u32,
    pub parser: ResponseParser,
    /// Requests awaiting a response, oldest first (capacity = pipeline depth, never grows).
    pub inflight: VecDeque<Pending>,
    /// Bytes queued but not yet accepted by the socket.
    pub unsent: usize,
    /// When the current connect attempt started (ns since t0).
    pub since: u64,
    /// Earliest time to reconnect while Idle.
    pub retry_at: u64,
    /// When the TCP connect completed and the TLS handshake began.
    pub handshake_from: Option<Instant>,
    /// HTTP/2: the connection's session, once it is open.
    pub h2: Option<Box<Session>>,
    /// A mix: the bytes of the requests queued, of which the last `unsent` are not yet written
    /// (emptied whenever all are); without a mix the bytes come from the plan's batch.
    pub out: Vec<u8>,
    /// The state of the connection's seeded sequence of choices (kept across reconnects).
    pub rng: u64,
}

pub enum WriteOutcome {
    Done,
    Blocked,
    Failed,
}

impl Conn {
    pub fn new(head_request: bool, pipeline: usize) -> Self {
        Conn {
            stream: None,
            state: ConnState::Idle,
            generation: 0,
            parser: ResponseParser::new(head_request),
            inflight: VecDeque::with_capacity(pipeline),
            unsent: 0,
            since: 0,
            retry_at: 0,
            handshake_from: None,
            h2: None,
            out: Vec::new(),
            rng: 0,
        }
    }

    /// This connection with its own sequence of choices.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.rng = seed;
        self
    }

    /// Writes queued bytes, then the TLS records they became. All queued requests are identical,
    /// so the unsent bytes are always the tail of `batch` (the request repeated pipeline times).
    pub fn flush(&mut self, batch: &[u8]) -> WriteOutcome {
        let Some(stream) = self.stream.as_mut() else {
            return WriteOutcome::Failed;
        };
        if let Some(h2) = self.h2.as_mut() {
            while !h2.pending().is_empty() {
                match stream.write(h2.pending()) {
                    Ok(0) => return WriteOutcome::Failed,
                    Ok(n) => h2.written(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        return WriteOutcome::Blocked
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return WriteOutcome::Failed,
                }
            }
        }
        let bytes: &[u8] = if self.out.is_empty() {
            batch
        } else {
            &self.out
        };
        while self.unsent > 0 {
            match stream.write(&bytes[bytes.len() - self.unsent..]) {
                Ok(0) => return WriteOutcome::Failed,
                Ok(n) => self.unsent -= n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return WriteOutcome::Blocked,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return WriteOutcome::Failed,
            }
        }
        self.out.clear();
        match stream.flush() {
            Ok(()) => WriteOutcome::Done,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => WriteOutcome::Blocked,
            Err(_) => WriteOutcome::Failed,
        }
    }

    /// Whether the connection speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.is_tls())
    }

    /// Whether bytes wait for room in the socket: requests not yet written, or TLS records.
    pub fn wants_write(&self) -> bool {
        self.unsent > 0
            || self.h2.as_ref().is_some_and(|h| !h.pending().is_empty())
            || self.stream.as_ref().is_some_and(|s| s.wants_write())
    }

    /// Requests whose bytes have all been handed to the socket (over HTTP/2, counting every
    /// request whose frames could still be among the unwritten bytes as not sent); `len_of`
    /// gives a request's bytes.
    pub fn fully_sent(&self, len_of: impl Fn(&Pending) -> usize) -> usize {
        let mut unsent = self.unsent + self.h2.as_ref().map_or(0, |h| h.pending().len());
        let mut partial = 0;
        for p in self.inflight.iter().rev() {
            if unsent == 0 {
                break;
            }
            unsent = unsent.saturating_sub(len_of(p).max(1));
            partial += 1;
        }
        self.inflight.len().saturating_sub(partial)
    }

    /// Drops the socket and everything in flight; the caller has counted what was lost.
    pub fn reset(&mut self) {
        self.stream = None;
        self.state = ConnState::Idle;
        self.generation = self.generation.wrapping_add(1);
        self.parser.reset();
        self.inflight.clear();
        self.unsent = 0;
        self.out.clear();
        self.handshake_from = None;
        self.h2 = None;
    }

    /// Requests this connection may have in flight at once: `depth` (the pipeline, or the
    /// streams asked for), within what an HTTP/2 server allows.
    pub fn capacity(&self, depth: usize) -> usize {
        self.h2.as_ref().map_or(depth, |h| h.room(depth))
    }
}
