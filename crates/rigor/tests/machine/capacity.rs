//! `--find-rate` and `find_rate` against a server of one thread that blocks a fixed time per
//! request (a sleep: on a machine busy with other work a spin's CPU share, and so the
//! capacity, would drift during the search), so it serves one request at a time up to a
//! known ceiling; the answer is checked by loading the server
//! with plain `rigor load --rate` below it (the objective met) and above it (missed), and the
//! server's own request count is checked against the engine's.

use crate::common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The objective: lenient, so a busy machine's hiccups do not decide it.
const SLO: &str = "p99<100ms";
const SLO_MS: f64 = 100.0;

/// The testbed on one thread, 1.5 ms of blocking per request: at most ~660 requests/s.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start() -> Server {
        Server::blocking(1500)
    }

    /// The testbed on one thread blocking `us` microseconds per request.
    fn blocking(us: u32) -> Server {
        let port = free_port();
        let child = Command::new(hello_server())
            .args([
                "--port",
                &port.to_string(),
                "--threads",
                "1",
                "--block-us",
                &us.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start hello-server");
        let server = Server { child, port };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("hello-server did not listen on {port}");
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/plaintext", self.port)
    }

    /// The server's own count of the requests it answered (`/stats`).
    fn answered(&self) -> u64 {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).expect("a body");
        let stats: Value = serde_json::from_str(body).expect("stats JSON");
        stats["requests"].as_u64().expect("requests")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `rigor load ARGS --json -`: the document.
fn load(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_rigor"))
        .arg("load")
        .args(args)
        .args(["--json", "-"])
        .output()
        .expect("run rigor load");
    assert!(
        out.status.success(),
        "rigor load {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("rigor.load.v1 JSON")
}

#[test]
fn the_capacity_found_holds_below_and_breaks_above() {
    let _one = one_at_a_time();
    let server = Server::start();
    let url = server.url();
    let before = server.answered();
    let found = load(&[
        &url,
        "--find-rate",
        SLO,
        "-c",
        "16",
        "--find-precision",
        "5%",
    ]);
    let c = &found["capacity"];
    assert_eq!(c["outcome"], "settled", "{c:#}");
    let capacity = found["measurements"]["load.capacity"].as_f64().unwrap();
    assert_eq!(c["capacity_rps"].as_f64(), Some(capacity));
    let (low, high) = (c["low"].as_f64().unwrap(), c["high"].as_f64().unwrap());
    assert!(
        low == capacity && high > low && high - low <= 0.05 * low + 1.0,
        "{c:#}"
    );
    // 1.5 ms a request on one thread cannot hold more than 1/1.5ms.
    assert!(capacity < 1000.0 / 1.5, "{capacity}");
    // Every probe's requests reached the server (the first request of each is in the warmup,
    // not the window, so the server counts at least as many as the windows did).
    let probes = c["probes"].as_array().unwrap();
    let in_windows: u64 = probes.iter().map(|p| p["answered"].as_u64().unwrap()).sum();
    let counted = server.answered() - before;
    assert!(
        counted >= in_windows,
        "server {counted} < engine {in_windows}"
    );
    for p in probes {
        let met = p["p99_ms"].as_f64().unwrap() < SLO_MS && p["answered"].as_u64().unwrap() > 0;
        assert_eq!(p["met"].as_bool(), Some(met), "{p:#}");
    }
    // The engine's report at the rate found is the last probe there.
    assert_eq!(found["report"]["rate"]["offered"].as_f64(), Some(capacity));

    let at = |factor: f64| {
        let rate = format!("{:.0}", capacity * factor);
        load(&[&url, "--rate", &rate, "-c", "16", "-d", "4s", "-w", "1s"])
    };
    let below = at(0.8);
    let p99 = below["measurements"]["load.latency.p99"].as_f64().unwrap();
    assert!(p99 < SLO_MS, "at 0.8 × {capacity}: p99 {p99} ms");
    assert_eq!(
        below["measurements"]["load.socket_errors"].as_f64(),
        Some(0.0)
    );
    std::thread::sleep(Duration::from_secs(1));
    let above = at(1.3);
    let p99 = above["measurements"]["load.latency.p99"].as_f64().unwrap();
    assert!(p99 >= SLO_MS, "at 1.3 × {capacity}: p99 {p99} ms");
}

#[test]
fn a_run_with_find_rate_records_load_capacity_and_its_probes() {
    let _one = one_at_a_time();
    let dir = temp_dir("find-rate-run");
    let port = free_port();
    let toml = config(
        port,
        "--block-us 1500",
        "/plaintext",
        "find_rate = { slo = \"p99 < 100ms\", precision = \"10%\", probe = \"2s\", start = 200 }",
    );
    let (out, json) = run(&dir, &toml, &["-i", "1", "--html", "report.html"]);
    let json = json.unwrap_or_else(|| panic!("no result: {}", text(&out)));
    assert_schema(&json);
    let it = &iterations(&json)[0];
    assert!(it["error"].is_null(), "{}", it["error"]);
    let capacity = m(it, "load.capacity").expect("load.capacity");
    assert_eq!(it["capacity"]["capacity_rps"].as_f64(), Some(capacity));
    assert!(it["capacity"]["probes"].as_array().unwrap().len() >= 4);
    assert!(
        m(it, "load.rps").is_none(),
        "a search has no one window's rps"
    );
    // The server answered at least what the probes' windows counted.
    let answered: u64 = it["capacity"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["answered"].as_u64().unwrap())
        .sum();
    let stats = server_stats(it);
    assert!(stats["requests"].as_u64().unwrap() >= answered, "{stats}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("Latency against offered rate"),
        "no capacity chart"
    );
}

#[test]
fn an_objective_no_rate_meets_says_so_with_the_lowest_rate_and_exits_1() {
    let _one = one_at_a_time();
    // 3 ms of blocking per request: no rate holds p99 < 1 ms.
    let server = Server::blocking(3000);
    let before = server.answered();
    let out = Command::new(env!("CARGO_BIN_EXE_rigor"))
        .args([
            "load",
            &server.url(),
            "--find-rate",
            "p99<1ms",
            "--rate",
            "40",
        ])
        .args(["--probe", "1s", "-c", "2", "--json", "-"])
        .output()
        .expect("run rigor load");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("rigor.load.v1 JSON");
    let c = &doc["capacity"];
    assert_eq!(c["outcome"], "never_met", "{c:#}");
    assert!(doc["measurements"]["load.capacity"].is_null(), "{doc:#}");
    // 1 s probes are due 10 requests from 10 rps: the search goes no lower, and probes it.
    let probes = c["probes"].as_array().unwrap();
    let lowest = probes
        .iter()
        .map(|p| p["rate"].as_f64().unwrap())
        .fold(f64::MAX, f64::min);
    assert_eq!(lowest, 10.0, "{c:#}");
    for p in probes {
        assert!(p["due"].as_u64().unwrap() >= 10, "{p:#}");
        assert_eq!(p["met"].as_bool(), Some(false), "{p:#}");
    }
    assert!(
        stderr.contains("Capacity: none: no rate met p99<1ms; the lowest probed, 10.00 req/s, missed it with p50"),
        "{stderr}"
    );
    assert!(
        stderr.contains("rigor: no rate met p99<1ms, down to 10.00 req/s"),
        "{stderr}"
    );
    // The server answered at least what the windows counted.
    let in_windows: u64 = probes.iter().map(|p| p["answered"].as_u64().unwrap()).sum();
    assert!(server.answered() - before >= in_windows);
}

#[test]
fn a_run_whose_search_reaches_max_warns_that_load_capacity_is_a_lower_bound() {
    let _one = one_at_a_time();
    let dir = temp_dir("find-rate-max");
    let port = free_port();
    // 1.5 ms a request holds ~660 rps: 20 and 40 rps both meet a lenient objective, and the
    // search stops at its max of 40 with nothing missed.
    let toml = config(
        port,
        "--block-us 1500",
        "/plaintext",
        "find_rate = { slo = \"p99 < 500ms\", start = 20, max = 40, probe = \"1s\" }",
    );
    let (out, json) = run(&dir, &toml, &["-i", "1"]);
    let json = json.unwrap_or_else(|| panic!("no result: {}", text(&out)));
    assert_schema(&json);
    let it = &iterations(&json)[0];
    assert!(it["error"].is_null(), "{}", it["error"]);
    assert_eq!(
        it["capacity"]["outcome"], "at_least_max",
        "{:#}",
        it["capacity"]
    );
    assert_eq!(m(it, "load.capacity"), Some(40.0));
    let w = message(&it["warnings"], "capacity_unsettled");
    assert!(
        w.starts_with("find_rate met p99<500ms even at its max, 40.00 req/s: load.capacity 40.00 is a lower bound"),
        "{w}"
    );
    // The server answered at least what the probes' windows counted.
    let answered: u64 = it["capacity"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["answered"].as_u64().unwrap())
        .sum();
    assert!(server_stats(it)["requests"].as_u64().unwrap() >= answered);
}
