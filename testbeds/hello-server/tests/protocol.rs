//! HTTP/1.1 behaviour over real loopback sockets: keep-alive, pipelining, framing, endpoints.

mod common;

use std::time::Duration;

use common::{config, get, start, Client};
use hello_server::Config;

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    for _ in 0..100 {
        let r = c.get("/plaintext");
        assert_eq!(r.status, 200);
        assert_eq!(r.text(), "Hello, World!");
        assert_eq!(r.header("content-type"), Some("text/plain"));
    }
    let r = c.get("/json");
    assert_eq!(r.text(), r#"{"message":"Hello, World!"}"#);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let stats = server.stats();
    assert_eq!(stats.connections, 1);
    assert_eq!(stats.requests, 101);
}

#[test]
fn pipelined_batch_is_answered_in_order() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    let paths = ["/plaintext", "/json", "/status/201", "/nope", "/status/418"];
    let mut batch = String::new();
    for i in 0..500 {
        batch.push_str(&get(paths[i % paths.len()]));
    }
    c.send(batch.as_bytes());
    for i in 0..500 {
        let r = c.read(false);
        let want = [200, 200, 201, 404, 418][i % paths.len()];
        assert_eq!(r.status, want, "response {i}");
        if i % paths.len() == 1 {
            assert_eq!(r.text(), r#"{"message":"Hello, World!"}"#);
        }
    }
    let stats = server.stats();
    assert_eq!(stats.requests, 500);
    assert_eq!(stats.by_path["/plaintext"], 100);
    assert_eq!(stats.by_path["/status/201"], 100);
    assert_eq!(stats.by_path["other"], 100);
    assert_eq!(stats.status[&404], 100);
}

#[test]
fn requests_split_across_writes_are_reassembled() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    let req = get("/json");
    let (a, b) = req.as_bytes().split_at(7);
    c.send(a);
    std::thread::sleep(Duration::from_millis(30));
    c.send(b);
    assert_eq!(c.read(false).status, 200);
}

#[test]
fn head_answers_headers_only_and_bodyless_statuses_have_no_body() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    // Pipelined so a stray body would corrupt the next response.
    c.send(b"HEAD /json HTTP/1.1\r\n\r\nGET /status/204 HTTP/1.1\r\n\r\nGET /status/304 HTTP/1.1\r\n\r\nHEAD /status/500 HTTP/1.1\r\n\r\nGET /plaintext HTTP/1.1\r\n\r\n");
    let head = c.read(true);
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), Some("27"));
    let r = c.read(false);
    assert_eq!(r.status, 204);
    assert_eq!(r.header("content-length"), None);
    assert_eq!(c.read(false).status, 304);
    let r = c.read(true);
    assert_eq!(r.status, 500);
    assert!(r.header("content-length").is_some());
    assert_eq!(c.read(false).text(), "Hello, World!");
}

#[test]
fn continue_sends_interim_100_then_200() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    c.send(get("/continue").as_bytes());
    assert_eq!(c.read(false).status, 100);
    let r = c.read(false);
    assert_eq!((r.status, r.text().as_str()), (200, "Continued"));
    assert_eq!(server.stats().status[&200], 1);
}

#[test]
fn post_bodies_are_read_and_skipped() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    let body = vec![b'x'; 100_000];
    let head = format!(
        "POST /json HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    c.send(head.as_bytes());
    c.send(&body[..50_000]);
    std::thread::sleep(Duration::from_millis(20));
    c.send(&body[50_000..]);
    c.send(get("/plaintext").as_bytes());
    assert_eq!(c.read(false).status, 200);
    assert_eq!(c.read(false).text(), "Hello, World!");
    let stats = server.stats();
    assert_eq!(stats.requests, 2);
    let sent = head.len() + body.len() + get("/plaintext").len();
    assert_eq!(stats.bytes_received, sent as u64);
}

