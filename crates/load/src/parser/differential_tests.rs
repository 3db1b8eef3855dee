//! rigor's parser against httparse on the shared fuzz corpus: for every input both must agree
//! whether the first final response's head is accepted, rejected or still incomplete, on its
//! status and length, and on how long a Content-Length body is. httparse reads heads only, so
//! the reference adds the framing rules rigor applies on top (interim responses skipped,
//! Content-Length checked). The differences that are rigor's intent are listed in
//! [`Difference`], each recognised from the input itself; any other disagreement fails.

use super::tests::fuzz_corpus;
use super::{ParseError, ResponseParser};

/// How a parser judged the head of the first final response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Complete and valid: its status, and the bytes up to the end of its head (interim
    /// responses included).
    Head {
        status: u16,
        len: usize,
    },
    Rejected,
    Incomplete,
}

/// The disagreements rigor means to have, each with the reason it differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Difference {
    /// rigor reads any `HTTP/1.x`; httparse only 1.0 and 1.1.
    AnyMinorVersion,
    /// rigor refuses a status below 100, which no response can have; httparse takes any three
    /// digits.
    StatusBelow100,
    /// rigor cannot switch protocols, so 101 is an error; httparse returns the head.
    SwitchingProtocols,
    /// rigor skips the reason phrase and the values of headers it does not interpret without
    /// looking at them, and takes a lone CR as the line's end; httparse rejects control bytes
    /// (and a CR without LF) there.
    UncheckedText,
    /// rigor checks Content-Length byte by byte, so a bad value is an error before the head is
    /// complete; httparse cannot see the value until the whole head has arrived.
    EarlyLengthError,
}

/// The headers one response head may have here (the corpus has a handful).
const MAX_HEADERS: usize = 64;

fn rigor_head(data: &[u8]) -> Verdict {
    // As a HEAD request's response, the head is the whole response.
    let mut p = ResponseParser::new(true);
    let mut off = 0;
    while off < data.len() {
        match p.feed(&data[off..], &mut |_: &[u8]| {}) {
            Ok((used, Some(r))) => {
                return Verdict::Head {
                    status: r.status,
                    len: off + used,
                }
            }
            Ok((used, None)) => off += used,
            Err(_) => return Verdict::Rejected,
        }
    }
    Verdict::Incomplete
}

fn rigor_error(data: &[u8]) -> Option<ParseError> {
    let mut p = ResponseParser::new(true);
    let mut off = 0;
    while off < data.len() {
        match p.feed(&data[off..], &mut |_: &[u8]| {}) {
            Ok((_, Some(_))) => return None,
            Ok((used, None)) => off += used,
            Err(e) => return Some(e),
        }
    }
    None
}

/// httparse's head, with interim responses skipped and the Content-Length headers checked as
/// RFC 9110 §8.6 says (digits only, all copies equal); also the body length they give.
fn reference_head(data: &[u8]) -> (Verdict, Option<u64>) {
    let mut config = httparse::ParserConfig::default();
    // obs-fold: a client must accept folded lines in responses (RFC 9112 §5.2), as rigor does.
    config.allow_obsolete_multiline_headers_in_responses(true);
    let mut start = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut headers);
        let n = match config.parse_response(&mut resp, &data[start..]) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return (Verdict::Incomplete, None),
            Err(_) => return (Verdict::Rejected, None),
        };
        let status = resp.code.expect("complete head has a status");
        if (100..200).contains(&status) && status != 101 {
            start += n;
            continue;
        }
        let Ok(length) = content_length(resp.headers) else {
            return (Verdict::Rejected, None);
        };
        let chunked = resp
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("transfer-encoding"));
        let framed_by_length = !chunked && status != 204 && status != 304;
        let len = start + n;
        return (
            Verdict::Head { status, len },
            length.filter(|_| framed_by_length),
        );
    }
}

