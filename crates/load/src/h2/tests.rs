//! The session against a scripted server: frames written by hand, header blocks by an
//! independent HPACK encoder (which indexes, so later responses depend on earlier ones).

use super::frame::{self, put_header, FrameHeader, HEADER_LEN};
use super::{Event, H2Request, Session};

struct Server {
    enc: loona_hpack::Encoder<'static>,
}

impl Server {
    fn new() -> Server {
        Server {
            enc: loona_hpack::Encoder::new(),
        }
    }
    fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
        let mut out = Vec::new();
        frame::put_settings(&mut out, pairs);
        out
    }
    fn head(&mut self, stream: u32, status: &str, flags: u8) -> Vec<u8> {
        let block = self.enc.encode([
            (&b":status"[..], status.as_bytes()),
            (&b"server"[..], &b"scripted"[..]),
            (&b"content-type"[..], &b"text/plain"[..]),
        ]);
        let mut out = Vec::new();
        put_header(
            &mut out,
            block.len(),
            frame::HEADERS,
            frame::END_HEADERS | flags,
            stream,
        );
        out.extend_from_slice(&block);
        out
    }
    fn data(stream: u32, body: &[u8], end: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let flags = if end { frame::END_STREAM } else { 0 };
        put_header(&mut out, body.len(), frame::DATA, flags, stream);
        out.extend_from_slice(body);
        out
    }
}

fn get() -> H2Request {
    let t = crate::url::parse("http://127.0.0.1:1/").unwrap();
    H2Request::new(&t, "GET", &[], None).unwrap()
}

/// The frames in `bytes` (after the preface, if it starts with one).
fn frames(mut bytes: &[u8]) -> Vec<(FrameHeader, Vec<u8>)> {
    if bytes.starts_with(frame::PREFACE) {
        bytes = &bytes[frame::PREFACE.len()..];
    }
    let mut out = Vec::new();
    while bytes.len() >= HEADER_LEN {
        let h = FrameHeader::parse(bytes);
        out.push((h, bytes[HEADER_LEN..HEADER_LEN + h.len].to_vec()));
        bytes = &bytes[HEADER_LEN + h.len..];
    }
    assert!(bytes.is_empty(), "a partial frame was written");
    out
}

fn drain(s: &mut Session) -> Vec<(FrameHeader, Vec<u8>)> {
    let out = s.pending().to_vec();
    s.written(out.len());
    frames(&out)
}