#[test]
fn chunked_mode_sends_several_chunks() {
    let server = start(Config {
        chunked: true,
        ..config()
    });
    let mut c = Client::connect(server.addr());
    for path in ["/plaintext", "/json"] {
        let r = c.get(path);
        assert_eq!(r.header("transfer-encoding"), Some("chunked"));
        assert_eq!(r.header("content-length"), None);
        assert!(r.chunks > 1, "{} chunks", r.chunks);
    }
    c.send(get("/plaintext").as_bytes());
    c.send(get("/json").as_bytes());
    assert_eq!(c.read(false).text(), "Hello, World!");
    assert_eq!(c.read(false).text(), r#"{"message":"Hello, World!"}"#);
}

#[test]
fn body_size_sets_plaintext_length() {
    let server = start(Config {
        body_size: Some(100_000),
        ..config()
    });
    let mut c = Client::connect(server.addr());
    let r = c.get("/plaintext");
    assert_eq!(r.body.len(), 100_000);
    assert!(r.body.starts_with(b"Hello, World!"));
}

#[test]
fn bad_request_gets_400_and_close() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    c.send(b"\x01\x02 this is not http\r\n\r\n");
    let r = c.read(false);
    assert_eq!(r.status, 400);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());
}

#[test]
fn client_close_and_http10_close_after_answer() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    c.send(b"GET /plaintext HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(c.read(false).header("connection"), Some("close"));
    assert!(c.closed());
    let mut c = Client::connect(server.addr());
    c.send(b"GET /plaintext HTTP/1.0\r\n\r\n");
    let all = c.read_to_end();
    assert!(all.ends_with(b"Hello, World!"));
}

#[test]
fn big_header_is_100_kib() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    let r = c.get("/bigheader");
    assert_eq!(r.status, 200);
    let big = r.header("x-big").expect("x-big header");
    assert!(big.len() >= 100 * 1024 - 16, "{}", big.len());
    assert_eq!(c.get("/plaintext").status, 200);
}

#[test]
fn stats_endpoint_reports_exact_counts() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    for _ in 0..3 {
        c.get("/plaintext");
    }
    c.get("/json");
    c.get("/health");
    let r = c.get("/stats");
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["requests"], 4);
    assert_eq!(v["by_path"]["/plaintext"], 3);
    assert_eq!(v["by_path"]["/health"], 1);
    assert_eq!(v["status"]["200"], 5);
    assert_eq!(v["connections"], 1);
    let stats = server.stats();
    assert_eq!(stats.requests, 4);
    assert_eq!(stats.by_path["/stats"], 1);
    assert_eq!(
        serde_json::to_value(&stats).unwrap()["bytes_received"],
        stats.bytes_received
    );
}

#[test]
fn health_waits_for_ready_after_and_never_ready_stays_503() {
    let server = start(Config {
        ready_after: Duration::from_millis(300),
        ..config()
    });
    let mut c = Client::connect(server.addr());
    assert_eq!(c.get("/health").status, 503);
    std::thread::sleep(Duration::from_millis(350));
    let r = c.get("/health");
    assert_eq!((r.status, r.text().as_str()), (200, "OK"));

    let server = start(Config {
        never_ready: true,
        ..config()
    });
    let mut c = Client::connect(server.addr());
    assert_eq!(c.get("/health").status, 503);
    assert_eq!(server.stats().requests, 0);
}

#[test]
fn garbage_breaks_only_the_hello_endpoints() {
    let server = start(Config {
        garbage: true,
        ..config()
    });
    let mut c = Client::connect(server.addr());
    assert_eq!(c.get("/health").status, 200);
    assert_eq!(c.get("/stats").status, 200);
    for path in ["/plaintext", "/json"] {
        let mut c = Client::connect(server.addr());
        c.send(get(path).as_bytes());
        // The knob's own bytes, not an HTTP status line.
        let got = c.read_raw(8);
        assert_eq!(got, b"garbage!", "{got:?}");
    }
}