/// The Content-Length the headers give: `Err` for a value that is not one decimal number (a
/// fold counts as whitespace around it) or copies that differ.
fn content_length(headers: &[httparse::Header<'_>]) -> Result<Option<u64>, ()> {
    let mut length = None;
    for h in headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("content-length"))
    {
        let mut parts = h
            .value
            .split(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
            .filter(|p| !p.is_empty());
        let (Some(digits), None) = (parts.next(), parts.next()) else {
            return Err(());
        };
        if !digits.iter().all(u8::is_ascii_digit) {
            return Err(());
        }
        let n: u64 = std::str::from_utf8(digits)
            .map_err(|_| ())?
            .parse()
            .map_err(|_| ())?;
        if length.is_some_and(|l| l != n) {
            return Err(());
        }
        length = Some(n);
    }
    Ok(length)
}

/// Which intended difference explains rigor's `ours` against the reference's `theirs` on
/// `data`, judged from the input; `None` when none does.
fn explain(data: &[u8], ours: Verdict, theirs: Verdict) -> Option<Difference> {
    // The part of the input the verdicts are about: the head one side accepted, else it all.
    let head = match (ours, theirs) {
        (Verdict::Head { len, .. }, _) | (_, Verdict::Head { len, .. }) => &data[..len],
        _ => data,
    };
    let lines: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
    let status_lines = lines.iter().filter(|l| l.starts_with(b"HTTP/1."));
    for line in status_lines.clone() {
        if line.len() > 7 && line[7].is_ascii_digit() && !matches!(line[7], b'0' | b'1') {
            return Some(Difference::AnyMinorVersion);
        }
    }
    for line in status_lines {
        let code = line.get(9..12).filter(|c| c.iter().all(u8::is_ascii_digit));
        if code.is_some_and(|c| c < &b"100"[..]) {
            return Some(Difference::StatusBelow100);
        }
        if code == Some(&b"101"[..]) {
            return Some(Difference::SwitchingProtocols);
        }
    }
    let control = |b: u8| (b < 0x20 && !matches!(b, b'\t' | b'\r')) || b == 0x7f;
    let lone_cr = |l: &[u8]| l.iter().rev().skip(1).any(|&b| b == b'\r');
    if lines
        .iter()
        .any(|l| l.iter().any(|&b| control(b)) || lone_cr(l))
    {
        return Some(Difference::UncheckedText);
    }
    if ours == Verdict::Rejected
        && theirs == Verdict::Incomplete
        && rigor_error(data) == Some(ParseError::ContentLength)
    {
        return Some(Difference::EarlyLengthError);
    }
    None
}

/// Inputs beyond the random corpus: the fuzzer's seed files and the tests' own cases.
fn fixed_inputs() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = [
        &include_bytes!("../../../../fuzz/corpus/response_parser/chunked")[1..],
        &include_bytes!("../../../../fuzz/corpus/response_parser/cl")[1..],
        &include_bytes!("../../../../fuzz/corpus/response_parser/interim")[1..],
        b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!",
        b"HTTP/1.1 200 OK\r\nX-Long: part one,\r\n part two\r\n\tpart three\r\nContent-Length: 2\r\n\r\nhi",
        b"HTTP/1.1 200 OK\r\nContent-Length:\r\n 5\r\n\r\nhello",
        b"HTTP/1.1 200\nContent-Length: 1\n\nx",
        b"\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n folded\r\n\r\n",
        b"HTTP/2 200 OK\r\n\r\n",
        b"HTTP/1.1 2x0 OK\r\n\r\n",
        b"garbage\r\n\r\n",
    ]
    .iter()
    .map(|d| d.to_vec())
    .collect();
    // Intended differences, so each is known to be recognised.
    v.extend([
        b"HTTP/1.7 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec(),
        b"HTTP/1.1 004 Odd\r\n\r\n".to_vec(),
        b"HTTP/1.1 101 Switching Protocols\r\n\r\n".to_vec(),
        b"HTTP/1.1 200 O\x01K\r\nContent-Length: 0\r\n\r\n".to_vec(),
        b"HTTP/1.1 200 OK\r\nContent-Length: 1x".to_vec(),
    ]);
    v
}

#[test]
fn agrees_with_httparse_on_the_fuzz_corpus() {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    let corpus = fuzz_corpus(50_000).map(|d| d[1..].to_vec());
    for data in fixed_inputs().into_iter().chain(corpus) {
        let ours = rigor_head(&data);
        let (theirs, length) = reference_head(&data);
        let label = match explain(&data, ours, theirs) {
            _ if ours == theirs => "agree".to_string(),
            Some(d) => format!("{d:?}"),
            None => panic!(
                "rigor {ours:?}, httparse {theirs:?} on {:?}",
                String::from_utf8_lossy(&data)
            ),
        };
        *seen.entry(label).or_default() += 1;
        if let (Verdict::Head { len, .. }, Some(n)) = (ours, length) {
            check_body_length(&data, len, n);
        }
    }
    // Every intended difference occurs (the fixed inputs hold one of each), and most of the
    // corpus is plain agreement.
    for d in [
        "AnyMinorVersion",
        "StatusBelow100",
        "SwitchingProtocols",
        "UncheckedText",
        "EarlyLengthError",
    ] {
        assert!(seen.contains_key(d), "{d} never seen: {seen:?}");
    }
    assert!(seen["agree"] > 40_000, "{seen:?}");
}

/// Both accepted a head of `head_len` bytes framing an `n`-byte body: rigor's whole response
/// (when the input holds it) is exactly that long.
fn check_body_length(data: &[u8], head_len: usize, n: u64) {
    let Some(total) = head_len.checked_add(usize::try_from(n).unwrap_or(usize::MAX)) else {
        return;
    };
    if data.len() < total {
        return;
    }
    let mut p = ResponseParser::new(false);
    let mut off = 0;
    while off < data.len() {
        match p.feed(&data[off..], &mut |_: &[u8]| {}) {
            Ok((used, Some(r))) => {
                assert_eq!(
                    (off + used, r.bytes as usize),
                    (total, total),
                    "body length on {:?}",
                    String::from_utf8_lossy(data)
                );
                return;
            }
            Ok((used, None)) => off += used,
            Err(e) => panic!("{e} on {:?}", String::from_utf8_lossy(data)),
        }
    }
    panic!("no response in {:?}", String::from_utf8_lossy(data));
}
