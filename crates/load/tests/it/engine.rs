//! The engine against the real testbed on loopback: counts, framing, faults, errors.

use crate::common;

use common::*;
use hello_server::Config;
use rigor_load::{probe_request, run, Live, LoadError, LoadSpec};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use testkit::skip;

#[test]
fn closed_model_counts_match_server() {
    let srv = server(Config::default());
    let s = LoadSpec {
        warmup: Duration::from_millis(300),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert_clean(&r);
    assert!(
        r.outside_window.requests > 0,
        "warmup requests must be recorded"
    );
    assert_eq!(r.status_counts.get(&200), Some(&r.requests));
    assert!((r.measured_secs - 1.0).abs() < 1e-6);
    assert!(r.latency.p50_ms > 0.0 && r.latency.max_ms >= r.latency.p99_ms);
    let per_sec: u64 = r.timeline.iter().map(|t| t.requests).sum();
    assert_eq!(per_sec, r.requests);
    assert!(r.bytes_read >= r.requests * 13);
    assert!(r.client_cpu_secs > 0.0 && r.client_cores >= 1);
    assert_counts_match(&srv, &r);
}

#[test]
fn pipelined_counts_match_server() {
    let srv = server(Config::default());
    let s = LoadSpec {
        pipeline: 8,
        warmup: Duration::from_millis(200),
        ..spec(&srv, "/json")
    };
    let r = go(&s);
    assert_clean(&r);
    assert!(r.in_flight_at_end <= 8 * 8);
    assert_counts_match(&srv, &r);
}

#[test]
fn chunked_bodies_are_read_and_every_request_counted() {
    let srv = server(Config {
        chunked: true,
        ..Default::default()
    });
    let r = go(&spec(&srv, "/plaintext"));
    assert_clean(&r);
    assert_counts_match(&srv, &r);
    let p = probe_request(
        &format!("http://{}/plaintext", srv.addr()),
        "GET",
        &[],
        None,
        Duration::from_secs(2),
    )
    .unwrap();
    assert_eq!(p.status, 200);
    assert_eq!(p.body, b"Hello, World!");
}

#[test]
fn server_errors_are_bad_responses() {
    let srv = server(Config {
        error_rate: 0.25,
        ..Default::default()
    });
    let r = go(&spec(&srv, "/plaintext"));
    assert_eq!(r.errors.total(), 0);
    let five = *r.status_counts.get(&500).unwrap_or(&0);
    assert_eq!(r.bad_responses, five);
    let frac = five as f64 / r.requests as f64;
    assert!((frac - 0.25).abs() < 0.03, "500 fraction {frac}");
    assert_eq!(r.measurements()["load.bad_responses"], five as f64);
}

#[test]
fn garbage_is_counted_as_parse_errors() {
    let srv = server(Config {
        garbage: true,
        ..Default::default()
    });
    let s = LoadSpec {
        duration: Duration::from_millis(500),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert_eq!(r.requests, 0);
    assert!(r.errors.parse > 10, "{:?}", r.errors);
    assert!(r.warnings.iter().any(|w| w.kind == "load_errors"
        && w.message.contains(&format!("parse {}", r.errors.parse))
        && w.message.contains("; parse failures: invalid status line")));
}

#[test]
fn timeouts_are_counted_and_connections_replaced() {
    let srv = server(Config {
        delay: Duration::from_millis(1000),
        ..Default::default()
    });
    let s = LoadSpec {
        connections: 4,
        threads: 1,
        timeout: Duration::from_millis(200),
        duration: Duration::from_millis(1000),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert_eq!(r.requests, 0);
    assert!(r.errors.timeout >= 4 * 3, "{:?}", r.errors);
    assert!(srv.stats().connections >= 4 * 3, "connections are replaced");
    assert_eq!(
        r.measurements()["load.errors.timeout"],
        r.errors.timeout as f64
    );
    // No answer ever came: the timeouts are the latency, each at the time it was given up.
    assert_eq!(r.latency.count, r.errors.timeout);
    assert!(r.measurements()["load.latency.p50"] >= 200.0);
}

#[test]
fn refused_port_is_a_clear_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let s = LoadSpec {
        url: format!("http://127.0.0.1:{port}/"),
        duration: Duration::from_secs(1),
        ..Default::default()
    };
    let e = run(&s, &Live::default(), &AtomicBool::new(false)).unwrap_err();
    assert!(matches!(e, LoadError::Connect { .. }));
    assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
    let e = probe_request(&s.url, "GET", &[], None, Duration::from_secs(1)).unwrap_err();
    assert!(e.to_string().contains(&port.to_string()), "{e}");
}

#[test]
fn a_server_closing_connections_mid_run_causes_reconnects_not_errors() {
    // Half the stop: the server says `Connection: close` every 5 responses: no error, reconnects.
    let srv = server(Config {
        close_after: Some(5),
        ..Default::default()
    });
    let r = go(&spec(&srv, "/plaintext"));
    assert_clean(&r);
    assert!(srv.stats().connections > 8 * 5);
}

#[test]
fn big_headers_head_204_304_and_100_continue_are_read_without_errors() {
    let srv = server(Config::default());
    let short = |path: &str, method: &str| LoadSpec {
        duration: Duration::from_millis(300),
        method: method.into(),
        ..spec(&srv, path)
    };
    let r = go(&short("/bigheader", "GET"));
    assert!(
        r.requests > 0 && r.errors.total() == 0,
        "{} {:?}",
        r.requests,
        r.errors
    );
    assert!(r.bytes_read > r.requests * 100 * 1024);
    for (path, method, code) in [
        ("/plaintext", "HEAD", 200u16),
        ("/status/204", "GET", 204),
        ("/status/304", "GET", 304),
        ("/continue", "GET", 200),
    ] {
        let r = go(&short(path, method));
        assert!(r.requests > 0, "{path}: {}", r.requests);
        assert_eq!(r.errors.total(), 0, "{path}: {:?}", r.errors);
        assert_eq!(
            r.status_counts.keys().copied().collect::<Vec<_>>(),
            vec![code],
            "{path}"
        );
    }
    let p = probe_request(
        &format!("http://{}/continue", srv.addr()),
        "GET",
        &[],
        None,
        Duration::from_secs(2),
    )
    .unwrap();
    assert_eq!((p.status, p.body.as_slice()), (200, &b"Continued"[..]));
}

#[test]
fn an_ipv6_literal_url_is_loaded_and_probed() {
    let Ok(srv) = hello_server::start(Config {
        host: "::1".parse().unwrap(),
        port: 0,
        threads: 1,
        ..Default::default()
    }) else {
        skip("needs an IPv6 loopback");
        return;
    };
    let url = format!("http://[::1]:{}/json", srv.addr().port());
    let r = go(&LoadSpec {
        url: url.clone(),
        connections: 2,
        duration: Duration::from_millis(300),
        ..Default::default()
    });
    assert_clean(&r);
    let p = probe_request(
        &url,
        "GET",
        &[("Accept".into(), "application/json".into())],
        None,
        Duration::from_secs(2),
    )
    .unwrap();
    assert_eq!(p.status, 200);
    assert!(p.body.starts_with(b"{"));
}

#[test]
fn cancel_stops_early_with_what_was_measured() {
    let srv = server(Config::default());
    let s = LoadSpec {
        duration: Duration::from_secs(20),
        ..spec(&srv, "/plaintext")
    };
    let live = Live::default();
    let (r, took) = cancelled_after(&s, &live, Duration::from_millis(400));
    let r = r.unwrap();
    assert!(
        took < Duration::from_secs(10),
        "took {took:?} of a 20 s window"
    );
    assert!(r.cancelled);
    assert!(
        r.measured_secs > 0.0 && r.measured_secs < took.as_secs_f64(),
        "{} measured in {took:?}",
        r.measured_secs
    );
    assert!(r.requests > 0);
    assert_eq!(live.completed.load(Ordering::Relaxed), r.requests);
    assert_eq!(live.phase(), rigor_load::Phase::Done);
}

#[test]
fn measurement_ids_follow_the_catalogue() {
    let srv = server(Config::default());
    let r = go(&LoadSpec {
        duration: Duration::from_millis(300),
        ..spec(&srv, "/plaintext")
    });
    let ids: Vec<&str> = r.measurements().keys().copied().collect();
    let mut want = vec![
        "load.rps",
        "load.requests",
        "load.latency.mean",
        "load.latency.p50",
        "load.latency.p75",
        "load.latency.p90",
        "load.latency.p99",
        "load.latency.p999",
        "load.latency.max",
        "load.bad_responses",
        "load.socket_errors",
        "load.errors.connect",
        "load.errors.read",
        "load.errors.write",
        "load.errors.timeout",
        "load.errors.parse",
        "load.errors.closed",
        "load.errors.tls",
        "load.errors.reset",
        "load.errors.goaway",
        "load.throughput",
        "load.cpu",
    ];
    want.sort();
    assert_eq!(ids, want);
}

#[test]
fn workers_pin_to_the_cpu_list_and_a_cpu_that_does_not_exist_is_an_error() {
    let srv = server(Config::default());
    let r = go(&LoadSpec {
        cpus: Some(vec![0]),
        duration: Duration::from_millis(300),
        ..spec(&srv, "/plaintext")
    });
    assert_clean(&r);
    assert_eq!(r.client_cores, 1);
    let e = run(
        &LoadSpec {
            cpus: Some(vec![100_000]),
            ..spec(&srv, "/plaintext")
        },
        &Live::default(),
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(e.to_string().contains("100000"), "{e}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let cancel = AtomicBool::new(false);
    for (url, needle) in [
        ("https://bad_name.example/", "bad_name.example"),
        ("ftp://127.0.0.1/", "ftp"),
        ("127.0.0.1:80/x", "127.0.0.1:80/x"),
        ("http://127.0.0.1:99999/", "99999"),
        ("http://no-such-host.invalid/", "no-such-host.invalid"),
    ] {
        let e = run(
            &LoadSpec {
                url: url.into(),
                ..Default::default()
            },
            &Live::default(),
            &cancel,
        )
        .unwrap_err();
        assert!(e.to_string().contains(needle), "{url}: {e}");
    }
    let e = run(
        &LoadSpec {
            url: "http://127.0.0.1:1/".into(),
            connections: 0,
            ..Default::default()
        },
        &Live::default(),
        &cancel,
    )
    .unwrap_err();
    assert!(e.to_string().contains("connections"), "{e}");
}

/// The server answers one request per connection and closes it: of each pipeline of 8, 7 are
/// lost with the connection. Each is a `closed` error, not silence.
#[test]
fn pipelined_requests_lost_to_a_closing_server_are_closed_errors() {
    let srv = server(Config {
        close_after: Some(1),
        ..Default::default()
    });
    let r = go(&LoadSpec {
        connections: 4,
        threads: 1,
        pipeline: 8,
        duration: Duration::from_millis(400),
        ..spec(&srv, "/plaintext")
    });
    std::thread::sleep(Duration::from_millis(150));
    let st = srv.stats();
    // Every request answered was measured (no warmup, nothing left in flight).
    assert_eq!(st.requests, r.requests, "{:?}", r.errors);
    assert!(r.requests > 0, "none answered");
    // Each connection answered one of its 8: the other 7 were lost with it.
    assert!(
        r.errors.closed >= 6 * r.requests && r.errors.closed <= 7 * r.requests,
        "{} answered, {:?}",
        r.requests,
        r.errors
    );
    assert_eq!(r.errors.closed, r.abandoned);
    assert_eq!(r.errors.read, 0, "{:?}", r.errors);
    let m = r.measurements();
    assert_eq!(m["load.errors.closed"], r.errors.closed as f64);
    assert_eq!(m["load.socket_errors"], r.errors.total() as f64);
    assert!(r.errors.total() >= r.errors.closed);
    assert!(
        r.warnings.iter().any(|w| w.kind == "load_errors"
            && w.message.contains(&format!("closed {}", r.errors.closed))),
        "{:?}",
        r.warnings
    );
    let timeline_errors: u64 = r.timeline.iter().map(|t| t.errors).sum();
    assert_eq!(timeline_errors, r.errors.total());
}

/// Open model: every request due in the window is answered, a timeout or lost with its
/// connection; none vanishes.
#[test]
fn open_model_requests_lost_to_a_closing_server_are_all_accounted_for() {
    let srv = server(Config {
        close_after: Some(1),
        delay: Duration::from_micros(2000),
        ..Default::default()
    });
    let r = go(&LoadSpec {
        rate: Some(2000.0),
        connections: 4,
        threads: 1,
        pipeline: 8,
        duration: Duration::from_millis(500),
        ..spec(&srv, "/plaintext")
    });
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(srv.stats().requests, r.requests);
    assert_eq!(
        r.requests + r.errors.timeout + r.errors.closed,
        1000,
        "{} answered, {:?}",
        r.requests,
        r.errors
    );
    assert!(
        r.errors.closed > r.requests,
        "{} answered, {:?}",
        r.requests,
        r.errors
    );
    assert!(
        r.warnings.iter().any(|w| w.kind == "load_errors"
            && w.message.contains(&format!("closed {}", r.errors.closed))),
        "{:?}",
        r.warnings
    );
}
