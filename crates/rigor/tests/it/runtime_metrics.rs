//! `metrics = URL` end to end: the testbed's own `/metrics` page scraped through a real run,
//! its counters' rates checked against what the load engine counted, `metrics_select` picking
//! label sets, and a bad selector or an unreadable page said clearly.

use crate::common;
use common::*;
use serde_json::Value;
use std::sync::Mutex;

/// Held by the tests that compare rates, so two loads never share the machine's cores.
static STEADY: Mutex<()> = Mutex::new(());

/// The testbed on `port` loaded at a fixed 5000 requests per second for 3 s, its `/metrics`
/// page scraped, plus `lines` in the application's job. The rate is fixed so the throughput is
/// steady whatever else the machine runs: the scraped span is the window less a few tens of
/// ms at its edges, and a closed-model load on a busy machine swings by 2× within a second,
/// which would make the two rates differ by more than the scraping does.
fn scraped(port: u16, lines: &str) -> String {
    let toml = config(port, "", "/plaintext", "rate = 5000")
        .replace("duration = \"1s\"", "duration = \"3s\"");
    with_app(
        &toml,
        &format!("metrics = \"http://127.0.0.1:{port}/metrics\"\n{lines}"),
    )
}

/// The `app.metric.*` ids an iteration recorded.
fn metric_ids(it: &Value) -> Vec<String> {
    it["measurements"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("app.metric."))
        .cloned()
        .collect()
}

