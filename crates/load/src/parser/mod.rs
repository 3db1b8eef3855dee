//! A streaming HTTP/1.1 response parser.
//!
//! It consumes bytes as they arrive and keeps only a few counters, so a connection needs no
//! buffer of its own: the worker reads into one per-thread buffer and feeds it here. Bodies are
//! counted and skipped (or handed to a callback for the one-off probe), never stored.

use std::fmt;

/// Largest response head (status line + headers) accepted; larger is a parse error.
pub const MAX_HEAD: u64 = 1 << 20;

const NAME_CAP: usize = 20;
const TOKEN_CAP: usize = 16;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hdr {
    Other,
    ContentLength,
    TransferEncoding,
    Connection,
}

const PREFIX: &[u8] = b"HTTP/1.";

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

const fn token_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    t
}

static TOKEN: [bool; 256] = token_table();

#[inline]
fn is_token(b: u8) -> bool {
    TOKEN[b as usize]
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

    fn classify_name(&mut self) {
        let n = &self.name[..self.name_len];
        self.hdr = if self.name_len >= NAME_CAP {
            Hdr::Other
        } else if n == b"content-length" {
            Hdr::ContentLength
        } else if n == b"transfer-encoding" {
            Hdr::TransferEncoding
        } else if n == b"connection" {
            Hdr::Connection
        } else {
            Hdr::Other
        };
        self.tok_len = 0;
        self.tok_long = false;
        self.cl_value = 0;
        self.cl_digits = 0;
        self.cl_ws_after = false;
        if self.hdr == Hdr::TransferEncoding {
            self.te_last_chunked = false;
        }
    }

    fn end_token(&mut self) {
        if self.tok_len == 0 {
            return;
        }
        let t = &self.tok[..self.tok_len];
        match self.hdr {
            Hdr::TransferEncoding => self.te_last_chunked = !self.tok_long && t == b"chunked",
            Hdr::Connection if !self.tok_long => {
                if t == b"close" {
                    self.close = true;
                } else if t == b"keep-alive" {
                    self.keep_alive = true;
                }
            }
            _ => {}
        }
        self.tok_len = 0;
        self.tok_long = false;
    }

    #[inline]
    fn value_byte(&mut self, b: u8) -> Result<(), ParseError> {
        match self.hdr {
            Hdr::Other => {}
            Hdr::ContentLength => match b {
                b'0'..=b'9' => {
                    if self.cl_ws_after {
                        return Err(ParseError::ContentLength);
                    }
                    self.cl_value = self
                        .cl_value
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(u64::from(b - b'0')))
                        .ok_or(ParseError::ContentLength)?;
                    self.cl_digits += 1;
                }
                b' ' | b'\t' | b'\r' => self.cl_ws_after = self.cl_digits > 0,
                _ => return Err(ParseError::ContentLength),
            },
            Hdr::TransferEncoding | Hdr::Connection => match b {
                b',' => self.end_token(),
                b' ' | b'\t' | b'\r' => {}
                _ => {
                    if self.tok_len < TOKEN_CAP {
                        self.tok[self.tok_len] = b.to_ascii_lowercase();
                        self.tok_len += 1;
                    } else {
                        self.tok_long = true;
                    }
                }
            },
        }
        Ok(())
    }

    fn end_value(&mut self) -> Result<(), ParseError> {
        match self.hdr {
            Hdr::Other => {}
            Hdr::ContentLength => {
                if self.cl_digits == 0 {
                    return Err(ParseError::ContentLength);
                }
                if let Some(prev) = self.content_length {
                    if prev != self.cl_value {
                        return Err(ParseError::ContentLength);
                    }
                }
                self.content_length = Some(self.cl_value);
            }
            Hdr::TransferEncoding => {
                self.end_token();
                self.chunked = self.te_last_chunked;
                if !self.chunked {
                    // A transfer coding other than chunked last: the body runs until close.
                    self.content_length = None;
                    self.close = true;
                }
            }
            Hdr::Connection => self.end_token(),
        }
        self.hdr = Hdr::Other;
        Ok(())
    }

    /// Called at the end of the head; returns a response when it has no body.
    fn end_head(&mut self) -> Result<Option<Response>, ParseError> {
        if (100..200).contains(&self.status) {
            if self.status == 101 {
                return Err(ParseError::SwitchingProtocols);
            }
            // Interim response (100 Continue, 103 Early Hints): the final one follows.
            self.start_head();
            self.state = State::Start;
            return Ok(None);
        }
        if self.head_request || self.status == 204 || self.status == 304 {
            return Ok(Some(self.finish()));
        }
        if self.chunked {
            self.chunk_digits = 0;
            self.remaining = 0;
            self.state = State::ChunkSize;
            return Ok(None);
        }
        match self.content_length {
            Some(0) => Ok(Some(self.finish())),
            Some(n) => {
                self.remaining = n;
                self.state = State::Body;
                Ok(None)
            }
            None => {
                self.close = true;
                self.state = State::UntilClose;
                Ok(None)
            }
        }
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
        let len = data.len();
        let mut head_start = i;
        let in_head = |s: State| {
            !matches!(
                s,
                State::Body
                    | State::ChunkSize
                    | State::ChunkExt
                    | State::ChunkSizeLf
                    | State::ChunkData
                    | State::ChunkDataCr
                    | State::ChunkDataLf
                    | State::TrailerStart
                    | State::TrailerLine
                    | State::TrailerEndLf
                    | State::UntilClose
            )
        };
        macro_rules! account_head {
            () => {
                if in_head(self.state) {
                    self.head_bytes += (i - head_start) as u64;
                    if self.head_bytes > MAX_HEAD {
                        return Err(ParseError::HeadTooLarge);
                    }
                }
            };
        }
        while i < len {
            match self.state {
                State::Body | State::ChunkData => {
                    let n = (self.remaining.min((len - i) as u64)) as usize;
                    on_body(&data[i..i + n]);
                    i += n;
                    self.bytes += n as u64;
                    self.remaining -= n as u64;
                    if self.remaining == 0 {
                        if self.state == State::Body {
                            return Ok((i, Some(self.finish())));
                        }
                        self.state = State::ChunkDataCr;
                    }
                    continue;
                }
                State::UntilClose => {
                    on_body(&data[i..]);
                    self.bytes += (len - i) as u64;
                    return Ok((len, None));
                }
                State::Reason | State::TrailerLine => {
                    // Skip to the end of the line in one scan.
                    match data[i..].iter().position(|&c| c == b'\n') {
                        Some(p) => {
                            i += p + 1;
                            self.bytes += (p + 1) as u64;
                            self.state = if self.state == State::Reason {
                                State::LineStart
                            } else {
                                State::TrailerStart
                            };
                        }
                        None => {
                            self.bytes += (len - i) as u64;
                            i = len;
                        }
                    }
                    continue;
                }
                State::Name => {
                    // Bulk-scan the header name; the byte that ends it is handled below.
                    let rest = &data[i..];
                    let n = rest
                        .iter()
                        .position(|&c| !is_token(c))
                        .unwrap_or(rest.len());
                    for &c in &rest[..n] {
                        if self.name_len < NAME_CAP {
                            self.name[self.name_len] = c.to_ascii_lowercase();
                        }
                        self.name_len = (self.name_len + 1).min(NAME_CAP);
                    }
                    i += n;
                    self.bytes += n as u64;
                    if i == len {
                        continue;
                    }
                }
                State::Start if len - i >= 13 && data[i..i + 7] == *PREFIX => {
                    // Whole status line prefix in hand: `HTTP/1.x ddd` then SP or CR.
                    let d = &data[i..i + 13];
                    let digits =
                        d[9].is_ascii_digit() && d[10].is_ascii_digit() && d[11].is_ascii_digit();
                    if d[7].is_ascii_digit()
                        && d[8] == b' '
                        && digits
                        && matches!(d[12], b' ' | b'\r')
                    {
                        self.start_head();
                        head_start = i;
                        self.minor = d[7] - b'0';
                        self.status = u16::from(d[9] - b'0') * 100
                            + u16::from(d[10] - b'0') * 10
                            + u16::from(d[11] - b'0');
                        if self.status < 100 {
                            return Err(ParseError::StatusLine);
                        }
                        i += 13;
                        self.bytes += 13;
                        self.state = State::Reason;
                        continue;
                    }
                }
                State::Value if self.hdr == Hdr::Other => {
                    match data[i..].iter().position(|&c| c == b'\n') {
                        Some(p) => {
                            i += p + 1;
                            self.bytes += (p + 1) as u64;
                            self.state = State::LineStart;
                        }
                        None => {
                            self.bytes += (len - i) as u64;
                            i = len;
                        }
                    }
                    continue;
                }
                _ => {}
            }
            let b = data[i];
            i += 1;
            self.bytes += 1;
            match self.state {
                State::Start => {
                    if b == b'\r' || b == b'\n' {
                        // Tolerate stray line ends between responses.
                        self.bytes -= 1;
                        head_start = i;
                        continue;
                    }
                    self.start_head();
                    head_start = i - 1;
                    if b != b'H' {
                        return Err(ParseError::StatusLine);
                    }
                    self.state = State::Version(1);
                }
                State::Version(n) => {
                    if b != PREFIX[n as usize] {
                        return Err(ParseError::StatusLine);
                    }
                    self.state = if n as usize + 1 == PREFIX.len() {
                        State::Minor
                    } else {
                        State::Version(n + 1)
                    };
                }
                State::Minor => {
                    if !b.is_ascii_digit() {
                        return Err(ParseError::StatusLine);
                    }
                    self.minor = b - b'0';
                    self.state = State::StatusSp;
                }
                State::StatusSp => {
                    if b != b' ' {
                        return Err(ParseError::StatusLine);
                    }
                    self.state = State::Status(0);
                }
                State::Status(n) => {
                    if n < 3 {
                        if !b.is_ascii_digit() {
                            return Err(ParseError::StatusLine);
                        }
                        self.status = self.status * 10 + u16::from(b - b'0');
                        self.state = State::Status(n + 1);
                    } else {
                        if self.status < 100 {
                            return Err(ParseError::StatusLine);
                        }
                        match b {
                            b' ' => self.state = State::Reason,
                            b'\r' => self.state = State::Reason,
                            b'\n' => self.state = State::LineStart,
                            _ => return Err(ParseError::StatusLine),
                        }
                    }
                }
                State::LineStart if b == b' ' || b == b'\t' => {
                    // Obsolete line folding: the previous field's value continues here, and
                    // the fold separates list items like whitespace does.
                    if !self.field_open {
                        return Err(ParseError::Header);
                    }
                    self.end_token();
                    self.state = State::ValueWs;
                }
                State::LineStart => {
                    if self.field_open {
                        self.field_open = false;
                        self.end_value()?;
                    }
                    match b {
                        b'\r' => self.state = State::HeadEndLf,
                        b'\n' => {
                            account_head!();
                            if let Some(r) = self.end_head()? {
                                return Ok((i, Some(r)));
                            }
                        }
                        _ if is_token(b) => {
                            self.name[0] = b.to_ascii_lowercase();
                            self.name_len = 1;
                            self.state = State::Name;
                        }
                        _ => return Err(ParseError::Header),
                    }
                }
                State::HeadEndLf => {
                    if b != b'\n' {
                        return Err(ParseError::Header);
                    }
                    account_head!();
                    if let Some(r) = self.end_head()? {
                        return Ok((i, Some(r)));
                    }
                }
                State::Name => {
                    if b == b':' {
                        self.classify_name();
                        self.field_open = true;
                        self.state = State::ValueWs;
                    } else if is_token(b) {
                        if self.name_len < NAME_CAP {
                            self.name[self.name_len] = b.to_ascii_lowercase();
                        }
                        self.name_len = (self.name_len + 1).min(NAME_CAP);
                    } else {
                        return Err(ParseError::Header);
                    }
                }
                State::ValueWs | State::Value => match b {
                    // The value is interpreted once the next line shows it is not folded.
                    b'\n' => self.state = State::LineStart,
                    b' ' | b'\t' if self.state == State::ValueWs => {}
                    _ => {
                        self.state = State::Value;
                        self.value_byte(b)?;
                    }
                },
                State::ChunkSize => {
                    let v = match b {
                        b'0'..=b'9' => Some(b - b'0'),
                        b'a'..=b'f' => Some(b - b'a' + 10),
                        b'A'..=b'F' => Some(b - b'A' + 10),
                        _ => None,
                    };
                    match (v, b) {
                        (Some(v), _) => {
                            self.chunk_digits += 1;
                            if self.chunk_digits > 15 {
                                return Err(ParseError::Chunk);
                            }
                            self.remaining = self.remaining * 16 + u64::from(v);
                        }
                        (None, b';' | b' ' | b'\t') if self.chunk_digits > 0 => {
                            self.state = State::ChunkExt
                        }
                        (None, b'\r') if self.chunk_digits > 0 => self.state = State::ChunkSizeLf,
                        (None, b'\n') if self.chunk_digits > 0 => self.end_chunk_size(),
                        _ => return Err(ParseError::Chunk),
                    }
                }
                State::ChunkExt => {
                    if b == b'\n' {
                        self.end_chunk_size();
                    }
                }
                State::ChunkSizeLf => {
                    if b != b'\n' {
                        return Err(ParseError::Chunk);
                    }
                    self.end_chunk_size();
                }
                State::ChunkDataCr => match b {
                    b'\r' => self.state = State::ChunkDataLf,
                    b'\n' => self.start_chunk(),
                    _ => return Err(ParseError::Chunk),
                },
                State::ChunkDataLf => {
                    if b != b'\n' {
                        return Err(ParseError::Chunk);
                    }
                    self.start_chunk();
                }
                State::TrailerStart => match b {
                    b'\r' => self.state = State::TrailerEndLf,
                    b'\n' => return Ok((i, Some(self.finish()))),
                    _ => self.state = State::TrailerLine,
                },
                State::TrailerEndLf => {
                    if b != b'\n' {
                        return Err(ParseError::Chunk);
                    }
                    return Ok((i, Some(self.finish())));
                }
                State::Body
                | State::ChunkData
                | State::UntilClose
                | State::Reason
                | State::TrailerLine => unreachable!("handled above"),
            }
        }
        account_head!();
        Ok((len, None))
    }

    fn start_chunk(&mut self) {
        self.chunk_digits = 0;
        self.remaining = 0;
        self.state = State::ChunkSize;
    }

    fn end_chunk_size(&mut self) {
        self.state = if self.remaining == 0 {
            State::TrailerStart
        } else {
            State::ChunkData
        };
    }
}

