use super::*;

fn parse_all(
    parser: &mut ResponseParser,
    data: &[u8],
) -> Result<(Vec<Response>, Vec<u8>), ParseError> {
    let mut out = Vec::new();
    let mut body = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let (n, r) = parser.feed(rest, &mut |b: &[u8]| body.extend_from_slice(b))?;
        out.extend(r);
        rest = &rest[n..];
    }
    Ok((out, body))
}

/// Feeds `data` split at every byte boundary (two pieces) and one byte at a time; all must agree.
fn check_splits(data: &[u8], head: bool, want: &[Response], want_body: &[u8]) {
    let mut p = ResponseParser::new(head);
    let (r, b) = parse_all(&mut p, data).unwrap();
    assert_eq!(r, want, "whole");
    assert_eq!(b, want_body);
    for cut in 0..=data.len() {
        let mut p = ResponseParser::new(head);
        let (mut r1, mut b1) = parse_all(&mut p, &data[..cut]).unwrap();
        let (r2, b2) = parse_all(&mut p, &data[cut..]).unwrap();
        r1.extend(r2);
        b1.extend(b2);
        assert_eq!(r1, want, "cut at {cut}");
        assert_eq!(b1, want_body, "cut at {cut}");
    }
    let mut p = ResponseParser::new(head);
    let mut rs = Vec::new();
    let mut bs = Vec::new();
    for byte in data.chunks(1) {
        let (r, b) = parse_all(&mut p, byte).unwrap();
        rs.extend(r);
        bs.extend(b);
    }
    assert_eq!(rs, want, "byte by byte");
    assert_eq!(bs, want_body);
}

fn resp(status: u16, close: bool, bytes: usize) -> Response {
    Response {
        status,
        close,
        bytes: bytes as u64,
    }
}

#[test]
fn content_length() {
    let d =
        b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!";
    check_splits(d, false, &[resp(200, false, d.len())], b"Hello, World!");
}

#[test]
fn pipelined_responses() {
    let one = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi".to_vec();
    let two = b"HTTP/1.1 404 Not Found\r\ncontent-length:0\r\n\r\n".to_vec();
    let data = [one.clone(), two.clone(), one.clone()].concat();
    check_splits(
        &data,
        false,
        &[
            resp(200, false, one.len()),
            resp(404, false, two.len()),
            resp(200, false, one.len()),
        ],
        b"hihi",
    );
}

#[test]
fn chunked_with_extensions_and_trailers() {
    let d = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n5;name=val\r\nHello\r\n8 ; ext\r\n, World!\r\n0\r\nX-Trailer: yes\r\nOther: 1\r\n\r\n";
    check_splits(d, false, &[resp(200, false, d.len())], b"Hello, World!");
}

#[test]
fn chunked_hex_sizes_and_empty_trailers() {
    let body = vec![b'x'; 0x1A];
    let mut d = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1a\r\n".to_vec();
    d.extend_from_slice(&body);
    d.extend_from_slice(b"\r\n0\r\n\r\n");
    check_splits(&d, false, &[resp(200, false, d.len())], &body);
}

#[test]
fn head_204_304_have_no_body() {
    let d = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n";
    check_splits(d, true, &[resp(200, false, d.len())], b"");
    let d = b"HTTP/1.1 204 No Content\r\nContent-Length: 13\r\n\r\n";
    check_splits(d, false, &[resp(204, false, d.len())], b"");
    let d = b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n";
    check_splits(d, false, &[resp(304, false, d.len())], b"");
}

#[test]
fn interim_responses_are_skipped() {
    let d = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx";
    check_splits(d, false, &[resp(201, false, d.len())], b"x");
}

#[test]
fn connection_close_and_http10() {
    let d = b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n";
    check_splits(d, false, &[resp(200, true, d.len())], b"");
    let d = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
    check_splits(d, false, &[resp(200, true, d.len())], b"");
    let d = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n";
    check_splits(d, false, &[resp(200, false, d.len())], b"");
}

#[test]
fn body_until_close() {
    let d = b"HTTP/1.1 200 OK\r\nServer: x\r\n\r\nsome body";
    let mut p = ResponseParser::new(false);
    let (r, b) = parse_all(&mut p, d).unwrap();
    assert!(r.is_empty());
    assert_eq!(b, b"some body");
    assert_eq!(p.eof(), Some(resp(200, true, d.len())));
}

