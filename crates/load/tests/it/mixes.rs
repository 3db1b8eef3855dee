//! Request mixes and stages against a server that counts what it received per path: the
//! weights reach the server, each request's figures match the server's count and the path's
//! own service time, bodies from a file of lines all arrive, and stages shape the rate.

use crate::common::paths::PathServer;
use rigor_load::{run, Live, LoadReport, LoadSpec, MixRequest, RequestMix, Stage};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn get(name: &str, path: &str, weight: u32) -> MixRequest {
    MixRequest {
        name: name.into(),
        path: path.into(),
        method: "GET".into(),
        headers: Vec::new(),
        bodies: Vec::new(),
        weight,
    }
}

fn spec(srv: &PathServer, requests: Vec<MixRequest>) -> LoadSpec {
    LoadSpec {
        url: srv.url("/"),
        connections: 8,
        threads: 2,
        duration: Duration::from_millis(1500),
        mix: Some(RequestMix { requests, seed: 1 }),
        ..Default::default()
    }
}

fn go(spec: &LoadSpec) -> LoadReport {
    run(spec, &Live::default(), &AtomicBool::new(false)).expect("run")
}

/// The report's figures of request `name`.
fn of<'r>(r: &'r LoadReport, name: &str) -> &'r rigor_load::RequestReport {
    r.mix
        .iter()
        .find(|m| m.name == name)
        .expect("the request's figures")
}

/// A 3:1 mix reached the server 3:1 (within 2 percentage points), and each request's count is
/// exactly what the server received on its path.
fn assert_three_to_one(srv: &PathServer, r: &LoadReport) {
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    let (a, b) = (srv.count("/a"), srv.count("/b?x=1"));
    assert!(a + b > 2000, "only {} requests", a + b);
    assert_eq!(of(r, "a").requests, a, "engine vs server on /a");
    assert_eq!(of(r, "b").requests, b, "engine vs server on /b");
    assert_eq!(a + b, r.requests, "the mix's totals are its requests'");
    let share = a as f64 / (a + b) as f64;
    assert!(
        (share - 0.75).abs() < 0.02,
        "share of /a {share:.4} ({a}:{b})"
    );
    let m = r.request_measurements();
    let id = |s: &str| m.iter().find(|(k, _)| k == s).map(|(_, v)| *v);
    assert_eq!(id("load.req.a.requests"), Some(a as f64));
    assert!(id("load.req.b.rps").is_some_and(|v| v > 0.0));
    assert!(id("load.req.a.latency.p99").is_some());
    assert_eq!(id("load.req.b.errors"), Some(0.0));
}

#[test]
fn a_three_to_one_mix_reaches_the_server_three_to_one_closed() {
    let srv = PathServer::start();
    let r = go(&spec(&srv, vec![get("a", "/a", 3), get("b", "/b?x=1", 1)]));
    assert_three_to_one(&srv, &r);
}

#[test]
fn a_three_to_one_mix_reaches_the_server_three_to_one_pipelined() {
    let srv = PathServer::start();
    let r = go(&LoadSpec {
        pipeline: 4,
        ..spec(&srv, vec![get("a", "/a", 3), get("b", "/b?x=1", 1)])
    });
    assert_three_to_one(&srv, &r);
}

#[test]
fn a_three_to_one_mix_reaches_the_server_three_to_one_open() {
    let srv = PathServer::start();
    let r = go(&LoadSpec {
        rate: Some(3000.0),
        duration: Duration::from_millis(1500),
        ..spec(&srv, vec![get("a", "/a", 3), get("b", "/b?x=1", 1)])
    });
    assert_three_to_one(&srv, &r);
}

#[test]
fn each_request_has_its_own_latency_and_statuses() {
    let srv = PathServer::start();
    let r = go(&spec(
        &srv,
        vec![
            get("fast", "/fast", 1),
            get("slow", "/sleep/20", 1),
            get("gone", "/missing", 1),
        ],
    ));
    let (fast, slow, gone) = (of(&r, "fast"), of(&r, "slow"), of(&r, "gone"));
    assert_eq!(fast.requests, srv.count("/fast"));
    assert_eq!(slow.requests, srv.count("/sleep/20"));
    assert_eq!(gone.requests, srv.count("/missing"));
    // The slow path sleeps 20 ms: its median is at least that, and not far above on loopback;
    // the fast path answers at once.
    assert!(
        (19.5..80.0).contains(&slow.latency.p50_ms),
        "slow p50 {} ms",
        slow.latency.p50_ms
    );
    assert!(
        fast.latency.p50_ms < 10.0,
        "fast p50 {} ms",
        fast.latency.p50_ms
    );
    assert!(slow.latency.p50_ms > 4.0 * fast.latency.p50_ms);
    assert_eq!(gone.status_counts.get(&404), Some(&gone.requests));
    assert_eq!(gone.bad_responses, gone.requests);
    assert_eq!(fast.bad_responses, 0);
    assert_eq!(r.bad_responses, gone.requests);
}