#[test]
fn streams_complete_out_of_order_across_split_reads() {
    let req = get();
    let mut s = Session::new();
    let opening = drain(&mut s);
    assert_eq!(opening[0].0.kind, frame::SETTINGS);
    assert_eq!(opening[1].0.kind, frame::WINDOW_UPDATE);
    assert_eq!(
        s.room(10),
        0,
        "nothing is sent before the server's SETTINGS"
    );
    let ids: Vec<u32> = (0..3).map(|_| s.open_stream(&req)).collect();
    assert_eq!(ids, [1, 3, 5]);
    let sent = drain(&mut s);
    assert_eq!(
        sent.iter().map(|(h, _)| h.stream).collect::<Vec<_>>(),
        [1, 3, 5]
    );

    let mut srv = Server::new();
    let mut wire = Server::settings(&[(frame::SETTINGS_MAX_CONCURRENT_STREAMS, 2)]);
    wire.extend(srv.head(5, "404", frame::END_STREAM));
    wire.extend(srv.head(1, "200", 0));
    wire.extend(Server::data(1, b"hello ", false));
    wire.extend(Server::data(1, b"world", true));
    wire.extend(srv.head(3, "200", 0));
    wire.extend(Server::data(3, b"", true));
    let mut events = Vec::new();
    // A byte at a time: every frame boundary and every split header is crossed.
    for b in &wire {
        s.feed(std::slice::from_ref(b), &req, &mut events).unwrap();
    }
    let done: Vec<(u32, u16)> = events
        .iter()
        .map(|e| match e {
            Event::Response { stream, status, .. } => (*stream, *status),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(done, [(5, 404), (1, 200), (3, 200)]);
    assert_eq!(s.room(10), 2, "the server's limit holds");
    assert_eq!(s.announced_max_streams, Some(2));
    let acks = drain(&mut s);
    assert!(acks
        .iter()
        .any(|(h, _)| h.kind == frame::SETTINGS && h.flags == frame::ACK));
}

#[test]
fn continuation_informational_heads_and_padding() {
    let req = get();
    let mut s = Session::new();
    s.open_stream(&req);
    let mut srv = Server::new();
    let mut wire = Server::settings(&[]);
    wire.extend(srv.head(1, "103", 0));
    let block = srv.enc.encode([(&b":status"[..], &b"201"[..])]);
    let (a, b) = block.split_at(1);
    put_header(&mut wire, a.len() + 6, frame::HEADERS, frame::PADDED, 1);
    wire.push(5);
    wire.extend_from_slice(a);
    wire.extend_from_slice(&[0; 5]);
    put_header(
        &mut wire,
        b.len(),
        frame::CONTINUATION,
        frame::END_HEADERS,
        1,
    );
    wire.extend_from_slice(b);
    wire.extend(Server::data(1, b"x", true));
    let mut events = Vec::new();
    s.feed(&wire, &req, &mut events).unwrap();
    assert!(
        matches!(events[..], [Event::Response { stream: 1, status: 201, bytes }] if bytes > 0),
        "{events:?}"
    );
}

#[test]
fn padded_data_keeps_only_its_content_and_padding_past_the_payload_fails() {
    let req = get();
    let mut s = Session::new();
    s.captured = Some(Vec::new());
    s.open_stream(&req);
    let mut srv = Server::new();
    let mut wire = Server::settings(&[]);
    wire.extend(srv.head(1, "200", 0));
    put_header(
        &mut wire,
        1 + 5 + 3,
        frame::DATA,
        frame::PADDED | frame::END_STREAM,
        1,
    );
    wire.push(3);
    wire.extend_from_slice(b"hello");
    wire.extend_from_slice(&[0; 3]);
    let mut events = Vec::new();
    s.feed(&wire, &req, &mut events).unwrap();
    assert!(
        matches!(
            events[..],
            [Event::Response {
                stream: 1,
                status: 200,
                ..
            }]
        ),
        "{events:?}"
    );
    assert_eq!(s.captured.as_deref(), Some(&b"hello"[..]));
    // A pad length of 9 in a 4-byte payload.
    let mut s = Session::new();
    s.open_stream(&req);
    let mut wire = Server::settings(&[]);
    wire.extend(Server::new().head(1, "200", 0));
    put_header(&mut wire, 4, frame::DATA, frame::PADDED, 1);
    wire.extend_from_slice(&[9, 0, 0, 0]);
    let e = s.feed(&wire, &req, &mut Vec::new()).unwrap_err();
    assert!(e.contains("more padding than payload"), "{e}");
}

#[test]
fn resets_goaways_and_pings() {
    let req = get();
    let mut s = Session::new();
    drain(&mut s);
    for _ in 0..3 {
        s.open_stream(&req);
    }
    drain(&mut s);
    let mut wire = Server::settings(&[]);
    put_header(&mut wire, 4, frame::RST_STREAM, 0, 3);
    wire.extend_from_slice(&7u32.to_be_bytes());
    put_header(&mut wire, 8, frame::PING, 0, 0);
    wire.extend_from_slice(b"12345678");
    put_header(&mut wire, 8, frame::GOAWAY, 0, 0);
    wire.extend_from_slice(&1u32.to_be_bytes());
    wire.extend_from_slice(&0u32.to_be_bytes());
    let mut events = Vec::new();
    s.feed(&wire, &req, &mut events).unwrap();
    assert_eq!(
        events,
        [
            Event::Reset { stream: 3, code: 7 },
            Event::GoAway { last: 1, code: 0 }
        ]
    );
    assert!(s.spent(), "no stream may open after a GOAWAY");
    let out = drain(&mut s);
    let ping = out.iter().find(|(h, _)| h.kind == frame::PING).unwrap();
    assert_eq!((ping.0.flags, &ping.1[..]), (frame::ACK, &b"12345678"[..]));
}

#[test]
fn bodies_wait_for_the_window() {
    let t = crate::url::parse("http://127.0.0.1:1/up").unwrap();
    let body = vec![7u8; 40_000];
    let req = H2Request::new(&t, "POST", &[], Some(&body)).unwrap();
    let mut s = Session::new();
    drain(&mut s);
    s.open_stream(&req);
    s.open_stream(&req);
    // 65,535 bytes of window: the first body and part of the second.
    let sent: usize = drain(&mut s)
        .iter()
        .filter(|(h, _)| h.kind == frame::DATA)
        .map(|(h, _)| h.len)
        .sum();
    assert_eq!(sent, 65_535);
    let mut wire = Server::settings(&[]);
    frame::put_window_update(&mut wire, 0, 100_000);
    let mut events = Vec::new();
    s.feed(&wire, &req, &mut events).unwrap();
    let rest = drain(&mut s);
    let data: Vec<_> = rest.iter().filter(|(h, _)| h.kind == frame::DATA).collect();
    assert_eq!(
        data.iter().map(|(h, _)| h.len).sum::<usize>(),
        80_000 - 65_535
    );
    assert!(data.iter().all(|(h, _)| h.stream == 3 && h.len <= 16_384));
    assert_eq!(data.last().unwrap().0.flags, frame::END_STREAM);
}

#[test]
fn servers_that_do_not_speak_http2_are_named() {
    let req = get();
    let mut events = Vec::new();
    let e = Session::new()
        .feed(b"HTTP/1.1 400 Bad Request\r\n\r\n", &req, &mut events)
        .unwrap_err();
    assert!(e.contains("HTTP/1.x"), "{e}");
    let mut wire = Vec::new();
    put_header(&mut wire, 0, frame::DATA, 0, 1);
    let e = Session::new().feed(&wire, &req, &mut events).unwrap_err();
    assert!(e.contains("not SETTINGS"), "{e}");
    let mut wire = Server::settings(&[]);
    put_header(&mut wire, 4, frame::PUSH_PROMISE, frame::END_HEADERS, 1);
    wire.extend_from_slice(&[0, 0, 0, 2]);
    let e = Session::new().feed(&wire, &req, &mut events).unwrap_err();
    assert!(e.contains("push"), "{e}");
    let mut wire = Server::settings(&[]);
    put_header(
        &mut wire,
        3,
        frame::HEADERS,
        frame::END_HEADERS | frame::END_STREAM,
        1,
    );
    wire.extend_from_slice(&[0xff, 0xff, 0xff]);
    let mut s = Session::new();
    s.open_stream(&req);
    let e = s.feed(&wire, &req, &mut events).unwrap_err();
    assert!(e.contains("HPACK"), "{e}");
}

#[test]
fn endless_header_blocks_fail_the_connection() {
    let req = get();
    let mut s = Session::new();
    s.open_stream(&req);
    let mut events = Vec::new();
    let mut wire = Server::settings(&[]);
    put_header(&mut wire, 1, frame::HEADERS, 0, 1);
    wire.push(0x88);
    s.feed(&wire, &req, &mut events).unwrap();
    // CONTINUATION frames that never end the block, full ones then empty ones.
    let mut full = Vec::new();
    put_header(&mut full, 16_384, frame::CONTINUATION, 0, 1);
    full.resize(HEADER_LEN + 16_384, 0);
    let mut empty = Vec::new();
    put_header(&mut empty, 0, frame::CONTINUATION, 0, 1);
    let fed = (0..4096)
        .map(|_| s.feed(&full, &req, &mut events))
        .find(Result::is_err);
    let err = fed
        .expect("a block continued for 64 MiB is refused")
        .unwrap_err();
    assert!(err.contains("header block"), "{err}");

    let mut s = Session::new();
    s.open_stream(&req);
    let mut wire = Server::settings(&[]);
    put_header(&mut wire, 1, frame::HEADERS, 0, 1);
    wire.push(0x88);
    s.feed(&wire, &req, &mut events).unwrap();
    let flood = empty.repeat(1 << 17);
    assert!(s.feed(&flood, &req, &mut events).is_err());
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn acknowledgements_the_server_never_reads_are_bounded() {
    let req = get();
    let mut s = Session::new();
    let mut events = Vec::new();
    s.feed(&Server::settings(&[]), &req, &mut events).unwrap();
    let mut ping = Vec::new();
    put_header(&mut ping, 8, frame::PING, 0, 0);
    ping.extend_from_slice(b"12345678");
    // Written out between reads, PINGs are answered however many come.
    for _ in 0..20 {
        s.feed(&ping.repeat(1000), &req, &mut events).unwrap();
        drain(&mut s);
    }
    // Never written (the server does not read), their acknowledgements stop piling up.
    let fed = (0..100).map(|_| s.feed(&ping.repeat(1000), &req, &mut events));
    let err = fed
        .into_iter()
        .find(Result::is_err)
        .expect("refused")
        .unwrap_err();
    assert!(err.contains("acknowledgements"), "{err}");
    assert!(s.pending().len() < 200_000, "{}", s.pending().len());
    let mut s = Session::new();
    let settings = Server::settings(&[]).repeat(20_000);
    assert!(s.feed(&settings, &req, &mut events).is_err());
}

#[test]
fn a_body_that_is_not_its_content_length_fails_the_connection() {
    fn head(
        enc: &mut loona_hpack::Encoder<'static>,
        stream: u32,
        status: &str,
        len: &str,
    ) -> Vec<u8> {
        let block = enc.encode([
            (&b":status"[..], status.as_bytes()),
            (&b"content-length"[..], len.as_bytes()),
        ]);
        let mut out = Vec::new();
        put_header(
            &mut out,
            block.len(),
            frame::HEADERS,
            frame::END_HEADERS,
            stream,
        );
        out.extend_from_slice(&block);
        out
    }
    // What feeding `frames` after the server's SETTINGS gives, for a request `req`.
    let run = |req: &H2Request, frames: &dyn Fn(&mut loona_hpack::Encoder<'static>) -> Vec<u8>| {
        let mut s = Session::new();
        s.open_stream(req);
        let mut enc = loona_hpack::Encoder::new();
        let mut wire = Server::settings(&[]);
        wire.extend(frames(&mut enc));
        let mut events = Vec::new();
        s.feed(&wire, req, &mut events).map(|()| events.len())
    };
    let req = get();
    // As announced, across frames (the table indexes the field, so the second is indexed).
    let ok = run(&req, &|e| {
        let mut w = head(e, 1, "200", "5");
        w.extend(Server::data(1, b"he", false));
        w.extend(Server::data(1, b"llo", true));
        w
    });
    assert_eq!(ok, Ok(1));
    let short = run(&req, &|e| {
        let mut w = head(e, 1, "200", "10");
        w.extend(Server::data(1, b"ok", true));
        w
    })
    .unwrap_err();
    assert!(short.contains("body was 2 bytes, not the 10"), "{short}");
    let long = run(&req, &|e| {
        let mut w = head(e, 1, "200", "1");
        w.extend(Server::data(1, b"okokok", true));
        w
    })
    .unwrap_err();
    assert!(long.contains("body was 6 bytes, not the 1"), "{long}");
    let garbled = run(&req, &|e| {
        let mut w = head(e, 1, "200", "ten");
        w.extend(Server::data(1, b"ok", true));
        w
    })
    .unwrap_err();
    assert!(garbled.contains("not one number"), "{garbled}");
    // Heads that describe a body without sending it.
    let not_modified = run(&req, &|e| {
        let mut w = head(e, 1, "304", "100");
        w.extend(Server::data(1, b"", true));
        w
    });
    assert_eq!(not_modified, Ok(1));
    let t = crate::url::parse("http://127.0.0.1:1/").unwrap();
    let head_req = H2Request::new(&t, "HEAD", &[], None).unwrap();
    let to_head = run(&head_req, &|e| {
        let mut w = head(e, 1, "200", "100");
        w.extend(Server::data(1, b"", true));
        w
    });
    assert_eq!(to_head, Ok(1));
}
