//! Response side: every fixed answer is serialised once at start and copied out per request.

use std::io::Write;

use crate::config::Config;

const SERVER: &str = "Server: hello-server\r\n";
/// The `Connection` header an answer carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Connection {
    /// HTTP/1.1 default: persistent, no header needed.
    Default,
    /// This is the last answer on the connection.
    Close,
    /// HTTP/1.0 client that asked for keep-alive: it needs to hear it back.
    KeepAlive,
}

impl Connection {
    #[inline]
    pub(crate) fn header(self) -> &'static [u8] {
        match self {
            Connection::Default => b"",
            Connection::Close => b"Connection: close\r\n",
            Connection::KeepAlive => b"Connection: keep-alive\r\n",
        }
    }
}
/// What `--garbage` answers instead of HTTP: a client must report a parse error, not hang.
pub(crate) const GARBAGE: &[u8] = b"garbage!\r\n\r\n\x00\xff not http at all \xfe\r\n\r\n";
/// Interim answer to `Expect: 100-continue` and the first part of `/continue`.
pub(crate) const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
const HELLO: &[u8] = b"Hello, World!";
const JSON: &[u8] = br#"{"message":"Hello, World!"}"#;
/// Size of the single header `/bigheader` sends, to trip clients' header limits.
pub(crate) const BIG_HEADER_BYTES: usize = 100 * 1024;

/// A pre-serialised response. `head` holds the status line and headers without the blank line,
/// so a `Connection` header can be slipped in without a second copy of the response.
pub(crate) struct Canned {
    head: Box<[u8]>,
    body: Box<[u8]>,
    pub(crate) status: u16,
}

impl Canned {
    fn new(
        status: u16,
        extra_headers: &str,
        content_type: &str,
        body: &[u8],
        chunked: bool,
    ) -> Self {
        let mut head = format!("HTTP/1.1 {status} {}\r\n{SERVER}", reason(status));
        if !content_type.is_empty() {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str(extra_headers);
        let body = if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
            chunk(body)
        } else {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
            body.to_vec()
        };
        Canned {
            head: head.into_bytes().into(),
            body: body.into(),
            status,
        }
    }

    /// Appends the response to `out`; returns its status for the stats.
    #[inline]
    pub(crate) fn put(&self, out: &mut Vec<u8>, head_only: bool, conn: Connection) -> u16 {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(conn.header());
        out.extend_from_slice(b"\r\n");
        if !head_only {
            out.extend_from_slice(&self.body);
        }
        self.status
    }
}

/// Splits a body into (up to) three chunks so clients really reassemble chunked framing.
fn chunk(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 64);
    let size = body.len().div_ceil(3).max(1);
    for piece in body.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// All fixed answers, built once per server.
pub(crate) struct Responses {
    pub(crate) plaintext: Canned,
    pub(crate) json: Canned,
    pub(crate) health_ok: Canned,
    pub(crate) not_ready: Canned,
    pub(crate) not_found: Canned,
    pub(crate) error: Canned,
    pub(crate) bad_request: Canned,
    pub(crate) too_large: Canned,
    pub(crate) continued: Canned,
    pub(crate) big_header: Canned,
}

impl Responses {
    pub(crate) fn new(config: &Config) -> Self {
        let text = "text/plain";
        let plain_body: Vec<u8> = match config.body_size {
            Some(n) => HELLO.iter().chain(b" ").copied().cycle().take(n).collect(),
            None => HELLO.to_vec(),
        };
        let big = format!(
            "X-Big: {}\r\n",
            "a".repeat(BIG_HEADER_BYTES - "X-Big: \r\n".len())
        );
        let mut continued = Canned::new(200, "", text, b"Continued", false);
        let mut head = CONTINUE.to_vec();
        head.extend_from_slice(&continued.head);
        continued.head = head.into();
        Responses {
            plaintext: Canned::new(200, "", text, &plain_body, config.chunked),
            json: Canned::new(200, "", "application/json", JSON, config.chunked),
            health_ok: Canned::new(200, "", text, b"OK", false),
            not_ready: Canned::new(503, "", text, b"not ready", false),
            not_found: Canned::new(404, "", text, b"Not Found", false),
            error: Canned::new(500, "", text, b"Internal Server Error", false),
            bad_request: Canned::new(400, "", text, b"Bad Request", false),
            too_large: Canned::new(431, "", text, b"Request Header Fields Too Large", false),
            continued,
            big_header: Canned::new(200, &big, text, b"big header", false),
        }
    }
}

/// `/status/{code}`: rare enough to format on the fly (into the connection's buffer, no allocation
/// once it has grown).
pub(crate) fn put_status(out: &mut Vec<u8>, code: u16, head_only: bool, conn: Connection) -> u16 {
    let reason = reason(code);
    let _ = write!(out, "HTTP/1.1 {code} {reason}\r\n{SERVER}");
    out.extend_from_slice(conn.header());
    if code < 200 || code == 204 || code == 304 {
        out.extend_from_slice(b"\r\n");
    } else {
        let len = 4 + reason.len();
        let _ = write!(
            out,
            "Content-Type: text/plain\r\nContent-Length: {len}\r\n\r\n"
        );
        if !head_only {
            let _ = write!(out, "{code} {reason}");
        }
    }
    code
}

/// `/stats`: a JSON body computed per request.
pub(crate) fn put_json(out: &mut Vec<u8>, body: &[u8], head_only: bool, conn: Connection) -> u16 {
    let _ = write!(
        out,
        "HTTP/1.1 200 OK\r\n{SERVER}Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    out.extend_from_slice(conn.header());
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(body);
    }
    200
}

fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        418 => "I'm a teapot",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_framing() {
        assert_eq!(
            chunk(b"Hello, World!"),
            b"5\r\nHello\r\n5\r\n, Wor\r\n3\r\nld!\r\n0\r\n\r\n"
        );
    }

    #[test]
    fn close_is_inserted_before_blank_line() {
        let r = Responses::new(&Config::default());
        let mut out = Vec::new();
        r.plaintext.put(&mut out, false, Connection::Close);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with("Connection: close\r\n\r\nHello, World!"),
            "{text}"
        );
    }
}
