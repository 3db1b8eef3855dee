//! The io_uring and epoll paths against the same testbed: each path's counts match what the
//! server saw, for the closed model, pipelining and the open model, and both account for
//! timeouts, closes and parse errors alike. Where the kernel lacks io_uring the io_uring
//! half is skipped and asking for it must be a clear error instead.

use crate::common;

use common::*;
use hello_server::Config;
use rigor_load::{io_uring_support, run, IoMode, Live, LoadError, LoadReport, LoadSpec};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The paths this machine can run, each with the name its report carries.
fn paths() -> Vec<(IoMode, &'static str)> {
    let mut v = vec![(IoMode::Epoll, "epoll")];
    match io_uring_support() {
        Ok(()) => v.push((IoMode::IoUring, "io_uring")),
        Err(why) => eprintln!("io_uring half skipped: {why}"),
    }
    v
}

/// Runs `spec` on each path against a fresh server made by `cfg`, checking the report names
/// the path; returns each report with its server.
fn on_each_path(
    cfg: impl Fn() -> Config,
    spec_for: impl Fn(&hello_server::Server) -> LoadSpec,
) -> Vec<(LoadReport, hello_server::Server, &'static str)> {
    paths()
        .into_iter()
        .map(|(io, name)| {
            let srv = server(cfg());
            let r = go(&LoadSpec {
                io,
                ..spec_for(&srv)
            });
            assert_eq!(r.io.as_deref(), Some(name));
            (r, srv, name)
        })
        .collect()
}

#[test]
fn closed_model_counts_match_the_server_on_both_paths() {
    for (r, srv, name) in on_each_path(Config::default, |srv| LoadSpec {
        warmup: Duration::from_millis(200),
        ..spec(srv, "/plaintext")
    }) {
        assert_clean(&r);
        assert!(r.outside_window.requests > 0, "{name}: warm-up recorded");
        assert_eq!(r.status_counts.get(&200), Some(&r.requests), "{name}");
        let per_sec: u64 = r.timeline.iter().map(|t| t.requests).sum();
        assert_eq!(per_sec, r.requests, "{name}");
        assert!(r.client_cpu_secs > 0.0, "{name}");
        assert_counts_match(&srv, &r);
    }
}

#[test]
fn pipelined_counts_match_the_server_on_both_paths() {
    for (r, srv, name) in on_each_path(Config::default, |srv| LoadSpec {
        pipeline: 16,
        warmup: Duration::from_millis(100),
        ..spec(srv, "/json")
    }) {
        assert_clean(&r);
        assert!(r.in_flight_at_end <= 8 * 16, "{name}");
        assert_counts_match(&srv, &r);
    }
}

#[test]
fn large_answers_spanning_several_receive_buffers_are_read_whole() {
    let cfg = || Config {
        body_size: Some(100_000),
        ..Default::default()
    };
    for (r, srv, name) in on_each_path(cfg, |srv| spec(srv, "/plaintext")) {
        assert_clean(&r);
        assert!(r.bytes_read >= r.requests * 100_000, "{name}");
        assert_counts_match(&srv, &r);
    }
}

/// A fixed rate makes the window's request count exact: both paths account for every one.
#[test]
fn open_model_accounts_for_every_scheduled_request_on_both_paths() {
    let runs = on_each_path(Config::default, |srv| LoadSpec {
        rate: Some(2000.0),
        connections: 4,
        threads: 1,
        duration: Duration::from_millis(500),
        ..spec(srv, "/plaintext")
    });
    for (r, srv, name) in &runs {
        assert_clean(r);
        assert_eq!(r.requests, 1000, "{name}: {:?}", r.errors);
        assert!(r.latency_uncorrected.is_some(), "{name}");
        assert_counts_match(srv, r);
    }
}

