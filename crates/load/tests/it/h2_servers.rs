//! HTTP/2 against small servers written here on raw sockets, for behaviour nginx does not show:
//! a server whose SETTINGS go out the moment it accepts, before the client's preface arrives
//! (as many servers do), and which writes nothing more until a request comes; one that says
//! goodbye (GOAWAY) with its SETTINGS and keeps the connection open.

use rigor_load::{run, Live, LoadSpec};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn frame(out: &mut Vec<u8>, payload: &[u8], kind: u8, flags: u8, stream: u32) {
    let len = payload.len();
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// Sends its SETTINGS at once, then answers every request (HEADERS) with a bodiless 200,
/// counting the answers; nothing else (not even the acknowledgement of the client's SETTINGS),
/// so a client that missed the SETTINGS waits for them in vain.
fn eager_server(answered: Arc<AtomicU64>) -> String {
    server(answered, Mode::Eager)
}

/// Sends SETTINGS and at once GOAWAY (last stream 0: it will process none), then reads on
/// without closing; counts its connections (after the first, the engine's preflight check).
fn goodbye_server(connections: Arc<AtomicU64>) -> String {
    server(connections, Mode::Goodbye)
}

/// Like [`eager_server`], but its first SETTINGS allow no stream; the second, sent once the
/// client's preface has come and a moment passed, allow 100.
fn late_limit_server(answered: Arc<AtomicU64>) -> String {
    server(answered, Mode::LateLimit)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Eager,
    Goodbye,
    LateLimit,
}

fn server(count: Arc<AtomicU64>, mode: Mode) -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("address");
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let count = count.clone();
            std::thread::spawn(move || answer(s, &count, mode));
        }
    });
    format!("http://{addr}/")
}

fn answer(mut s: TcpStream, answered: &AtomicU64, mode: Mode) {
    let mut hello = Vec::new();
    let limit = if mode == Mode::LateLimit { 0 } else { 100 };
    frame(&mut hello, &[0, 3, 0, 0, 0, limit], 0x4, 0, 0);
    if mode == Mode::Goodbye {
        answered.fetch_add(1, Ordering::Relaxed);
        frame(&mut hello, &[0; 8], 0x7, 0, 0);
    }
    if s.write_all(&hello).is_err() {
        return;
    }
    let mut buf = vec![0u8; 65536];
    let mut inb = Vec::new();
    let mut preface = false;
    while let Ok(n @ 1..) = s.read(&mut buf) {
        inb.extend_from_slice(&buf[..n]);
        if !preface {
            if inb.len() < 24 {
                continue;
            }
            inb.drain(..24);
            preface = true;
            if mode == Mode::LateLimit {
                std::thread::sleep(Duration::from_millis(50));
                let mut more = Vec::new();
                frame(&mut more, &[0, 3, 0, 0, 0, 100], 0x4, 0, 0);
                if s.write_all(&more).is_err() {
                    return;
                }
            }
        }
        let mut out = Vec::new();
        while inb.len() >= 9 {
            let len =
                (usize::from(inb[0]) << 16) | (usize::from(inb[1]) << 8) | usize::from(inb[2]);
            if inb.len() < 9 + len {
                break;
            }
            let kind = inb[3];
            let id = u32::from_be_bytes([inb[5], inb[6], inb[7], inb[8]]) & 0x7fff_ffff;
            inb.drain(..9 + len);
            if kind == 0x1 {
                // HEADERS: `:status: 200` (static index 8), the stream ended.
                frame(&mut out, &[0x88], 0x1, 0x4 | 0x1, id);
                answered.fetch_add(1, Ordering::Relaxed);
            }
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

#[test]
fn settings_sent_before_the_preface_arrives_are_read() {
    // Connections opened before the clock: the SETTINGS of the first arrive while the last are
    // still connecting.
    for _ in 0..2 {
        let answered = Arc::new(AtomicU64::new(0));
        let url = eager_server(answered.clone());
        let r = run(
            &LoadSpec {
                url,
                connections: 64,
                threads: 1,
                duration: Duration::from_millis(500),
                timeout: Duration::from_millis(300),
                http2: true,
                streams: 4,
                ..Default::default()
            },
            &Live::default(),
            &AtomicBool::new(false),
        )
        .expect("run");
        assert_eq!(r.errors.total(), 0, "{:?} {:?}", r.errors, r.http2);
        assert!(r.requests > 0, "only {} requests", r.requests);
        assert_eq!(r.requests, answered.load(Ordering::Relaxed));
    }
}

#[test]
fn a_goodbye_with_the_settings_replaces_the_connection() {
    let connections = Arc::new(AtomicU64::new(0));
    let url = goodbye_server(connections.clone());
    let r = run(
        &LoadSpec {
            url,
            connections: 2,
            threads: 1,
            duration: Duration::from_millis(300),
            timeout: Duration::from_millis(200),
            http2: true,
            streams: 4,
            ..Default::default()
        },
        &Live::default(),
        &AtomicBool::new(false),
    )
    .expect("run");
    assert_eq!(r.requests, 0);
    let goaways = r.http2.as_ref().map_or(0, |h| h.goaways);
    // Every connection the load opened heard the goodbye and was replaced at once.
    assert!(goaways > 10, "{goaways} GOAWAY, {:?}", r.errors);
    assert!(
        connections.load(Ordering::Relaxed) > goaways,
        "{connections:?} connections"
    );
}

#[test]
fn streams_a_later_settings_allows_are_used_in_both_models() {
    for rate in [None, Some(2000.0)] {
        let answered = Arc::new(AtomicU64::new(0));
        let url = late_limit_server(answered.clone());
        let r = run(
            &LoadSpec {
                url,
                connections: 4,
                threads: 1,
                duration: Duration::from_millis(500),
                timeout: Duration::from_millis(300),
                http2: true,
                streams: 4,
                rate,
                ..Default::default()
            },
            &Live::default(),
            &AtomicBool::new(false),
        )
        .expect("run");
        assert_eq!(
            r.errors.total(),
            0,
            "{rate:?}: {:?} {:?}",
            r.errors,
            r.http2
        );
        assert!(r.requests > 0, "{rate:?}: only {} requests", r.requests);
        assert_eq!(r.requests, answered.load(Ordering::Relaxed), "{rate:?}");
    }
}