#[test]
fn ipv6_loopback_works() {
    let Ok(server) = hello_server::start(Config {
        host: "::1".parse().unwrap(),
        ..config()
    }) else {
        testkit::skip("needs an IPv6 loopback");
        return;
    };
    assert!(server.addr().is_ipv6());
    let mut c = Client::connect(server.addr());
    assert_eq!(c.get("/plaintext").status, 200);
}

#[test]
fn shutdown_closes_connections() {
    let server = start(config());
    let addr = server.addr();
    let mut c = Client::connect(addr);
    assert_eq!(c.get("/plaintext").status, 200);
    server.shutdown();
    assert!(c.closed());
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[test]
fn half_closed_client_gets_answers_then_close() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    c.send(format!("{}{}", get("/plaintext"), get("/json")).as_bytes());
    c.shutdown_write();
    assert_eq!(c.read(false).status, 200);
    assert_eq!(c.read(false).status, 200);
    assert!(c.closed());
}

#[test]
fn many_pipelined_connections_across_threads() {
    let server = start(Config {
        threads: 4,
        ..config()
    });
    let addr = server.addr();
    let batch = get("/plaintext").repeat(200);
    let handles: Vec<_> = (0..40)
        .map(|_| {
            let batch = batch.clone();
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                for _ in 0..5 {
                    c.send(batch.as_bytes());
                    for _ in 0..200 {
                        assert_eq!(c.read(false).body, b"Hello, World!");
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let stats = server.stats();
    assert_eq!(stats.connections, 40);
    assert_eq!(stats.requests, 40 * 5 * 200);
    assert_eq!(stats.bytes_received, (40 * 5 * batch.len()) as u64);
}

#[test]
fn expect_continue_gets_interim_100_before_the_body() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    c.send(b"POST /json HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    assert_eq!(c.read(false).status, 100);
    assert_eq!(c.read(false).status, 200);
    c.send(b"hello");
    assert_eq!(c.get("/plaintext").text(), "Hello, World!");
    assert_eq!(server.stats().requests, 2);
}

#[test]
fn http10_keep_alive_is_acknowledged() {
    let server = start(config());
    let mut c = Client::connect(server.addr());
    for _ in 0..3 {
        c.send(b"GET /plaintext HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let r = c.read(false);
        assert_eq!(r.header("connection"), Some("keep-alive"));
        assert_eq!(r.text(), "Hello, World!");
    }
    assert_eq!(server.stats().connections, 1);
}

#[test]
fn metrics_page_counts_what_was_answered() {
    let server = start(config());
    let mut a = Client::connect(server.addr());
    // Answered before the page is asked for, so its worker has surely counted it open.
    let mut b = Client::connect(server.addr());
    let mut sent = 0usize;
    for i in 0..37 {
        let r = if i == 0 {
            b.get("/plaintext")
        } else {
            a.get("/plaintext")
        };
        let head: usize = r.headers.iter().map(|(k, v)| k.len() + v.len() + 4).sum();
        sent += "HTTP/1.1 200 OK\r\n".len() + head + 2 + r.body.len();
    }
    let mut c = Client::connect(server.addr());
    let page = c.get("/metrics");
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/plain; version=0.0.4"));
    let text = page.text();
    let value = |line: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(line)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no `{line}` in\n{text}"))
    };
    assert_eq!(value("hello_requests_total{path=\"/plaintext\"}"), 37);
    assert_eq!(value("hello_responses_total{code=\"200\"}"), 37);
    assert_eq!(value("hello_bytes_sent_total"), sent as u64);
    assert_eq!(value("hello_connections_total"), 3);
    assert_eq!(value("hello_open_connections"), 3);
    assert_eq!(value("hello_held_bytes"), 0);
    // The page itself is counted once answered, and is not a request of the load.
    c.get("/metrics");
    let stats = server.stats();
    assert_eq!(stats.by_path["/metrics"], 2);
    assert_eq!(stats.requests, 37);
}
