//! Helpers shared by the engine tests: an in-process testbed and run/count assertions.
#![allow(dead_code)]

use hello_server::{Config, Server};
use rigor_load::{run, Live, LoadReport, LoadSpec};
use std::sync::atomic::AtomicBool;
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
    let limit = spec.warmup + spec.duration + spec.timeout + Duration::from_millis(500);
    assert!(
        start.elapsed() < limit,
        "run took {:?}, limit {:?}",
        start.elapsed(),
        limit
    );
    r
}

/// The server saw every request the engine sent: those measured, those sent during warmup, and
/// (possibly) those still in flight when the window closed — closing the socket can discard
/// requests the server had not read yet.
pub fn assert_counts_match(srv: &Server, r: &LoadReport) {
    std::thread::sleep(Duration::from_millis(150));
    let seen = srv.stats().requests;
    let low = r.requests + r.outside_window.requests - r.in_flight_at_end;
    let high = r.requests + r.outside_window.requests;
    assert!(
        (low..=high).contains(&seen),
        "server saw {seen}, engine: {} measured + {} outside window ({} in flight at end)",
        r.requests,
        r.outside_window.requests,
        r.in_flight_at_end
    );
}

pub fn assert_clean(r: &LoadReport) {
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.bad_responses, 0);
    assert!(r.requests > 100, "only {} requests", r.requests);
}