/// Fuzzing entry point (used by `fuzz/` and by the in-tree random test): parses `data` split at
/// a cut chosen by its first bytes and panics if an invariant breaks. Never panics on bad input.
#[doc(hidden)]
pub fn fuzz_check(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let cut = if rest.is_empty() {
        0
    } else {
        usize::from(flags >> 1) * rest.len() / 128
    };
    let mut p = ResponseParser::new(flags & 1 == 1);
    let mut total = 0u64;
    let mut body = 0u64;
    let mut pos = 0usize;
    'pieces: for piece in [&rest[..cut], &rest[cut..]] {
        let mut off = 0;
        while off < piece.len() {
            let before = body;
            match p.feed(&piece[off..], &mut |b: &[u8]| body += b.len() as u64) {
                Ok((used, resp)) => {
                    assert!(used <= piece.len() - off, "consumed more than given");
                    assert!(used > 0 || resp.is_some(), "no progress");
                    assert!(body - before <= used as u64, "body larger than input");
                    off += used;
                    pos += used;
                    if let Some(r) = resp {
                        assert!((100..1000).contains(&r.status), "status {}", r.status);
                        total += r.bytes;
                        assert!(total <= pos as u64, "responses larger than input");
                    }
                }
                Err(_) => break 'pieces,
            }
        }
    }
    if let Some(r) = p.eof() {
        total += r.bytes;
        assert!(total <= pos as u64);
    }
}

#[cfg(test)]
mod tests;