#[test]
fn bodies_from_lines_are_sent_in_turn_and_all_arrive() {
    let srv = PathServer::start();
    let lines: Vec<Vec<u8>> = (0..50)
        .map(|i| format!("{{\"n\":{i}}}").into_bytes())
        .collect();
    let post = MixRequest {
        method: "POST".into(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        bodies: lines.clone(),
        ..get("ingest", "/ingest", 1)
    };
    let r = go(&spec(&srv, vec![post, get("read", "/read", 1)]));
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    let seen = srv.seen.lock().unwrap();
    assert_eq!(seen.bodies.len() as u64, of(&r, "ingest").requests);
    assert!(seen.bodies.len() > 500, "{} bodies", seen.bodies.len());
    let distinct: std::collections::BTreeSet<&Vec<u8>> = seen.bodies.iter().collect();
    assert_eq!(distinct.len(), lines.len(), "every line arrived");
    assert!(seen.bodies.iter().all(|b| lines.contains(b)));
    // Each line is sent about as often as any other (in turn, per worker).
    let most = lines
        .iter()
        .map(|l| seen.bodies.iter().filter(|b| *b == l).count())
        .max()
        .unwrap();
    assert!(
        most <= seen.bodies.len() / lines.len() + 2,
        "a line sent {most} times"
    );
}

#[test]
fn a_mix_repeats_its_choices_with_its_seed() {
    // One connection and one request in flight: the sequence of paths is the seed's alone.
    let order = |seed: u64| {
        let srv = PathServer::start();
        let mut s = spec(&srv, vec![get("a", "/a", 1), get("b", "/b?x=1", 1)]);
        s.connections = 1;
        s.threads = 1;
        s.rate = Some(200.0);
        s.duration = Duration::from_millis(300);
        s.mix.as_mut().unwrap().seed = seed;
        let r = go(&s);
        (of(&r, "a").requests, of(&r, "b").requests, r.requests)
    };
    let (a1, b1, n1) = order(5);
    let (a2, b2, n2) = order(5);
    assert_eq!(n1, n2, "the open model sends the same number");
    assert_eq!((a1, b1), (a2, b2), "the same seed chose the same requests");
}

#[test]
fn stages_ramp_the_rate_second_by_second() {
    let srv = PathServer::start();
    let stages = vec![
        Stage {
            rate: 200.0,
            duration: Duration::from_secs(1),
        },
        Stage {
            rate: 600.0,
            duration: Duration::from_secs(1),
        },
        Stage {
            rate: 600.0,
            duration: Duration::from_secs(1),
        },
    ];
    let r = go(&LoadSpec {
        url: srv.url("/a"),
        connections: 16,
        threads: 2,
        stages,
        ..Default::default()
    });
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    // 200 + (200+600)/2 + 600 requests due, all answered, all seen by the server.
    assert_eq!(r.requests, 1200);
    assert_eq!(srv.count("/a"), 1200);
    let rate = r.rate.expect("an open model");
    assert!((rate.offered - 400.0).abs() < 1e-6, "{}", rate.offered);
    let per_sec: Vec<u64> = r.timeline.iter().map(|s| s.requests).collect();
    assert_eq!(per_sec.len(), 3, "{per_sec:?}");
    // Each second holds about its stage's requests (a response may land in the next second).
    for (got, want) in per_sec.iter().zip([200.0, 400.0, 600.0]) {
        assert!(
            (*got as f64 - want).abs() < want * 0.15,
            "per second {per_sec:?}, expected about 200, 400, 600"
        );
    }
    // The server's own clock shows the same rise.
    let seen = srv.seen.lock().unwrap().per_second.clone();
    let busy: Vec<u64> = seen.into_iter().filter(|&n| n > 20).collect();
    assert!(
        busy.windows(2).all(|w| w[1] + 60 >= w[0]) && busy.last() > busy.first(),
        "server per second {busy:?}"
    );
}

#[test]
fn one_stage_can_be_the_measured_window() {
    let srv = PathServer::start();
    let stages = vec![
        Stage {
            rate: 300.0,
            duration: Duration::from_millis(500),
        },
        Stage {
            rate: 300.0,
            duration: Duration::from_secs(1),
        },
        Stage {
            rate: 1000.0,
            duration: Duration::from_secs(5),
        },
    ];
    let r = go(&LoadSpec {
        url: srv.url("/a"),
        connections: 8,
        threads: 2,
        stages,
        measure_stage: Some(1),
        ..Default::default()
    });
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.requests, 300, "stage 2 alone");
    assert!((r.measured_secs - 1.0).abs() < 1e-9, "{}", r.measured_secs);
    // Stage 1 ran before the window; stage 3, after it, never ran.
    assert_eq!(r.outside_window.requests, 150);
    assert_eq!(srv.count("/a"), 450);
}

#[test]
fn bad_mixes_and_stages_are_refused_before_any_load() {
    let srv = PathServer::start();
    let e = rigor_load::check(&LoadSpec {
        io: rigor_load::IoMode::IoUring,
        ..spec(&srv, vec![get("a", "/a", 1)])
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("request mix runs on the epoll path"), "{e}");
    let e = rigor_load::check(&LoadSpec {
        rate: Some(10.0),
        stages: vec![Stage {
            rate: 5.0,
            duration: Duration::from_secs(1),
        }],
        ..spec(&srv, vec![get("a", "/a", 1)])
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("give one"), "{e}");
    assert_eq!(srv.seen.lock().unwrap().paths.len(), 0);
}