#[test]
fn bare_lf_and_no_reason() {
    let d = b"HTTP/1.1 200\nContent-Length: 1\n\nx";
    check_splits(d, false, &[resp(200, false, d.len())], b"x");
}

#[test]
fn garbage_is_an_error() {
    for bad in [
        &b"garbage\r\n\r\n"[..],
        b"HTTP/2 200 OK\r\n\r\n",
        b"HTTP/1.1 2x0 OK\r\n\r\n",
        b"HTTP/1.1 004 Odd\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1234567890abcdef0\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
    ] {
        let mut p = ResponseParser::new(false);
        assert!(
            parse_all(&mut p, bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn oversized_head_is_an_error_but_100k_is_fine() {
    let mut d = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
    d.extend(std::iter::repeat_n(b'a', 100 * 1024));
    d.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
    let mut p = ResponseParser::new(false);
    let (r, _) = parse_all(&mut p, &d).unwrap();
    assert_eq!(r, vec![resp(200, false, d.len())]);

    let mut d = b"HTTP/1.1 200 OK\r\n".to_vec();
    for _ in 0..20_000 {
        d.extend_from_slice(b"X-Many: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    let mut p = ResponseParser::new(false);
    // Fed in small pieces, the limit still applies.
    let mut err = None;
    for piece in d.chunks(1000) {
        if let Err(e) = parse_all(&mut p, piece) {
            err = Some(e);
            break;
        }
    }
    assert_eq!(err, Some(ParseError::HeadTooLarge));
}

/// The fuzz corpus the tests share: valid responses, each mutated at random (a byte changed,
/// inserted or removed, a stretch copied), with the fuzz target's flags byte in front.
pub(super) fn fuzz_corpus(count: usize) -> impl Iterator<Item = Vec<u8>> {
    let seeds: [&[u8]; 5] = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nT: x\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 204 No\r\nConnection: close\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nServer: x\r\n\r\nuntil close",
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\nHTTP/1.1 500 E\r\ncontent-length:0\r\n\r\n",
    ];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..count).map(move |_| {
        let mut d = vec![rnd() as u8];
        d.extend_from_slice(seeds[(rnd() % seeds.len() as u64) as usize]);
        for _ in 0..(rnd() % 4) {
            let pos = 1 + (rnd() as usize) % d.len();
            match rnd() % 4 {
                0 if pos < d.len() => d[pos] = rnd() as u8,
                1 => d.insert(pos, rnd() as u8),
                2 if pos < d.len() => {
                    d.remove(pos);
                }
                _ => {
                    let from = 1 + (rnd() as usize) % (d.len() - 1).max(1);
                    let to = (from + (rnd() as usize) % 16).min(d.len());
                    let chunk = d[from..to].to_vec();
                    let at = pos.min(d.len());
                    d.splice(at..at, chunk);
                }
            }
        }
        d
    })
}

#[test]
fn random_inputs_never_panic() {
    // The fuzz target's check over mutated valid responses, so `cargo test` exercises it too
    // (the coverage-guided fuzzer lives in fuzz/).
    for d in fuzz_corpus(50_000) {
        fuzz_check(&d);
    }
}

#[test]
fn folded_header_lines_are_accepted() {
    // obs-fold (RFC 9112 §5.2): a line starting with SP or HTAB continues the previous field's
    // value; a client must accept it, and the folded part belongs to that field.
    let d = b"HTTP/1.1 200 OK\r\nX-Long: part one,\r\n part two\r\n\tpart three\r\nContent-Length: 2\r\n\r\nhi";
    check_splits(d, false, &[resp(200, false, d.len())], b"hi");
    // The framing header itself folded: the value after the fold is the length.
    let d = b"HTTP/1.1 200 OK\r\nContent-Length:\r\n 5\r\n\r\nhello";
    check_splits(d, false, &[resp(200, false, d.len())], b"hello");
    let d = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip,\r\n chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n";
    check_splits(d, false, &[resp(200, false, d.len())], b"hi");
    let d = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive,\r\n close\r\n\r\nhi";
    check_splits(d, false, &[resp(200, true, d.len())], b"hi");
    // Bare LF line ends fold the same way.
    let d = b"HTTP/1.1 200 OK\nX-A: a\n b\nContent-Length: 1\n\nx";
    check_splits(d, false, &[resp(200, false, d.len())], b"x");
    // A fold before any field is still an error.
    let mut p = ResponseParser::new(false);
    assert!(parse_all(&mut p, b"HTTP/1.1 200 OK\r\n folded\r\n\r\n").is_err());
}
