//! What the engine accepts and rejects on the wire: folded headers, methods sent as typed, parse
//! failures counted with their reasons, and a probe that never holds a whole body.

use crate::common;

use common::*;
use hello_server::Config;
use rigor_load::{probe_request, probe_request_finding, LoadSpec, PROBE_BODY_KEPT};
use std::sync::atomic::Ordering;
use std::time::Duration;

#[test]
fn folded_header_lines_are_valid_responses() {
    // A server folding its headers (obs-fold), the framing header included: valid HTTP/1.1.
    const ANSWER: &[u8] =
        b"HTTP/1.1 200 OK\r\nServer: old\r\n  fashioned\r\nContent-Length:\r\n 13\r\n\r\nHello, World!";
    let (addr, served) = canned_server(ANSWER);
    let r = go(&LoadSpec {
        url: format!("http://{addr}/"),
        connections: 4,
        threads: 1,
        duration: Duration::from_millis(500),
        ..Default::default()
    });
    assert_eq!(r.errors.total(), 0, "{:?} {:?}", r.errors, r.parse_failures);
    assert!(r.requests > 0, "{} requests", r.requests);
    assert_eq!(r.status_counts.get(&200), Some(&r.requests));
    assert_eq!(r.bytes_read, r.requests * ANSWER.len() as u64);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(served.load(Ordering::Relaxed), r.requests);
}

#[test]
fn lower_case_method_is_sent_as_typed_and_its_answer_read_in_full() {
    // `head` is not HEAD (methods are case-sensitive): the testbed answers it with a body, and
    // the engine must read that body instead of taking it for the next response.
    let srv = server(Config::default());
    let r = go(&LoadSpec {
        method: "head".into(),
        duration: Duration::from_millis(500),
        ..spec(&srv, "/plaintext")
    });
    assert_clean(&r);
    assert!(
        r.bytes_read >= r.requests * (13 + 40),
        "{} bytes",
        r.bytes_read
    );
    assert_counts_match(&srv, &r);
    let p = probe_request(
        &format!("http://{}/plaintext", srv.addr()),
        "head",
        &[],
        None,
        Duration::from_secs(2),
    )
    .unwrap();
    assert_eq!(p.body, b"Hello, World!");
}

#[test]
fn parse_failures_are_socket_errors_with_reasons() {
    let srv = server(Config {
        garbage: true,
        ..Default::default()
    });
    let r = go(&LoadSpec {
        duration: Duration::from_millis(500),
        ..spec(&srv, "/plaintext")
    });
    assert!(r.errors.parse > 10, "{:?}", r.errors);
    let m = r.measurements();
    assert_eq!(m["load.errors.parse"], r.errors.parse as f64);
    assert_eq!(m["load.socket_errors"], r.errors.total() as f64);
    assert!(m["load.socket_errors"] >= r.errors.parse as f64);
    let counted: u64 = r.parse_failures.iter().map(|f| f.count).sum();
    assert_eq!(counted, r.errors.parse, "{:?}", r.parse_failures);
    let f = &r.parse_failures[0];
    assert_eq!(f.reason, "invalid status line");
    // The example is what the testbed's garbage knob sends, quoted with its bytes escaped.
    assert_eq!(
        f.example,
        r#""garbage!\r\n\r\n\x00\xff not http at all \xfe\r\n\r\n""#
    );
    assert!(r
        .warnings
        .iter()
        .any(|w| w.kind == "load_errors" && w.message.contains("invalid status line")));
}

#[test]
fn probe_keeps_a_bounded_prefix_and_searches_the_whole_body() {
    // 8 MiB of "Hello, World! " repeated: the probe reads it all but keeps only a prefix.
    let size = 8 << 20;
    let srv = server(Config {
        body_size: Some(size),
        ..Default::default()
    });
    let url = format!("http://{}/plaintext", srv.addr());
    let p = probe_request(&url, "GET", &[], None, Duration::from_secs(10)).unwrap();
    assert_eq!(p.status, 200);
    assert_eq!(p.body.len(), PROBE_BODY_KEPT);
    assert_eq!(p.body_len, size as u64);
    assert!(p.bytes_read > size as u64);
    assert_eq!(p.found, None);
    let t = Duration::from_secs(10);
    let hit =
        probe_request_finding(&url, "GET", &[], None, t, Some(b"World! Hello"), false).unwrap();
    assert_eq!(hit.found, Some(true));
    let miss = probe_request_finding(&url, "GET", &[], None, t, Some(b"Goodbye"), false).unwrap();
    assert_eq!(miss.found, Some(false));
}
