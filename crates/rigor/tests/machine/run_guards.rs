//! The guards, each triggered by its real condition, and quiet on a clean run.

use crate::common;
use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Warnings about the state of this shared, noisy machine are true alarms, not false ones.
const MACHINE_STATE: &[&str] = &[
    "busy_machine",
    "client_starved",
    "contaminated",
    "cpu_pressure",
    "foreign_cpu",
    "governor",
    "steal",
    "noisy_row",
];

fn all_warnings(json: &Value) -> Vec<String> {
    let mut out = kinds(&json["warnings"]);
    for row in json["rows"].as_array().unwrap() {
        out.extend(kinds(&row["warnings"]));
        for it in row["iterations"].as_array().unwrap() {
            out.extend(kinds(&it["warnings"]));
        }
    }
    out
}

#[test]
fn a_clean_run_of_the_testbed_raises_no_false_alarm() {
    let _one = crate::common::one_at_a_time();
    let dir = temp_dir("clean");
    let port = free_port();
    let toml = config(
        port,
        "",
        "/json",
        "validate = { status = 200, body_contains = \"Hello\" }",
    );
    // Every measurement on the terminal: the requests outside the window are not a key figure.
    let (t, json) = run_exit(&dir, &toml, &["-i", "1", "--all-measurements"], 0);
    let json = json.unwrap();
    let unexpected: Vec<String> = all_warnings(&json)
        .into_iter()
        .filter(|k| !MACHINE_STATE.contains(&k.as_str()) && k != "client_saturated")
        // Without root there is no cgroup and no raised priority: said, and rightly.
        .filter(|k| is_root() || (k != "no_cgroup" && k != "priority"))
        .collect();
    assert!(unexpected.is_empty(), "false alarms: {unexpected:?}\n{}", t);
    let env = &json["environment"];
    for key in [
        "os",
        "kernel",
        "cpu_model",
        "logical_cores",
        "memory_mib",
        "hostname",
        "aslr",
        "rigor_version",
    ] {
        assert!(!env[key].is_null(), "environment.{key} missing: {env}");
    }
    assert!(env["jobs"]["app"].is_object(), "{env}");
    // Pre-warming is visible: probes, the first request and the warmup are counted.
    let it = &iterations(&json)[0];
    assert!(it["outside_window"]["requests"].as_u64().unwrap() >= 2);
    assert!(t.contains("outside window"), "{t}");
}

#[test]
fn validation_checks_the_rows_own_url() {
    let _one = crate::common::one_at_a_time();
    let dir = temp_dir("validate");
    let port = free_port();
    let toml = config(
        port,
        "",
        "/json",
        "validate = { status = 200, body_contains = \"Goodbye\" }",
    );
    let (t, _) = run_exit(&dir, &toml, &["-i", "1"], 1);
    assert!(
        t.contains("validation failed") && t.contains("Goodbye") && t.contains("/json"),
        "{t}"
    );
}

#[test]
#[ignore = "needs root"]
fn page_cache_in_the_cgroup_is_not_called_app_memory() {
    let _one = crate::common::one_at_a_time();
    // Cgroups need root.
    require_root();
    let dir = temp_dir("pagecache");
    let port = free_port();
    let file = dir.join("big.dat");
    let toml = config(
        port,
        &format!("--read-file {} --read-file-mib 256", file.display()),
        "/plaintext",
        "",
    );
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let json = json.unwrap();
    let it = &iterations(&json)[0];
    if it["measurements"]["app.cgroup.memory"].is_null() {
        eprintln!("no cgroup: {}", json["environment"]["cgroup"]);
        skip("needs a cgroup");
        return;
    }
    let cg = m(it, "app.cgroup.memory").unwrap();
    let cache = m(it, "app.cgroup.cache").unwrap();
    let rss = m(it, "app.rss").unwrap();
    assert!(
        cache > 200.0 && cg > 200.0 && rss < 50.0,
        "cg {cg} cache {cache} rss {rss}"
    );
    let w = message(&it["warnings"], "page_cache");
    assert!(
        w.contains("MiB of page cache") && w.contains("not the application's memory"),
        "{w}"
    );
    assert!(t.contains("page cache"), "{t}");
    let _ = std::fs::remove_file(file);
}

/// A userspace TCP relay, like docker-proxy or socat: every connection copied both ways.
fn start_proxy(to: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                continue;
            };
            let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let (mut c1, mut s1) = (client, server);
            std::thread::spawn(move || pipe(&mut c1, &mut s1));
            std::thread::spawn(move || pipe(&mut s2, &mut c2));
        }
    });
    port
}

