//! The fault and latency knobs, checked from the client's side of a real socket.

mod common;

use std::time::{Duration, Instant};

use common::{config, get, start, Client};
use hello_server::Config;

#[test]
fn error_rate_fails_an_exact_share_server_wide() {
    let rate = 0.25;
    let server = start(Config {
        error_rate: rate,
        ..config()
    });
    let mut clients: Vec<Client> = (0..4).map(|_| Client::connect(server.addr())).collect();
    let mut errors = 0;
    for i in 0..203 {
        let path = if i % 2 == 0 { "/plaintext" } else { "/json" };
        let r = clients[i % 4].get(path);
        assert!(r.status == 200 || r.status == 500, "{}", r.status);
        errors += usize::from(r.status == 500);
        // Probes and other paths never fail and do not advance the sequence.
        assert_eq!(clients[i % 4].get("/health").status, 200);
    }
    assert_eq!(errors, (203.0 * rate) as usize);
    let stats = server.stats();
    assert_eq!(stats.status[&500], 50);
    assert_eq!(stats.requests, 203);
}

#[test]
fn close_after_closes_after_the_nth_response() {
    let server = start(Config {
        close_after: Some(3),
        ..config()
    });
    let mut c = Client::connect(server.addr());
    assert_eq!(c.get("/plaintext").header("connection"), None);
    assert_eq!(c.get("/plaintext").header("connection"), None);
    let third = c.get("/json");
    assert_eq!(third.status, 200);
    assert_eq!(third.header("connection"), Some("close"));
    assert!(c.closed());

    // Pipelined beyond the limit: exactly three answers, then the close.
    let mut c = Client::connect(server.addr());
    c.send(get("/plaintext").repeat(5).as_bytes());
    for _ in 0..3 {
        assert_eq!(c.read(false).status, 200);
    }
    assert!(c.closed());
    assert_eq!(server.stats().connections, 2);
    assert_eq!(server.stats().requests, 6);
}

#[test]
fn delay_applies_per_request_without_serialising_connections() {
    let delay = Duration::from_millis(100);
    let server = start(Config {
        delay,
        threads: 1,
        ..config()
    });
    let mut clients: Vec<Client> = (0..20).map(|_| Client::connect(server.addr())).collect();
    let t0 = Instant::now();
    for c in &mut clients {
        c.send(get("/plaintext").as_bytes());
    }
    for c in &mut clients {
        assert_eq!(c.read(false).status, 200);
    }
    let took = t0.elapsed();
    // 20 connections on one thread: one delay in total, not twenty.
    assert!(took >= delay, "{took:?}");
    assert!(took < delay * 4, "connections were serialised: {took:?}");

    // Pipelined on one connection: answered in order, each after its own delay.
    let mut c = Client::connect(server.addr());
    let t0 = Instant::now();
    c.send(
        format!(
            "{}{}{}",
            get("/plaintext"),
            get("/status/201"),
            get("/json")
        )
        .as_bytes(),
    );
    assert_eq!(c.read(false).status, 200);
    assert_eq!(c.read(false).status, 201);
    assert_eq!(c.read(false).text(), r#"{"message":"Hello, World!"}"#);
    let took = t0.elapsed();
    assert!(took >= delay && took < delay * 4, "{took:?}");

    // Sequential requests each wait.
    let t0 = Instant::now();
    for _ in 0..3 {
        c.get("/plaintext");
    }
    assert!(t0.elapsed() >= delay * 3);
}

#[test]
fn microsecond_delay_is_not_rounded_to_milliseconds() {
    let server = start(Config {
        delay: Duration::from_micros(200),
        threads: 1,
        ..config()
    });
    let mut c = Client::connect(server.addr());
    let mut fastest = Duration::MAX;
    for _ in 0..50 {
        let t0 = Instant::now();
        c.get("/plaintext");
        let took = t0.elapsed();
        assert!(took >= Duration::from_micros(200), "{took:?}");
        fastest = fastest.min(took);
    }
    // Millisecond timers (epoll's timeout) would make every answer take at least 1 ms.
    assert!(
        fastest < Duration::from_micros(900),
        "timer too coarse: {fastest:?}"
    );
}

#[test]
fn stall_freezes_the_whole_server() {
    // Stalls are [k*600ms - 250ms, k*600ms) after start.
    let server = start(Config {
        stall: Some((Duration::from_millis(250), Duration::from_millis(600))),
        ..config()
    });
    let started = Instant::now();
    let mut a = Client::connect(server.addr());
    let mut b = Client::connect(server.addr());
    let mut slowest = Duration::ZERO;
    let mut slow = 0;
    while started.elapsed() < Duration::from_millis(1300) {
        for c in [&mut a, &mut b] {
            let t = Instant::now();
            assert_eq!(c.get("/plaintext").status, 200);
            let took = t.elapsed();
            slowest = slowest.max(took);
            slow += usize::from(took > Duration::from_millis(50));
        }
    }
    assert!(
        slowest >= Duration::from_millis(150),
        "no stall seen: {slowest:?}"
    );
    // Two windows, and both connections wait in each: a handful of slow answers, not many.
    assert!((2..=8).contains(&slow), "{slow} slow answers");
}

#[test]
fn hold_makes_memory_resident_after_the_trigger_path() {
    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let server = start(Config {
        hold_mib: 64,
        hold_after: Some("/json".into()),
        ..config()
    });
    let mut c = Client::connect(server.addr());
    c.get("/plaintext");
    let before = rss_kib();
    c.get("/json");
    let grown = rss_kib().saturating_sub(before);
    assert!(grown >= 60 * 1024, "RSS grew {grown} KiB");
}

#[test]
fn close_after_with_delay_still_delivers_queued_answers() {
    let server = start(Config {
        close_after: Some(2),
        delay: Duration::from_millis(50),
        ..config()
    });
    let mut c = Client::connect(server.addr());
    c.send(get("/json").repeat(4).as_bytes());
    assert_eq!(c.read(false).header("connection"), None);
    assert_eq!(c.read(false).header("connection"), Some("close"));
    assert!(c.closed());
    assert_eq!(server.stats().requests, 2);
}
