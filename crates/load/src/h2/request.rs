//! The HTTP/2 request, encoded once: a HEADERS frame whose header block (HPACK, literals that
//! touch no dynamic table) is the same for every stream, so a send copies it and writes the
//! stream's id; a body goes out in DATA frames as flow control allows.

use super::frame::{self, DEFAULT_MAX_FRAME, HEADER_LEN};
use crate::parser::is_token_text;
use crate::url::Target;
use crate::LoadError;

/// The request every stream sends.
#[derive(Debug, Clone)]
pub struct H2Request {
    /// The HEADERS frame, its stream id left zero.
    pub headers: Vec<u8>,
    /// The body, if any (then HEADERS does not end the stream).
    pub body: Option<Vec<u8>>,
    /// HEAD: answers describe a body they do not send.
    pub head: bool,
}

/// Header fields HTTP/2 forbids (connection-specific; RFC 9113 §8.2.2).
const CONNECTION_SPECIFIC: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

impl H2Request {
    /// Encodes the request for `target`; names what HTTP/2 cannot carry.
    pub fn new(
        target: &Target,
        method: &str,
        headers: &[(String, String)],
        body: Option<&[u8]>,
    ) -> Result<H2Request, LoadError> {
        let invalid = |m: String| Err(LoadError::InvalidRequest(m));
        if !is_token_text(method) {
            return invalid(format!("invalid method `{method}`"));
        }
        let mut block = Vec::with_capacity(128);
        match method {
            "GET" => block.push(0x80 | 2),
            "POST" => block.push(0x80 | 3),
            _ => literal_indexed_name(&mut block, 2, method.as_bytes()),
        }
        block.push(0x80 | if target.tls { 7 } else { 6 });
        match target.path.as_str() {
            "/" => block.push(0x80 | 4),
            p => literal_indexed_name(&mut block, 4, p.as_bytes()),
        }
        let host = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("host"))
            .map_or(target.host_header.as_str(), |(_, v)| v.trim());
        literal_indexed_name(&mut block, 1, host.as_bytes());
        for (k, v) in headers {
            if !is_token_text(k) {
                return invalid(format!("invalid header name `{k}`"));
            }
            if v.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                return invalid(format!("header `{k}` has a line break in its value"));
            }
            let name = k.to_ascii_lowercase();
            if name == "host" {
                continue;
            }
            if name == "content-length" {
                return invalid(format!("header `{k}` is set by the engine from the body"));
            }
            if CONNECTION_SPECIFIC.contains(&name.as_str()) {
                return invalid(format!(
                    "header `{k}` is connection-specific, which HTTP/2 forbids"
                ));
            }
            if name == "te" && !v.trim().eq_ignore_ascii_case("trailers") {
                return invalid(format!("header `{k}` may only be `trailers` in HTTP/2"));
            }
            block.push(0x00);
            string(&mut block, name.as_bytes());
            string(&mut block, v.trim().as_bytes());
        }
        if let Some(b) = body {
            // content-length (static table 28): servers that read bodies want it.
            literal_indexed_name(&mut block, 28, b.len().to_string().as_bytes());
        }
        if block.len() > DEFAULT_MAX_FRAME {
            return invalid(format!(
                "the request's header block is {} bytes; HTTP/2 requests are limited to {} \
                 (one HEADERS frame)",
                block.len(),
                DEFAULT_MAX_FRAME
            ));
        }
        let flags = frame::END_HEADERS | if body.is_none() { frame::END_STREAM } else { 0 };
        let mut out = Vec::with_capacity(HEADER_LEN + block.len());
        frame::put_header(&mut out, block.len(), frame::HEADERS, flags, 0);
        out.extend_from_slice(&block);
        Ok(H2Request {
            headers: out,
            body: body.map(<[u8]>::to_vec),
            head: method == "HEAD",
        })
    }

    /// Bytes on the wire for one request (HEADERS and, for a body, its DATA frames).
    pub fn wire_len(&self) -> usize {
        let body = self.body.as_ref().map_or(0, |b| {
            b.len() + HEADER_LEN * b.len().div_ceil(DEFAULT_MAX_FRAME).max(1)
        });
        self.headers.len() + body
    }
}

