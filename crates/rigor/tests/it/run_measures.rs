//! `rigor run` end to end on the testbed: fresh processes, the application's figures against
//! what /proc and the server itself say.

use crate::common;
use common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[test]
fn two_iterations_agree_with_proc_and_with_the_server() {
    let dir = temp_dir("measures");
    let port = free_port();
    let toml = config(port, "", "/json", "");
    // Watch the app from outside: its PIDs and the largest VmRSS /proc reports.
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let stop = stop.clone();
        let needle = format!("--port {port} ");
        std::thread::spawn(move || {
            let mut seen: Vec<(i32, f64)> = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                for pid in processes_with(&needle) {
                    let status =
                        std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
                    let rss = status
                        .lines()
                        .find_map(|l| l.strip_prefix("VmRSS:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok());
                    if let Some(kib) = rss {
                        match seen.iter_mut().find(|(p, _)| *p == pid) {
                            Some(s) => s.1 = s.1.max(kib / 1024.0),
                            None => seen.push((pid, kib / 1024.0)),
                        }
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            seen
        })
    };
    let (out, json) = run(&dir, &toml, &["-i", "2"]);
    stop.store(true, Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json = json.expect("result json");
    assert_eq!(json["schema"], "rigor.run.v1");
    assert_eq!(json["status"], "complete");
    let its = iterations(&json);
    assert_eq!(its.len(), 2);
    let pids: Vec<i64> = its.iter().map(|i| i["pid"].as_i64().unwrap()).collect();
    assert_ne!(pids[0], pids[1], "each iteration must be a fresh process");
    for it in its {
        let pid = it["pid"].as_i64().unwrap() as i32;
        let rss = m(it, "app.rss").expect("app.rss");
        let (_, proc_rss) = seen
            .iter()
            .find(|(p, _)| *p == pid)
            .unwrap_or_else(|| panic!("the watcher never saw PID {pid}: {seen:?}"));
        assert!(
            (rss - proc_rss).abs() / proc_rss <= 0.10,
            "app.rss {rss:.2} MiB vs /proc VmRSS {proc_rss:.2} MiB"
        );
        assert!(m(it, "app.start_time").unwrap() > 0.0);
        assert!(m(it, "app.first_request").unwrap() > 0.0);
        assert!(m(it, "app.threads.start").unwrap() >= 1.0);
        assert!(m(it, "app.threads.end").unwrap() >= 1.0);
        assert!(m(it, "app.cpu").is_some() && m(it, "app.cores").is_some());
        assert!(m(it, "load.cpu").is_some());
        // Every request the engine sent to the row's URL, in or outside the window, reached
        // the server: the server's own count for /json lies between the two bounds.
        let stats = server_stats(it);
        let served = stats["by_path"]["/json"].as_f64().unwrap();
        let load = &it["load"];
        let in_window = m(it, "load.requests").unwrap();
        let outside = load["outside_window"]["requests"].as_f64().unwrap();
        let in_flight = load["in_flight_at_end"].as_f64().unwrap();
        let sent = in_window + outside + 1.0; // + the first request
        assert!(
            served <= sent && served >= sent - in_flight,
            "server answered {served} on /json; engine: {in_window} measured + {outside} outside \
             (+1 first request), {in_flight} in flight at the end"
        );
        let health = stats["by_path"]["/health"].as_f64().unwrap_or(0.0);
        let outside_total = it["outside_window"]["requests"].as_f64().unwrap();
        assert_eq!(
            outside_total,
            outside + 1.0 + health,
            "outside_window counts probes, first request and warmup"
        );
    }
    assert!(processes_with(&format!("--port {port} ")).is_empty());
}

#[test]
fn memory_held_after_an_endpoint_shows_in_app_rss() {
    let dir = temp_dir("hold");
    let port = free_port();
    let toml = config(port, "--hold-mib 100 --hold-after /json", "/json", "");
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    let rss = m(it, "app.rss").unwrap();
    let private = m(it, "app.private").unwrap();
    assert!((100.0..130.0).contains(&rss), "app.rss = {rss}");
    assert!(private >= 95.0, "app.private = {private}");
}

#[test]
fn a_matrix_of_two_rows_gets_two_fresh_processes() {
    let dir = temp_dir("matrix");
    let port = free_port();
    let toml = config(port, "", "/plaintext", "") + "matrix = { connections = [4, 16] }\n";
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let json = json.unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["variables"]["connections"], "4");
    assert_eq!(rows[1]["variables"]["connections"], "16");
    let p0 = rows[0]["iterations"][0]["pid"].as_i64().unwrap();
    let p1 = rows[1]["iterations"][0]["pid"].as_i64().unwrap();
    assert_ne!(p0, p1);
    for r in rows {
        assert!(r["summary"]["load.rps"]["median"].as_f64().unwrap() > 0.0);
        assert_eq!(r["summary"]["load.rps"]["n"], 1);
    }
    let c0 = rows[0]["iterations"][0]["load"]["connections"].as_u64();
    let c1 = rows[1]["iterations"][0]["load"]["connections"].as_u64();
    assert_eq!((c0, c1), (Some(4), Some(16)));
}

#[test]
fn readiness_by_stdout_text_or_tcp_connect_sends_no_http_probe() {
    for (name, ready) in [
        ("stdout", "{ stdout = \"listening on\" }".to_string()),
        ("tcp", "{ tcp = \"127.0.0.1:PORT\" }".to_string()),
    ] {
        let dir = temp_dir(&format!("ready-{name}"));
        let port = free_port();
        let toml = config(port, "", "/plaintext", "").replace(
            &format!("ready = {{ http = \"http://127.0.0.1:{port}/health\", timeout = \"10s\" }}"),
            &format!("ready = {}", ready.replace("PORT", &port.to_string())),
        );
        assert!(toml.contains(&format!("ready = {{ {name}")), "{toml}");
        let (out, json) = run(&dir, &toml, &["-i", "1"]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out));
        let it = &iterations(json.as_ref().unwrap())[0];
        assert!(m(it, "app.start_time").unwrap() > 0.0);
        // Neither check sends an HTTP request: only the first request and the warmup are outside.
        let stats = server_stats(it);
        assert_eq!(
            stats["by_path"]["/health"].as_u64().unwrap_or(0),
            0,
            "{name}: {stats}"
        );
    }
}

#[test]
#[ignore = "needs root"]
fn raising_the_load_priority_does_not_leak_into_the_application() {
    // Raising a priority needs root.
    require_root();
    let dir = temp_dir("load-priority");
    let port = free_port();
    let toml =
        config(port, "", "/plaintext", "") + "[profiles.local]\nload = { priority = \"high\" }\n";
    let needle = format!("--port {port} ");
    let watcher = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if let Some(pid) = processes_with(&needle).first() {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let after = stat.rsplit(')').next().unwrap_or("");
                // Fields after the command: state is 3rd overall, nice is the 19th.
                if let Some(nice) = after.split_whitespace().nth(16) {
                    return nice.parse::<i32>().ok();
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        None
    });
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    assert_eq!(json.unwrap()["environment"]["load_priority"], "raised");
    assert_eq!(
        watcher.join().unwrap(),
        Some(0),
        "the application must keep the normal priority"
    );
}

#[test]
fn requests_lost_to_a_closing_app_are_socket_errors_and_a_warning() {
    let dir = temp_dir("closing");
    let port = free_port();
    let toml = config(port, "--close-after 1", "/plaintext", "pipeline = 8");
    let (out, json) = run(&dir, &toml, &["-i", "1"]);
    let it = &iterations(json.as_ref().expect("result.json"))[0];
    let answered = m(it, "load.requests").unwrap();
    let closed = m(it, "load.errors.closed").unwrap();
    // One answer per connection, then the other 7 of its pipeline are lost with it.
    assert!(answered > 0.0 && closed >= 6.0 * answered, "{}", text(&out));
    assert!(m(it, "load.socket_errors").unwrap() >= closed);
    let w = message(&it["warnings"], "load_errors");
    assert!(
        w.contains(&format!(
            "closed: {closed} requests were outstanding when the server closed their connection"
        )),
        "{w}"
    );
    let all = text(&out);
    assert!(all.contains("[load_errors]"), "{all}");
}