fn pipe(from: &mut TcpStream, to: &mut TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

#[test]
fn load_through_a_proxy_is_named() {
    let _one = crate::common::one_at_a_time();
    let dir = temp_dir("proxy");
    let app_port = free_port();
    let proxy_port = start_proxy(app_port);
    let toml = config(app_port, "", "/plaintext", "").replace(
        &format!("url = \"http://127.0.0.1:{app_port}/plaintext\""),
        &format!("url = \"http://127.0.0.1:{proxy_port}/plaintext\""),
    );
    // The proxy listens before the app starts: that is not "port taken", since readiness names
    // the app's own port.
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let json = json.unwrap();
    let it = &iterations(&json)[0];
    let w = message(&it["warnings"], "proxy");
    assert!(
        w.contains(&format!("127.0.0.1:{proxy_port}"))
            && w.contains(&format!("PID {}", std::process::id()))
            && w.contains("goes through a proxy"),
        "{w}\n{t}"
    );
    assert_eq!(it["network"]["owned_by_app"], false, "{it}");
}

#[test]
fn a_proxy_in_front_of_an_app_ready_on_stdout_is_named_not_refused() {
    let _one = crate::common::one_at_a_time();
    let dir = temp_dir("proxy-stdout");
    let app_port = free_port();
    let proxy_port = start_proxy(app_port);
    let toml = config(app_port, "", "/plaintext", "")
        .replace(
            &format!("url = \"http://127.0.0.1:{app_port}/plaintext\""),
            &format!("url = \"http://127.0.0.1:{proxy_port}/plaintext\""),
        )
        .replace(
            &format!("http = \"http://127.0.0.1:{app_port}/health\""),
            "stdout = \"hello-server listening\"",
        );
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    assert!(m(it, "load.requests").unwrap() > 0.0, "{it}");
    let w = message(&it["warnings"], "proxy");
    assert!(
        w.contains(&format!("127.0.0.1:{proxy_port}"))
            && w.contains(&format!("PID {}", std::process::id())),
        "{w}\n{t}"
    );
    assert_eq!(it["network"]["owned_by_app"], false, "{it}");
}

#[test]
fn a_debug_build_is_flagged() {
    let _one = crate::common::one_at_a_time();
    let dir = temp_dir("debugbuild");
    // The app is a real debug build that execs the testbed.
    shim_crate(&dir, "");
    let port = free_port();
    let toml = with_app(
        &with_program(&config(port, "", "/plaintext", ""), "target/debug/shim"),
        "build = \"cargo build -q\"\nartifact = \"target/debug/shim\"",
    );
    let (out, json) = run(&dir, &toml, &["-i", "1", "--strict"]);
    let t = text(&out);
    assert_eq!(
        out.status.code(),
        Some(4),
        "--strict makes the warning fatal: {t}"
    );
    let json = json.unwrap();
    // One warning for the build, naming each sign: the build command, and the path it runs.
    let debug = messages(&json["warnings"], "debug_build");
    assert_eq!(debug.len(), 1, "{debug:?}");
    assert!(
        debug[0].ends_with("`cargo build -q` builds without --release"),
        "{debug:?}"
    );
    assert!(
        debug[0].contains("/target/debug/shim` is a cargo debug output (target/debug)"),
        "{debug:?}"
    );
    assert!(m(&iterations(&json)[0], "app.build_time").unwrap() > 0.0);
}

#[test]
fn an_unmet_rate_and_a_saturated_client_are_said() {
    let _one = crate::common::one_at_a_time();
    let dir = temp_dir("rate");
    let port = free_port();
    let toml = config(port, "--delay-us 2000", "/plaintext", "rate = 50000")
        .replace("connections = 8", "connections = 2");
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    let k = kinds(&it["warnings"]);
    let w = message(&it["warnings"], "rate_not_met");
    assert!(w.starts_with("offered 50000 req/s but achieved "), "{w}");
    // Saturation is judged on the client's measured CPU: the warning follows the reading.
    let cpu = m(it, "load.cpu").unwrap();
    assert_eq!(
        k.contains(&"client_saturated".to_string()),
        cpu >= 90.0,
        "load.cpu {cpu}: {k:?}"
    );
}

#[test]
fn a_busy_machine_is_said_before_the_run() {
    let _one = crate::common::one_at_a_time();
    // Busy threads in this very process: real runnable load, and they cannot outlive the test.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hogs: Vec<_> = (0..6)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let dir = temp_dir("busy");
    let port = free_port();
    let (out, json) = run(&dir, &config(port, "", "/plaintext", ""), &["-i", "1"]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for h in hogs {
        let _ = h.join();
    }
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Busy by the load average or the runnable threads, or (where the kernel reports it) by
    // CPU pressure alone: either warning, saying which.
    let warnings = &json.unwrap()["warnings"];
    let k = kinds(warnings);
    if k.contains(&"busy_machine".to_string()) {
        let w = message(warnings, "busy_machine");
        assert!(
            w.starts_with("the machine was busy before the run: "),
            "{w}"
        );
    } else {
        let w = message(warnings, "cpu_pressure");
        assert!(w.contains("tasks were waiting for CPU"), "{w}");
    }
}

#[test]
fn bad_responses_are_counted_and_said() {
    let _one = crate::common::one_at_a_time();
    let dir = temp_dir("bad-responses");
    let port = free_port();
    let (_, json) = run_exit(
        &dir,
        &config(port, "--error-rate 0.25", "/plaintext", ""),
        &["-i", "1"],
        0,
    );
    let it = &iterations(json.as_ref().unwrap())[0];
    let bad = m(it, "load.bad_responses").unwrap();
    let all = m(it, "load.requests").unwrap();
    assert!((bad / all - 0.25).abs() < 0.02, "bad {bad} of {all}");
    let w = message(&it["warnings"], "bad_responses");
    assert_eq!(w, format!("{bad} responses were not 2xx or 3xx"));
}