/// An HPACK integer with an `n`-bit prefix, the first byte's high bits `high` (RFC 7541 §5.1).
fn integer(out: &mut Vec<u8>, high: u8, n: u32, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(high | v as u8);
        return;
    }
    out.push(high | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// A string literal, not Huffman-coded (RFC 7541 §5.2).
fn string(out: &mut Vec<u8>, s: &[u8]) {
    integer(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

/// "Literal header field without indexing" whose name is static table entry `index`.
fn literal_indexed_name(out: &mut Vec<u8>, index: usize, value: &[u8]) {
    integer(out, 0x00, 4, index);
    string(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn decode(req: &H2Request) -> Vec<(String, String)> {
        let mut d = loona_hpack::Decoder::new();
        let mut out = Vec::new();
        d.decode_with_cb(&req.headers[HEADER_LEN..], |n: Cow<[u8]>, v: Cow<[u8]>| {
            out.push((
                String::from_utf8_lossy(&n).into_owned(),
                String::from_utf8_lossy(&v).into_owned(),
            ))
        })
        .unwrap();
        out
    }

    #[test]
    fn an_independent_decoder_reads_the_request_back() {
        let t = crate::url::parse("https://127.0.0.1:8443/a/b?c=d").unwrap();
        let long = "v".repeat(300);
        let r = H2Request::new(
            &t,
            "PUT",
            &[
                ("X-Trace".into(), " on ".into()),
                ("Host".into(), "example.test".into()),
                ("x-long".into(), long.clone()),
            ],
            Some(b"hello"),
        )
        .unwrap();
        let h = frame::FrameHeader::parse(&r.headers);
        assert_eq!(h.kind, frame::HEADERS);
        assert_eq!(
            h.flags,
            frame::END_HEADERS,
            "a body follows: the stream stays open"
        );
        assert_eq!(h.len, r.headers.len() - HEADER_LEN);
        let want = [
            (":method", "PUT"),
            (":scheme", "https"),
            (":path", "/a/b?c=d"),
            (":authority", "example.test"),
            ("x-trace", "on"),
            ("x-long", long.as_str()),
            ("content-length", "5"),
        ];
        let got = decode(&r);
        assert_eq!(got.len(), want.len());
        for ((gn, gv), (wn, wv)) in got.iter().zip(want) {
            assert_eq!((gn.as_str(), gv.as_str()), (wn, wv));
        }
        assert_eq!(r.wire_len(), r.headers.len() + 9 + 5);

        let t = crate::url::parse("http://127.0.0.1:8080/").unwrap();
        let r = H2Request::new(&t, "GET", &[], None).unwrap();
        assert_eq!(
            frame::FrameHeader::parse(&r.headers).flags & frame::END_STREAM,
            1
        );
        let got = decode(&r);
        assert_eq!(got[0], (":method".into(), "GET".into()));
        assert_eq!(got[1], (":scheme".into(), "http".into()));
        assert_eq!(got[2], (":path".into(), "/".into()));
        assert_eq!(got[3], (":authority".into(), "127.0.0.1:8080".into()));
    }

    #[test]
    fn what_http2_cannot_carry_is_refused_by_name() {
        let t = crate::url::parse("http://127.0.0.1:8080/").unwrap();
        for (k, v, why) in [
            ("Connection", "close", "connection-specific"),
            ("Transfer-Encoding", "chunked", "connection-specific"),
            ("TE", "gzip", "only be `trailers`"),
            ("Content-Length", "3", "set by the engine"),
            ("a b", "x", "invalid header name"),
        ] {
            let e = H2Request::new(&t, "GET", &[(k.into(), v.into())], None).unwrap_err();
            assert!(e.to_string().contains(why), "{k}: {e}");
        }
        let big = "x".repeat(20_000);
        let e = H2Request::new(&t, "GET", &[("x-big".into(), big)], None).unwrap_err();
        assert!(e.to_string().contains("limited to 16384"), "{e}");
    }

    #[test]
    fn integers_cross_their_prefix() {
        let mut out = Vec::new();
        integer(&mut out, 0, 5, 1337);
        assert_eq!(out, [31, 154, 10], "RFC 7541 C.1.2");
    }
}
