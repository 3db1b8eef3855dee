//! A streaming HTTP/1.1 response parser.
//!
//! It consumes bytes as they arrive and keeps only a few counters, so a connection needs no
//! buffer of its own: the worker reads into one per-thread buffer and feeds it here. Bodies are
//! counted and skipped (or handed to a callback for the one-off probe), never stored.
//!
//! The work is split by the part of the response being read: `head` walks the status line and
//! header lines, `fields` interprets the few headers that frame the body, `body` counts a
//! Content-Length or until-close body, and `chunked` decodes a chunked one. `feed` only hands
//! the bytes to whichever part the response is in.

mod body;
mod chunked;
mod fields;
mod fuzz;
mod head;
mod token;

pub use fuzz::fuzz_check;
pub use token::{is_token, is_token_text};

use fields::{Hdr, NAME_CAP, TOKEN_CAP};
use std::fmt;

/// Largest response head (status line + headers) accepted; larger is a parse error.
pub const MAX_HEAD: u64 = 1 << 20;

/// Why a response could not be parsed; the connection is then replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    StatusLine,
    Header,
    ContentLength,
    Chunk,
    HeadTooLarge,
    SwitchingProtocols,
}

impl ParseError {
    /// The reason in words, as a stable string that failures can be counted by.
    pub fn reason(&self) -> &'static str {
        match self {
            ParseError::StatusLine => "invalid status line",
            ParseError::Header => "invalid header line",
            ParseError::ContentLength => "invalid Content-Length",
            ParseError::Chunk => "invalid chunked encoding",
            ParseError::HeadTooLarge => "response head larger than 1 MiB",
            ParseError::SwitchingProtocols => "101 Switching Protocols is not supported",
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// The first bytes of `data` as printable text (escapes for the rest), to show what a server sent.
pub fn excerpt(data: &[u8], max: usize) -> String {
    let mut out: String = data
        .iter()
        .take(max)
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect();
    if data.len() > max {
        out.push('…');
    }
    format!("\"{out}\"")
}

impl std::error::Error for ParseError {}

/// One complete final response (interim 1xx responses are skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// The server will close the connection after this response.
    pub close: bool,
    /// Bytes on the wire for this response, interim responses included.
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    Version(u8),
    Minor,
    StatusSp,
    Status(u8),
    Reason,
    LineStart,
    HeadEndLf,
    Name,
    ValueWs,
    Value,
    Body,
    ChunkSize,
    ChunkExt,
    ChunkSizeLf,
    ChunkData,
    ChunkDataCr,
    ChunkDataLf,
    TrailerStart,
    TrailerLine,
    TrailerEndLf,
    UntilClose,
}

/// The part of a response a state belongs to, which decides the code that reads the next bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Head,
    Body,
    Chunked,
}

impl State {
    #[inline]
    fn part(self) -> Part {
        match self {
            State::Body | State::UntilClose => Part::Body,
            State::ChunkSize
            | State::ChunkExt
            | State::ChunkSizeLf
            | State::ChunkData
            | State::ChunkDataCr
            | State::ChunkDataLf
            | State::TrailerStart
            | State::TrailerLine
            | State::TrailerEndLf => Part::Chunked,
            _ => Part::Head,
        }
    }
}

/// Parser state for one connection; reuse it for every response on that connection.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    head_request: bool,
    state: State,
    status: u16,
    minor: u8,
    head_bytes: u64,
    bytes: u64,
    remaining: u64,
    content_length: Option<u64>,
    chunked: bool,
    close: bool,
    keep_alive: bool,
    hdr: Hdr,
    /// A header field's value has begun and may still continue on a folded line (obs-fold), so
    /// it is only interpreted when the next line turns out not to be a continuation.
    field_open: bool,
    name: [u8; NAME_CAP],
    name_len: usize,
    tok: [u8; TOKEN_CAP],
    tok_len: usize,
    tok_long: bool,
    te_last_chunked: bool,
    cl_value: u64,
    cl_digits: u32,
    cl_ws_after: bool,
    chunk_digits: u32,
}

impl ResponseParser {
    /// `head_request`: the requests on this connection are HEAD, so responses carry no body.
    pub fn new(head_request: bool) -> Self {
        ResponseParser {
            head_request,
            state: State::Start,
            status: 0,
            minor: 1,
            head_bytes: 0,
            bytes: 0,
            remaining: 0,
            content_length: None,
            chunked: false,
            close: false,
            keep_alive: false,
            hdr: Hdr::Other,
            field_open: false,
            name: [0; NAME_CAP],
            name_len: 0,
            tok: [0; TOKEN_CAP],
            tok_len: 0,
            tok_long: false,
            te_last_chunked: false,
            cl_value: 0,
            cl_digits: 0,
            cl_ws_after: false,
            chunk_digits: 0,
        }
    }

    /// Whether the response being read answers a HEAD (a connection carrying a request mix
    /// may send HEAD among others); set before feeding its bytes.
    pub fn set_head_request(&mut self, head: bool) {
        self.head_request = head;
    }

    /// Forgets any partial response (after a reconnect).
    pub fn reset(&mut self) {
        *self = ResponseParser::new(self.head_request);
    }

    /// True between responses: nothing of the next one has arrived yet.
    pub fn is_idle(&self) -> bool {
        self.state == State::Start && self.bytes == 0
    }

    fn start_head(&mut self) {
        self.status = 0;
        self.minor = 1;
        self.head_bytes = 0;
        self.content_length = None;
        self.chunked = false;
        self.close = false;
        self.keep_alive = false;
        self.te_last_chunked = false;
        self.hdr = Hdr::Other;
        self.field_open = false;
    }

    fn finish(&mut self) -> Response {
        let r = Response {
            status: self.status,
            close: self.close || (self.minor == 0 && !self.keep_alive),
            bytes: self.bytes,
        };
        self.bytes = 0;
        self.start_head();
        self.state = State::Start;
        r
    }

    /// The peer closed the connection: completes a response whose body runs until close.
    pub fn eof(&mut self) -> Option<Response> {
        if self.state == State::UntilClose {
            Some(self.finish())
        } else {
            None
        }
    }

    /// Consumes bytes from `data` up to the end of the first complete response, if any.
    /// Returns how many bytes were used and that response; body bytes go to `on_body`.
    #[inline]
    pub fn feed<F: FnMut(&[u8])>(
        &mut self,
        data: &[u8],
        on_body: &mut F,
    ) -> Result<(usize, Option<Response>), ParseError> {
        let mut i = 0;
        while i < data.len() {
            let done = match self.state.part() {
                Part::Head => self.feed_head(data, &mut i)?,
                Part::Body => self.feed_body(data, &mut i, on_body),
                Part::Chunked => self.feed_chunked(data, &mut i, on_body)?,
            };
            if let Some(r) = done {
                return Ok((i, Some(r)));
            }
        }
        Ok((data.len(), None))
    }

    /// Skips to the end of the line (the reason phrase, an uninterpreted value, a trailer) in
    /// one scan, then moves to `next`.
    #[inline]
    fn skip_line(&mut self, data: &[u8], i: &mut usize, next: State) {
        match data[*i..].iter().position(|&c| c == b'\n') {
            Some(p) => {
                *i += p + 1;
                self.bytes += (p + 1) as u64;
                self.state = next;
            }
            None => {
                self.bytes += (data.len() - *i) as u64;
                *i = data.len();
            }
        }
    }
}

#[cfg(test)]
mod differential_tests;
#[cfg(test)]
mod tests;