#[test]
fn timeouts_are_given_up_and_connections_replaced_on_both_paths() {
    let cfg = || Config {
        delay: Duration::from_millis(1000),
        ..Default::default()
    };
    for (r, srv, name) in on_each_path(cfg, |srv| LoadSpec {
        connections: 4,
        threads: 1,
        timeout: Duration::from_millis(200),
        duration: Duration::from_millis(1000),
        ..spec(srv, "/plaintext")
    }) {
        assert_eq!(r.requests, 0, "{name}");
        assert!(r.errors.timeout >= 4, "{name}: {:?}", r.errors);
        assert_eq!(r.latency.count, r.errors.timeout, "{name}");
        // Each connection given up is replaced: the server saw more than the first four.
        assert!(srv.stats().connections > 4, "{name}: replaced");
    }
}

#[test]
fn closes_and_garbage_are_counted_alike_on_both_paths() {
    let closing = || Config {
        close_after: Some(1),
        ..Default::default()
    };
    for (r, srv, name) in on_each_path(closing, |srv| LoadSpec {
        connections: 4,
        threads: 1,
        pipeline: 8,
        duration: Duration::from_millis(400),
        ..spec(srv, "/plaintext")
    }) {
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(srv.stats().requests, r.requests, "{name}: {:?}", r.errors);
        // What the server counted, not how many: a busy machine answers fewer.
        assert!(r.requests > 0, "{name}: none answered");
        assert!(
            r.errors.closed >= 6 * r.requests && r.errors.closed <= 7 * r.requests,
            "{name}: {} answered, {:?}",
            r.requests,
            r.errors
        );
        assert_eq!(r.errors.read, 0, "{name}: {:?}", r.errors);
    }
    let garbage = || Config {
        garbage: true,
        ..Default::default()
    };
    for (r, _srv, name) in on_each_path(garbage, |srv| LoadSpec {
        duration: Duration::from_millis(500),
        ..spec(srv, "/plaintext")
    }) {
        assert_eq!(r.requests, 0, "{name}");
        assert!(r.errors.parse > 10, "{name}: {:?}", r.errors);
    }
}

#[test]
fn cancel_stops_the_io_uring_path_with_what_was_measured() {
    if io_uring_support().is_err() {
        return;
    }
    let srv = server(Config::default());
    let s = LoadSpec {
        io: IoMode::IoUring,
        duration: Duration::from_secs(30),
        ..spec(&srv, "/plaintext")
    };
    let (r, took) = cancelled_after(&s, &Live::default(), Duration::from_millis(400));
    let r = r.expect("a cancelled run reports");
    assert!(
        took < Duration::from_secs(10),
        "took {took:?} of a 30 s window"
    );
    assert!(r.cancelled && r.requests > 0);
    assert_counts_match(&srv, &r);
}

/// `io_uring` where the kernel cannot have it is an error naming why; `auto` falls back.
#[test]
fn asking_for_io_uring_without_it_is_a_clear_error_and_auto_falls_back() {
    let srv = server(Config::default());
    let s = LoadSpec {
        duration: Duration::from_millis(200),
        ..spec(&srv, "/plaintext")
    };
    let auto = go(&LoadSpec {
        io: IoMode::Auto,
        ..s.clone()
    });
    let asked = run(
        &LoadSpec {
            io: IoMode::IoUring,
            ..s.clone()
        },
        &Live::default(),
        &AtomicBool::new(false),
    );
    match io_uring_support() {
        Ok(()) => {
            assert_eq!(auto.io.as_deref(), Some("io_uring"));
            assert_eq!(asked.unwrap().io.as_deref(), Some("io_uring"));
        }
        Err(why) => {
            assert_eq!(auto.io.as_deref(), Some("epoll"));
            let e = asked.unwrap_err();
            assert!(matches!(e, LoadError::InvalidSpec(_)), "{e}");
            assert!(e.to_string().contains(&why.to_string()), "{e}");
        }
    }
    // https:// never takes io_uring: asking for it says so before anything connects.
    let e = run(
        &LoadSpec {
            url: "https://127.0.0.1:1/".into(),
            io: IoMode::IoUring,
            ..s
        },
        &Live::default(),
        &AtomicBool::new(false),
    )
    .unwrap_err();
    assert!(e.to_string().contains("https://"), "{e}");
}
