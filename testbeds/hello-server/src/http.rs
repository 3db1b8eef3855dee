//! Request side of HTTP/1.1: routing a parsed request and pulling out the few headers that matter.

use std::mem::MaybeUninit;

/// Most headers a request may carry; more is a bad request.
const MAX_HEADERS: usize = 64;

/// What a request asks for; small and `Copy` so it can wait in a queue without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Plaintext,
    Json,
    Health,
    Stats,
    /// `/metrics`: the counters in the Prometheus text format.
    Metrics,
    Continue,
    BigHeader,
    NotFound,
    Status(u16),
    /// Unparseable request or unsupported framing: answered 400 and the connection closed.
    BadRequest,
    /// Request head larger than the read buffer may grow: answered 431 and closed.
    TooLarge,
}

impl Route {
    /// Number of routes with a fixed path (counted by index in the stats).
    pub(crate) const FIXED: usize = 8;

    pub(crate) fn from_path(path: &str) -> Route {
        let path = path.split_once('?').map_or(path, |(p, _)| p);
        match path {
            "/plaintext" => Route::Plaintext,
            "/json" => Route::Json,
            "/health" => Route::Health,
            "/stats" => Route::Stats,
            "/metrics" => Route::Metrics,
            "/continue" => Route::Continue,
            "/bigheader" => Route::BigHeader,
            _ => match path
                .strip_prefix("/status/")
                .and_then(|c| c.parse::<u16>().ok())
            {
                Some(code) if (100..=999).contains(&code) => Route::Status(code),
                _ => Route::NotFound,
            },
        }
    }

    /// Probes (`/health`, `/stats`, `/metrics`) are not part of the load, so they do not count
    /// as requests.
    pub(crate) fn counts_as_request(self) -> bool {
        !matches!(self, Route::Health | Route::Stats | Route::Metrics)
    }

    /// Slot in the fixed-path counters; `None` for `/status/{code}` (counted per code) and for
    /// requests without a usable path.
    pub(crate) fn fixed_index(self) -> Option<usize> {
        Some(match self {
            Route::Plaintext => 0,
            Route::Json => 1,
            Route::Health => 2,
            Route::Stats => 3,
            Route::Continue => 4,
            Route::BigHeader => 5,
            Route::NotFound => 6,
            Route::Metrics => 7,
            Route::Status(_) | Route::BadRequest | Route::TooLarge => return None,
        })
    }

    pub(crate) fn fixed_name(index: usize) -> &'static str {
        [
            "/plaintext",
            "/json",
            "/health",
            "/stats",
            "/continue",
            "/bigheader",
            "other",
            "/metrics",
        ][index]
    }
}

/// The parts of one request head the server acts on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head {
    /// Bytes of the request head, to consume from the read buffer.
    pub len: usize,
    pub route: Route,
    pub head_only: bool,
    /// The client asked to close (or spoke HTTP/1.0 without keep-alive).
    pub close: bool,
    /// HTTP/1.0 (a kept-alive 1.0 connection must be told so in each answer).
    pub http10: bool,
    pub body_len: u64,
    /// `Expect: 100-continue`: the client waits for a 100 before sending the body.
    pub expect_continue: bool,
}

/// Result of looking at the start of the read buffer.
pub(crate) enum Parsed {
    Complete(Head),
    Partial,
    Bad,
}

/// Parses one request head at the start of `buf` without allocating. `on_path` sees the raw path
/// (used by the hold-memory knob) while it is still borrowed from the buffer.
pub(crate) fn parse(buf: &[u8], on_path: impl FnOnce(&str)) -> Parsed {
    let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let len = match req.parse_with_uninit_headers(buf, &mut headers) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Bad,
    };
    let (Some(method), Some(path), Some(version)) = (req.method, req.path, req.version) else {
        return Parsed::Bad;
    };
    on_path(path);
    let mut close = version == 0;
    let mut body_len = 0u64;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            match std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse().ok())
            {
                Some(n) => body_len = n,
                None => return Parsed::Bad,
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // Request bodies are only supported with Content-Length.
            return Parsed::Bad;
        } else if h.name.eq_ignore_ascii_case("expect") {
            expect_continue = h.value.eq_ignore_ascii_case(b"100-continue");
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    close = false;
                }
            }
        }
    }
    Parsed::Complete(Head {
        len,
        route: Route::from_path(path),
        head_only: method == "HEAD",
        close,
        http10: version == 0,
        body_len,
        expect_continue,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        assert_eq!(Route::from_path("/plaintext?x=1"), Route::Plaintext);
        assert_eq!(Route::from_path("/status/204"), Route::Status(204));
        assert_eq!(Route::from_path("/status/99"), Route::NotFound);
        assert_eq!(Route::from_path("/status/abc"), Route::NotFound);
        assert_eq!(Route::from_path("/nope"), Route::NotFound);
    }

    #[test]
    fn parses_heads() {
        let Parsed::Complete(h) = parse(
            b"HEAD /json HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            |_| {},
        ) else {
            panic!("not complete")
        };
        assert_eq!(
            (h.route, h.head_only, h.close, h.body_len),
            (Route::Json, true, true, 5)
        );
        assert!(matches!(
            parse(b"GET /json HTTP/1.1\r\n", |_| {}),
            Parsed::Partial
        ));
        assert!(matches!(
            parse(b"\x01\x02 nonsense\r\n\r\n", |_| {}),
            Parsed::Bad
        ));
        let Parsed::Complete(h) = parse(b"GET / HTTP/1.0\r\n\r\n", |_| {}) else {
            panic!()
        };
        assert!(h.close);
    }
}
