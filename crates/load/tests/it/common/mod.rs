//! Helpers shared by the engine tests: an in-process testbed and run/count assertions.
#![allow(dead_code)]

pub mod paths;

use hello_server::{Config, Server};
use rigor_load::{run, Live, LoadError, LoadReport, LoadSpec};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub fn server(cfg: Config) -> Server {
    hello_server::start(Config {
        port: 0,
        threads: 1,
        ..cfg
    })
    .expect("start hello-server")
}

pub fn spec(srv: &Server, path: &str) -> LoadSpec {
    LoadSpec {
        url: format!("http://{}{path}", srv.addr()),
        connections: 8,
        threads: 2,
        duration: Duration::from_millis(1000),
        warmup: Duration::ZERO,
        ..Default::default()
    }
}

pub fn go(spec: &LoadSpec) -> LoadReport {
    let start = Instant::now();
    let r = run(spec, &Live::default(), &AtomicBool::new(false)).expect("run");
    // A bound on a hang, not a speed: a busy machine may take seconds longer than the spec.
    let limit = spec.warmup + spec.duration + spec.timeout + Duration::from_secs(15);
    assert!(
        start.elapsed() < limit,
        "run took {:?}, limit {:?}",
        start.elapsed(),
        limit
    );
    r
}

/// Runs `spec` with `live`, setting the cancel flag `after` into the run as Ctrl-C does; returns
/// the outcome and how long the run took.
pub fn cancelled_after(
    spec: &LoadSpec,
    live: &Live,
    after: Duration,
) -> (Result<LoadReport, LoadError>, Duration) {
    let cancel = AtomicBool::new(false);
    let start = Instant::now();
    let r = std::thread::scope(|sc| {
        sc.spawn(|| {
            std::thread::sleep(after);
            cancel.store(true, Ordering::Relaxed);
        });
        run(spec, live, &cancel)
    });
    (r, start.elapsed())
}

/// The server saw every request the engine sent: those measured, those sent during warmup, and
/// (possibly) those still in flight when a run was cancelled or sent but given up as timeouts —
/// closing the socket can discard requests the server had not read yet.
pub fn assert_counts_match(srv: &Server, r: &LoadReport) {
    std::thread::sleep(Duration::from_millis(150));
    let seen = srv.stats().requests;
    let never_sent = r.rate.map_or(0, |rate| rate.not_sent);
    let sent_timeouts = r.errors.timeout - never_sent;
    let low = r.requests + r.outside_window.requests - r.in_flight_at_end;
    let high = r.requests + r.outside_window.requests + sent_timeouts;
    assert!(
        (low..=high).contains(&seen),
        "server saw {seen}, engine: {} measured + {} outside window ({} in flight at end, \
         {sent_timeouts} sent and timed out)",
        r.requests,
        r.outside_window.requests,
        r.in_flight_at_end
    );
}

pub fn assert_clean(r: &LoadReport) {
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.bad_responses, 0);
    assert!(r.requests > 0, "no request answered");
}

/// A tiny HTTP/1.1 server independent of the engine and the testbed: it answers every request
/// (bodiless, ending in a blank line) with `response` verbatim, and counts what it answered, so
/// tests can check the engine against exact bytes on the wire.
pub fn canned_server(
    response: &'static [u8],
) -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicU64>,
) {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let served = Arc::new(AtomicU64::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let count = count.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut tail: Vec<u8> = Vec::new();
                loop {
                    let n = match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    tail.extend_from_slice(&buf[..n]);
                    let mut answers = 0;
                    while let Some(p) = tail.windows(4).position(|w| w == b"\r\n\r\n") {
                        tail.drain(..p + 4);
                        answers += 1;
                    }
                    for _ in 0..answers {
                        if stream.write_all(response).is_err() {
                            return;
                        }
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    (addr, served)
}