/// `|a - b| / b`, for "within 2%".
fn off(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

#[test]
fn rates_match_what_the_load_counted() {
    let _steady = STEADY.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("metrics-rates");
    let port = free_port();
    let (t, json) = run_exit(&dir, &scraped(port, ""), &["-i", "1"], 0);
    let json = json.unwrap();
    let it = &iterations(&json)[0];
    // The reference is the load engine's own count over its measured window: the server
    // answered exactly those requests, and the page's counter is read at the window's edges
    // (both while the load runs), so the two rates agree up to the few requests answered in
    // the ~50 ms of the window outside the scraped span (and the handful of scrapes
    // themselves, counted under /metrics).
    let rps = m(it, "load.rps").unwrap();
    let rate = m(it, "app.metric.hello_requests_total.rate").expect(&t);
    assert!(
        off(rate, rps) <= 0.02,
        "requests {rate:.0}/s vs load.rps {rps:.0}"
    );
    // Bytes: what the server queued per second against what the engine read per second; the
    // scrapes' own answers (a page of about 1.3 KiB, four times a second) add about 1%.
    let sent = m(it, "app.metric.hello_bytes_sent_total.rate").unwrap() / (1 << 20) as f64;
    let read = m(it, "load.throughput").unwrap();
    assert!(
        off(sent, read) <= 0.02,
        "sent {sent:.3} MiB/s vs read {read:.3}"
    );
    // The gauge's highest value in the window: the load's 8 connections and the scrape's own
    // (a previous scrape's closing connection may still count).
    let open = m(it, "app.metric.hello_open_connections").unwrap();
    assert!((9.0..=11.0).contains(&open), "open connections {open}");
    assert_eq!(m(it, "app.metric.hello_held_bytes"), Some(0.0));
    // Every scrape reached the server, which counted them under /metrics.
    let scrapes = it["metrics_scrapes"].as_u64().unwrap();
    let stats = server_stats(it);
    assert_eq!(
        stats["by_path"]["/metrics"].as_u64(),
        Some(scrapes),
        "{stats}"
    );
    assert!(scrapes >= 3, "{scrapes}");
    // The scrapes as a time series: one time per scrape, one value per scrape per id.
    let series = &it["series"];
    assert_eq!(
        series["metrics_t_ms"].as_array().unwrap().len() as u64,
        scrapes
    );
    for id in metric_ids(it) {
        let values = series["metrics"][&id]
            .as_array()
            .unwrap_or_else(|| panic!("{id}"));
        assert_eq!(values.len() as u64, scrapes, "{id}");
    }
    // Rates are declared per second; no direction is made up.
    let decl = &json["measurements"]["app.metric.hello_requests_total.rate"];
    assert_eq!(decl["unit"], "1/s", "{}", json["measurements"]);
    assert!(decl.get("direction").is_none());
    assert!(
        kinds(&it["warnings"])
            .iter()
            .all(|k| k != "metrics" && k != "metrics_non_finite"),
        "{}",
        it["warnings"]
    );
}

/// An application whose own `/metrics` page holds NaN and +Inf samples beside finite ones
/// (every other path answers `ok`).
const NON_FINITE_APP: &str = r##"
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
PAGE = b"""# TYPE weird gauge
weird{w="0"} NaN
weird{w="1"} 3
# TYPE broken counter
broken_total +Inf
# TYPE fine counter
fine_total 7
"""
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = PAGE if self.path == "/metrics" else b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"##;

#[test]
fn non_finite_samples_are_counted_and_said() {
    let dir = temp_dir("metrics-non-finite");
    let script = dir.join("app.py");
    std::fs::write(&script, NON_FINITE_APP).unwrap();
    let port = free_port();
    let command = format!("python3 {} {port}", script.display());
    let toml = with_command(&config(port, "", "/", "rate = 50"), port, &command)
        .replace("connections = 8", "connections = 1")
        .replace("/health", "/")
        .replace("timeout = \"10s\"", "timeout = \"20s\"");
    let toml = with_app(
        &toml,
        &format!("metrics = \"http://127.0.0.1:{port}/metrics\""),
    );
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    // The finite series stand; the counter with only +Inf has no figure.
    assert_eq!(m(it, "app.metric.weird"), Some(3.0), "{t}");
    assert_eq!(m(it, "app.metric.fine_total.rate"), Some(0.0));
    assert!(m(it, "app.metric.broken_total.rate").is_none());
    // Every scrape the app answered held one NaN and one +Inf.
    let scrapes = it["metrics_scrapes"].as_u64().unwrap();
    assert!(scrapes >= 2, "{scrapes}");
    let said = message(&it["warnings"], "metrics_non_finite");
    eprintln!("{said}");
    let want = format!(
        "{} NaN or ±Inf samples in {scrapes} of {scrapes} scrapes",
        2 * scrapes
    );
    assert!(said.contains(&want), "{said}");
    assert!(
        said.contains(&format!("`broken_total` {scrapes}")),
        "{said}"
    );
    assert!(said.contains(&format!("`weird` {scrapes}")), "{said}");
    assert!(
        said.contains(&format!("http://127.0.0.1:{port}/metrics")),
        "{said}"
    );
}

#[test]
fn metrics_select_picks_label_sets() {
    let _steady = STEADY.lock().unwrap_or_else(|e| e.into_inner());
    let dir = temp_dir("metrics-select");
    let port = free_port();
    let lines = r#"metrics_select = ['hello_requests_total{path="/plaintext"}', 'hello_requests_total{path="/health"}', 'hello_open_connections', 'hello_requests_total{path="/nope"}']"#;
    let (_, json) = run_exit(&dir, &scraped(port, lines), &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    let plain = r#"app.metric.hello_requests_total{path="/plaintext"}.rate"#;
    let health = r#"app.metric.hello_requests_total{path="/health"}.rate"#;
    assert_eq!(
        metric_ids(it),
        ["app.metric.hello_open_connections", health, plain],
        "only what was selected"
    );
    let rps = m(it, "load.rps").unwrap();
    let rate = m(it, plain).unwrap();
    assert!(
        off(rate, rps) <= 0.02,
        "/plaintext {rate:.0}/s vs load.rps {rps:.0}"
    );
    // Readiness was probed before the window: none of its requests are in it.
    assert_eq!(m(it, health), Some(0.0));
    let said = messages(&it["warnings"], "metrics");
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains(r#"hello_requests_total{path="/nope"}"#),
        "{said:?}"
    );
}

#[test]
fn a_bad_selector_is_a_config_error() {
    let dir = temp_dir("metrics-bad-select");
    let port = free_port();
    let toml = scraped(
        port,
        "metrics_select = ['hello_requests_total{path=/plaintext}']",
    );
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 2);
    assert!(json.is_none());
    let line = toml
        .lines()
        .position(|l| l.starts_with("metrics_select"))
        .unwrap()
        + 1;
    assert!(t.contains(&format!("rigor.toml:{line}")), "{t}");
    assert!(t.contains("metrics_select"), "{t}");
    assert!(t.contains("hello_requests_total{path=/plaintext}"), "{t}");
    assert!(t.contains("double quotes"), "{t}");
    assert!(processes_with(&format!("--port {port} ")).is_empty());
}

#[test]
fn an_unreadable_page_is_a_warning_not_a_failure() {
    let _steady = STEADY.lock().unwrap_or_else(|e| e.into_inner());
    let port = free_port();
    let nobody = free_port();
    for (name, url, why) in [
        (
            "refused",
            format!("http://127.0.0.1:{nobody}/metrics"),
            "refused",
        ),
        (
            "json",
            format!("http://127.0.0.1:{port}/json"),
            "not Prometheus text: line 1",
        ),
        (
            "404",
            format!("http://127.0.0.1:{port}/status/404"),
            "answered 404",
        ),
    ] {
        let dir = temp_dir(&format!("metrics-{name}"));
        let toml = scraped(port, "").replace(
            &format!("metrics = \"http://127.0.0.1:{port}/metrics\""),
            &format!("metrics = \"{url}\""),
        );
        let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
        let it = &iterations(json.as_ref().unwrap())[0];
        assert!(it["error"].is_null(), "{name}: {t}");
        assert!(m(it, "load.rps").unwrap() > 0.0);
        assert!(metric_ids(it).is_empty(), "{name}: {:?}", metric_ids(it));
        let said = message(&it["warnings"], "metrics");
        assert!(said.contains(&url) && said.contains(why), "{name}: {said}");
        assert!(said.contains("window's start"), "{name}: {said}");
    }
}
