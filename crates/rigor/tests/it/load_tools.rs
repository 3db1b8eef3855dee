//! External load tools as load jobs, run for real against the testbed: the tool's figures
//! under the engine's ids and checked against the server's own count, its CPU, its raw output
//! in the result, and a missing or failing tool as a failed iteration with a clear error.
//! A test whose tool is not installed says `test-skip: needs TOOL` and checks nothing (a
//! `bombardier` that is not the HTTP tool counts as not installed).

use crate::common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The config of `common::config` loaded for 2 s after a 1 s warmup (wrk takes whole
/// seconds), with `lines` added to the load job.
fn with_load(toml: &str, lines: &str) -> String {
    let at = "warmup = \"300ms\"\nduration = \"1s\"";
    assert!(toml.contains(at), "no `{at}` in {toml}");
    toml.replacen(
        at,
        &format!("warmup = \"1s\"\nduration = \"2s\"\n{lines}"),
        1,
    )
}

/// The measured run's figures against what the server answered on `path`: every response the
/// tool counted reached the server, and the server answered at most what was in flight at the
/// end of each run (one connection's worth per run) beyond them: the first request, the
/// warmup run's requests and the measured run's.
fn check_against_server(it: &Value, path: &str, connections: f64) {
    let stats = server_stats(it);
    let served = stats["by_path"][path].as_f64().unwrap();
    let requests = m(it, "load.requests").expect("load.requests");
    let tool = &it["tool"];
    let warm = tool["warmup"]["requests"].as_f64().unwrap_or(0.0);
    let runs = if tool["warmup"].is_object() { 2.0 } else { 1.0 };
    let counted = requests + warm + 1.0;
    assert!(
        served >= counted && served <= counted + runs * connections,
        "server answered {served} on {path}; {} counted {requests} measured + {warm} warmup \
         (+1 first request), up to {connections} in flight per run",
        tool["tool"]
    );
    assert!(requests > 100.0, "{requests}");
}

/// The tool's own CPU: read, not zero, and less than the whole machine over its run.
fn check_cpu(it: &Value) {
    let tool = &it["tool"];
    let cpu_secs = tool["cpu_secs"].as_f64().expect("cpu_secs");
    let wall = tool["wall_secs"].as_f64().unwrap();
    let cores = std::thread::available_parallelism().unwrap().get() as f64;
    assert!(
        cpu_secs > 0.0 && cpu_secs < wall * cores,
        "{cpu_secs} s over {wall} s"
    );
    let pct = m(it, "load.cpu").expect("load.cpu");
    assert!(pct > 0.0 && pct <= 100.0 * cores, "{pct}");
}

/// One iteration of the testbed loaded on `path` by the tool `lines` name (added to the load
/// job), which must succeed; its result.
fn tool_run(name: &str, path: &str, lines: &str) -> Value {
    let dir = temp_dir(&format!("tool-{name}"));
    let toml = with_load(&config(free_port(), "", path, ""), lines);
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let json = json.expect("a result");
    assert!(iterations(&json)[0]["error"].is_null(), "{t}");
    json
}

#[test]
fn wrk_drives_a_run_counted_like_the_servers_own_count() {
    if !installed("wrk") {
        return skip("needs wrk");
    }
    let json = tool_run("wrk", "/plaintext", "tool = \"wrk\"");
    let it = &iterations(&json)[0];
    assert!(it["load"].is_null(), "the engine did not run");
    let tool = &it["tool"];
    assert_eq!(tool["tool"], "wrk");
    assert!(
        tool["version"].as_str().unwrap().starts_with("wrk "),
        "{tool}"
    );
    let command: Vec<&str> = tool["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(command[..3], ["wrk", "-c", "8"], "{command:?}");
    assert!(command.contains(&"--latency"));
    let output = tool["output"].as_str().unwrap();
    assert!(
        output.contains("requests in") && output.contains("Requests/sec:"),
        "{output}"
    );
    // The figures are read from that output: wrk's own count is load.requests.
    let said = output
        .lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .map(|(n, _)| n.parse::<f64>().unwrap());
    assert_eq!(said, m(it, "load.requests"));
    for id in [
        "load.rps",
        "load.latency.p50",
        "load.latency.p99",
        "load.latency.max",
    ] {
        assert!(m(it, id).is_some_and(|v| v > 0.0), "{id}");
    }
    for absent in [
        "load.latency.p999",
        "load.errors.parse",
        "load.errors.closed",
    ] {
        assert!(m(it, absent).is_none(), "{absent}: wrk has no such figure");
    }
    check_against_server(it, "/plaintext", 8.0);
    check_cpu(it);
    assert_schema(&json);
    // The warmup run's requests reached the server outside the window.
    let warm = tool["warmup"]["requests"].as_f64().unwrap();
    assert!(warm > 0.0);
    assert!(it["outside_window"]["requests"].as_f64().unwrap() >= warm + 1.0);
}

#[test]
fn wrk2_drives_an_open_model_run_counted_like_the_servers_own_count() {
    if !installed("wrk2") {
        return skip("needs wrk2");
    }
    let json = tool_run("wrk2", "/plaintext", "tool = \"wrk2\"\nrate = 2000");
    let it = &iterations(&json)[0];
    let line = it["tool"]["command"].to_string();
    assert!(line.contains("\"-R\",\"2000\""), "{line}");
    for id in ["load.rps", "load.latency.p50", "load.latency.p999"] {
        assert!(m(it, id).is_some_and(|v| v > 0.0), "{id}");
    }
    eprintln!(
        "wrk2 counted {:?} measured + {} warmup (+1 first request); the server answered {} on \
         /plaintext",
        m(it, "load.requests"),
        it["tool"]["warmup"]["requests"],
        server_stats(it)["by_path"]["/plaintext"]
    );
    check_against_server(it, "/plaintext", 8.0);
    check_cpu(it);
}

#[test]
fn h2load_drives_a_run_with_its_own_warmup() {
    if !installed("h2load") {
        return skip("needs h2load");
    }
    let json = tool_run("h2load", "/json", "tool = \"h2load\"\nargs = [\"--h1\"]");
    let it = &iterations(&json)[0];
    let tool = &it["tool"];
    assert!(tool["warmup"].is_null(), "h2load warms up itself: {tool}");
    let line = tool["command"].to_string();
    assert!(
        line.contains("--warm-up-time") && line.contains("--h1"),
        "{line}"
    );
    assert!(m(it, "load.latency.mean").is_some());
    assert!(
        m(it, "load.latency.p99").is_none(),
        "h2load prints no percentiles"
    );
    // h2load's warmup requests are not in its summary: the server saw the measured ones and
    // at most what the warmup sent, so only the lower bound holds here.
    let served = server_stats(it)["by_path"]["/json"].as_f64().unwrap();
    let requests = m(it, "load.requests").unwrap();
    assert!(
        served >= requests + 1.0 && requests > 100.0,
        "{served} vs {requests}"
    );
    check_cpu(it);
}

#[test]
fn oha_drives_a_run_counted_like_the_servers_own_count() {
    if !installed("oha") {
        return skip("needs oha");
    }
    let json = tool_run("oha", "/plaintext", "tool = \"oha\"");
    let it = &iterations(&json)[0];
    for id in ["load.rps", "load.latency.p50", "load.latency.p999"] {
        assert!(m(it, id).is_some_and(|v| v > 0.0), "{id}");
    }
    check_against_server(it, "/plaintext", 8.0);
    check_cpu(it);
}

/// Whether the `bombardier` on PATH is the HTTP benchmarking tool: Debian's package of that
/// name is a terminal game, which prints no `bombardier version …` (and never exits by itself).
fn http_bombardier() -> bool {
    if !installed("bombardier") {
        return false;
    }
    let Ok(mut child) = std::process::Command::new("bombardier")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        return false;
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while child.try_wait().ok().flatten().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    text(&out).contains("bombardier version")
}

#[test]
fn bombardier_drives_a_run_counted_like_the_servers_own_count() {
    if !http_bombardier() {
        return skip("needs bombardier");
    }
    let json = tool_run("bombardier", "/plaintext", "tool = \"bombardier\"");
    let it = &iterations(&json)[0];
    let tool = &it["tool"];
    assert!(
        tool["version"]
            .as_str()
            .unwrap()
            .starts_with("bombardier version"),
        "{tool}"
    );
    // Its own count, from its JSON result: every status class summed.
    let output = tool["output"].as_str().unwrap();
    let doc: Value = serde_json::from_str(&output[output.find('{').unwrap()..]).unwrap();
    let said: f64 = ["req1xx", "req2xx", "req3xx", "req4xx", "req5xx", "others"]
        .iter()
        .map(|k| doc["result"][k].as_f64().unwrap())
        .sum();
    assert_eq!(Some(said), m(it, "load.requests"));
    for id in [
        "load.rps",
        "load.latency.mean",
        "load.latency.p50",
        "load.latency.p99",
        "load.latency.max",
        "load.throughput",
    ] {
        assert!(m(it, id).is_some_and(|v| v > 0.0), "{id}");
    }
    eprintln!(
        "bombardier counted {said} measured + {} warmup (+1 first request); the server \
         answered {} on /plaintext",
        tool["warmup"]["requests"],
        server_stats(it)["by_path"]["/plaintext"]
    );
    check_against_server(it, "/plaintext", 8.0);
    check_cpu(it);
    assert_schema(&json);
}

/// A folder holding only `sh` (rigor starts the application through it): a PATH without any
/// load tool.
fn path_without_tools(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let _ = std::os::unix::fs::symlink("/bin/sh", bin.join("sh"));
    bin
}

#[test]
fn a_missing_tool_fails_the_iteration_naming_it() {
    let dir = temp_dir("tool-missing");
    let port = free_port();
    let toml = with_load(&config(port, "", "/plaintext", ""), "tool = \"wrk\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "1"]].concat())
        .env("PATH", path_without_tools(&dir))
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let json = result(&dir);
    let it = &iterations(&json)[0];
    let error = it["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "wrk is not installed: `wrk` is not on PATH (Debian/Ubuntu: apt-get install wrk)"
        ),
        "{error}"
    );
    assert!(t.contains("wrk is not installed"), "{t}");
    assert!(processes_with(&format!("--port {port} ")).is_empty());
}

#[test]
fn a_bombardier_that_is_not_the_http_tool_is_refused_naming_what_it_is() {
    let dir = temp_dir("tool-not-bombardier");
    let port = free_port();
    let toml = with_load(&config(port, "", "/plaintext", ""), "tool = \"bombardier\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    // What Debian's `bombardier` package installs is a game; a stand-in that says so.
    let bin = path_without_tools(&dir);
    let game = bin.join("bombardier");
    std::fs::write(&game, "#!/bin/sh\necho 'The GNU Bombing utility'\n").unwrap();
    std::fs::set_permissions(&game, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "1"]].concat())
        .env("PATH", &bin)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let json = result(&dir);
    let error = iterations(&json)[0]["error"].as_str().unwrap().to_string();
    assert!(
        error.starts_with(
            "`bombardier` on PATH is not the HTTP benchmarking tool: for --version it printed \
             `The GNU Bombing utility`"
        ),
        "{error}"
    );
    assert!(error.contains("package is a game"), "{error}");
}

#[test]
fn a_tool_that_exits_non_zero_fails_the_iteration_with_its_output() {
    if !installed("wrk") {
        return skip("needs wrk");
    }
    let dir = temp_dir("tool-fails");
    let port = free_port();
    let toml = with_load(
        &config(port, "", "/plaintext", ""),
        "tool = \"wrk\"\nargs = [\"--no-such-flag\"]",
    )
    .replacen("warmup = \"1s\"", "warmup = \"0s\"", 1);
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 1);
    let it = &iterations(json.as_ref().unwrap())[0];
    let error = it["error"].as_str().unwrap();
    assert!(
        error.starts_with("wrk exited with exit status: 1: `wrk -c 8"),
        "{error}"
    );
    assert!(
        error.contains("--no-such-flag") && error.contains("Usage: wrk"),
        "{error}"
    );
    // What it printed is kept whole in the result.
    assert!(
        it["tool"]["output"]
            .as_str()
            .unwrap()
            .contains("Usage: wrk"),
        "{t}"
    );
}

#[test]
fn keys_a_tool_cannot_honour_are_config_errors() {
    let dir = temp_dir("tool-keys");
    let port = free_port();
    let toml = with_load(
        &config(port, "", "/plaintext", ""),
        "tool = \"wrk\"\nrate = 100\npipeline = 4",
    );
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 2);
    assert!(json.is_none());
    assert!(t.contains("jobs.load.rate: wrk has no rate"), "{t}");
    assert!(
        t.contains("jobs.load.pipeline: wrk has no pipelining flag"),
        "{t}"
    );
    let toml = with_load(&config(port, "", "/plaintext", ""), "tool = \"ab\"");
    let (t, _) = run_exit(&dir, &toml, &["-i", "1"], 2);
    assert!(
        t.contains(
            "jobs.load.tool: unknown load tool `ab` (known: wrk, wrk2, bombardier, h2load, oha)"
        ),
        "{t}"
    );
}

#[test]
fn cross_check_runs_engine_and_tool_interleaved_and_compares_them() {
    if !installed("wrk") {
        return skip("needs wrk");
    }
    let dir = temp_dir("tool-cross");
    let port = free_port();
    let toml = with_load(&config(port, "", "/plaintext", ""), "");
    let (t, json) = run_exit(
        &dir,
        &toml,
        &["-i", "2", "--allow-inconclusive", "--cross-check", "wrk"],
        0,
    );
    let json = json.unwrap();
    let rows = json["rows"].as_array().unwrap();
    let variants: Vec<&str> = rows
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["engine", "wrk"], "{t}");
    // The engine's rows ran the engine, the tool's the tool.
    for it in rows[0]["iterations"].as_array().unwrap() {
        assert!(it["load"].is_object() && it["tool"].is_null());
    }
    for it in rows[1]["iterations"].as_array().unwrap() {
        assert!(it["load"].is_null() && it["tool"]["tool"] == "wrk");
    }
    // Interleaved: each round holds one iteration of each, in consecutive sequence numbers.
    let mut seq: Vec<(u64, &str)> = rows
        .iter()
        .flat_map(|r| {
            r["iterations"].as_array().unwrap().iter().map(move |it| {
                (
                    it["sequence"].as_u64().unwrap(),
                    r["variant"].as_str().unwrap(),
                )
            })
        })
        .collect();
    seq.sort();
    assert_ne!(seq[0].1, seq[1].1, "{seq:?}");
    assert_ne!(seq[2].1, seq[3].1, "{seq:?}");
    let c = &json["cross_check"];
    assert_eq!(c["tool"], "wrk");
    let rps = c["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["measurement"] == "load.rps")
        .unwrap_or_else(|| panic!("no load.rps finding: {c}"));
    assert!(rps["engine_median"].as_f64().unwrap() > 0.0);
    assert!(rps["tool_median"].as_f64().unwrap() > 0.0);
    assert!(["agree", "disagree", "undecided"].contains(&rps["outcome"].as_str().unwrap()));
    assert_eq!(
        c["engine_only"],
        serde_json::json!(["load.latency.p999"]),
        "{c}"
    );
    assert!(t.contains("cross-check: wrk against the engine"), "{t}");
    assert_schema(&json);
    assert!(t.contains("only engine reports: load.latency.p999"), "{t}");
}

#[test]
fn cross_check_refuses_what_it_cannot_compare() {
    let dir = temp_dir("tool-cross-bad");
    let port = free_port();
    let toml = with_load(&config(port, "", "/plaintext", ""), "rate = 500")
        + "\n[scenarios.s.variants.a]\n[scenarios.s.variants.b]\n";
    let (t, _) = run_exit(&dir, &toml, &["-i", "1", "--cross-check", "wrk"], 2);
    assert!(
        t.contains("--cross-check wrk: scenario `s` compares its own variants (a, b)"),
        "{t}"
    );
    assert!(t.contains("`rate`: wrk has no rate"), "{t}");
    let (t, _) = run_exit(&dir, &toml, &["-i", "1", "--cross-check", "ab"], 2);
    assert!(t.contains("--cross-check: unknown load tool `ab`"), "{t}");
}

/// Starts `rigor run` on a 30 s wrk load, waits until wrk runs, sends `signal` to rigor, and
/// returns rigor's exit status once it is gone, with the wrk processes still alive 5 s later.
fn signal_during_wrk(name: &str, signal: i32) -> (std::process::ExitStatus, Vec<i32>) {
    let dir = temp_dir(name);
    let port = free_port();
    let toml = with_load(&config(port, "", "/plaintext", ""), "tool = \"wrk\"")
        .replacen("duration = \"2s\"", "duration = \"30s\"", 1)
        .replacen("warmup = \"1s\"", "warmup = \"0s\"", 1);
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let mut child = rigor_command(&dir, &[RUN, &["-i", "1"]].concat())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("127.0.0.1:{port}/plaintext");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while processes_with(&url).is_empty() {
        assert!(std::time::Instant::now() < deadline, "wrk never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill only sends a signal, to the rigor this test started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !processes_with(&url).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let left = processes_with(&url);
    for pid in &left {
        // SAFETY: only the processes this test's rigor started, found by their unique URL.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    (status, left)
}

#[test]
fn ctrl_c_and_a_killed_rigor_leave_no_tool_running() {
    if !installed("wrk") {
        return skip("needs wrk");
    }
    let (status, left) = signal_during_wrk("tool-sigint", libc::SIGINT);
    assert!(
        left.is_empty(),
        "wrk outlived an interrupted rigor: {left:?}"
    );
    assert_eq!(
        status.code(),
        Some(1),
        "an interrupted run exits 1 after writing its result"
    );
    let (_, left) = signal_during_wrk("tool-sigkill", libc::SIGKILL);
    assert!(left.is_empty(), "wrk outlived a killed rigor: {left:?}");
}

#[test]
fn rigor_load_with_a_tool_prints_its_output_and_writes_its_reading() {
    if !installed("wrk") {
        return skip("needs wrk");
    }
    let dir = temp_dir("tool-load-cli");
    let port = free_port();
    let mut server = std::process::Command::new(hello_server())
        .args(["--port", &port.to_string(), "--threads", "1"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/plaintext");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the testbed never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = rigor(
        &dir,
        &[
            "load", "--tool", "wrk", "-c", "4", "-d", "1s", &url, "--json", "out.json",
        ],
    );
    let refused = rigor(&dir, &["load", "--tool", "wrk", "--rate", "5", &url]);
    let _ = server.kill();
    let _ = server.wait();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("Requests/sec:") && t.contains("rigor read from wrk:"),
        "{t}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(doc["schema"], "rigor.load.v1");
    assert!(doc["report"].is_null());
    assert!(doc["measurements"]["load.rps"].as_f64().unwrap() > 0.0);
    assert!(doc["measurements"]["load.cpu"].as_f64().unwrap() > 0.0);
    assert!(doc["measurements"].get("load.latency.p999").is_none());
    assert!(doc["tool"]["output"]
        .as_str()
        .unwrap()
        .contains("requests in"));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("--rate: wrk has no rate"),
        "{}",
        text(&refused)
    );
}

/// A folder put first on PATH holding a `wrk` that is the shell script `body` (answering `-v`
/// like wrk); nothing listens at the URL the tests give it.
fn fake_wrk(dir: &Path, body: &str) -> std::ffi::OsString {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrk = bin.join("wrk");
    std::fs::write(
        &wrk,
        format!("#!/bin/sh\nif [ \"$1\" = -v ]; then echo 'wrk 4.1.0'; exit 1; fi\n{body}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&wrk, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
    std::env::join_paths(paths).unwrap()
}

#[test]
fn a_tool_that_never_exits_is_stopped_after_its_run_and_a_grace() {
    let dir = temp_dir("tool-hangs");
    let port = free_port();
    let marker = format!("rigor-test-hung-tool-{port}");
    // Ignores SIGINT and SIGTERM, as a hung tool may; only the group's SIGKILL ends it.
    let path = fake_wrk(
        &dir,
        &format!("echo 'Running 1s test'\ntrap '' INT TERM\nsh -c 'sleep 300; : {marker}' &\nwait"),
    );
    let url = format!("http://127.0.0.1:{port}/");
    let mut child = rigor_command(
        &dir,
        &["load", "--tool", "wrk", "-c", "1", "-d", "1s", &url],
    )
    .env("PATH", path)
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let started = std::time::Instant::now();
    // 1 s run, a 2 s request timeout, 10 s of grace, 2 s between SIGINT and SIGKILL.
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(45) {
            let _ = child.kill();
            for pid in processes_with(&marker) {
                // SAFETY: only the processes this test's fake tool started, found by marker.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            panic!("rigor load still waited on a hung wrk after 45 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("wrk was still running 13 s after it started") && t.contains("Running 1s test"),
        "{t}"
    );
    assert!(
        processes_with(&marker).is_empty(),
        "the hung tool's child outlived it"
    );
}

#[test]
fn rigor_load_kills_what_a_tool_left_running() {
    let dir = temp_dir("tool-daemon");
    let port = free_port();
    let marker = format!("rigor-test-tool-daemon-{port}");
    let summary = workspace().join("crates/config/src/tools/fixtures/wrk_latency.txt");
    // A child in a session of its own: out of the tool's process group. The tool lives as long
    // as the 2.11 s its summary says, which is a whole run of the 1 s it is given.
    let path = fake_wrk(
        &dir,
        &format!(
            "setsid sh -c 'sleep 300; : {marker}' </dev/null >/dev/null 2>&1 &\n\
             sleep 2\ncat {}",
            summary.display()
        ),
    );
    let url = format!("http://127.0.0.1:{port}/");
    let out = rigor_command(
        &dir,
        &["load", "--tool", "wrk", "-c", "1", "-d", "1s", &url],
    )
    .env("PATH", path)
    .output()
    .unwrap();
    let t = text(&out);
    let left = processes_with(&marker);
    for pid in &left {
        // SAFETY: only the process this test's fake tool started, found by its marker.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        left.is_empty(),
        "the tool's setsid child outlived rigor load: {left:?}\n{t}"
    );
    assert!(
        t.contains("warning: [left_behind] wrk left processes running"),
        "{t}"
    );
}

#[test]
fn a_warmup_count_no_run_can_reach_is_left_out_not_added() {
    let dir = temp_dir("tool-huge-count");
    let port = free_port();
    let summary = workspace().join("crates/config/src/tools/fixtures/wrk_latency.txt");
    // A summary whose count is past what a u64 holds (its rate agreeing with it), from the
    // warmup run and the measured one, each living as long as its summary says it ran.
    let path = fake_wrk(
        &dir,
        &format!(
            "sleep 2\nsed -e 's/^  77695 requests in/  99999999999999999999999999 requests in/' \
             -e 's/^Requests\\/sec:.*/Requests\\/sec: 47393364928909952606635071.09/' {}",
            summary.display()
        ),
    );
    let toml = with_load(&config(port, "", "/plaintext", ""), "tool = \"wrk\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "1"]].concat())
        .env("PATH", path)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(!t.contains("panicked"), "{t}");
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = result(&dir);
    let it = &iterations(&json)[0];
    assert!(it["tool"]["warmup"]["requests"].is_null(), "{}", it["tool"]);
    // rigor's own requests only: the warmup's count is unknown, not u64::MAX.
    let outside = it["outside_window"]["requests"].as_u64().unwrap();
    assert!(outside < 10, "{outside}");
    assert!(processes_with(&format!("--port {port} ")).is_empty());
}

#[test]
fn a_cross_check_whose_tool_failed_every_iteration_claims_no_figure_it_lacks() {
    let dir = temp_dir("tool-cross-failed");
    let port = free_port();
    let path = fake_wrk(&dir, "echo 'wrk: unknown option' >&2\nexit 1");
    let toml = with_load(&config(port, "", "/plaintext", ""), "");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let out = rigor_command(
        &dir,
        &[
            RUN,
            &["-i", "1", "--allow-inconclusive", "--cross-check", "wrk"],
        ]
        .concat(),
    )
    .env("PATH", path)
    .output()
    .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let json = result(&dir);
    let c = &json["cross_check"];
    // wrk read nothing, so nothing says it has no figure for load.rps.
    assert_eq!(c["engine_only"], serde_json::json!([]), "{c}");
    assert!(t.contains("nothing to compare"), "{t}");
    assert!(!t.contains("only engine reports"), "{t}");
    assert_schema(&json);
}

#[test]
fn a_summary_of_a_run_longer_than_the_tool_ran_is_refused() {
    let dir = temp_dir("tool-replayed");
    let port = free_port();
    let summary = workspace().join("crates/config/src/tools/fixtures/wrk_latency.txt");
    // A recorded summary of a 2.11 s run, printed at once.
    let path = fake_wrk(&dir, &format!("cat {}", summary.display()));
    let url = format!("http://127.0.0.1:{port}/");
    let out = rigor_command(
        &dir,
        &["load", "--tool", "wrk", "-c", "1", "-d", "1s", &url],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("wrk says its run lasted 2.11 s") && t.contains("not a record of this run"),
        "{t}"
    );
    // In `rigor run` the iteration fails the same way, with no figure recorded.
    let toml = with_load(&config(port, "", "/plaintext", ""), "tool = \"wrk\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "1"]].concat())
        .env("PATH", &path)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let json = result(&dir);
    let it = &iterations(&json)[0];
    assert!(
        it["error"]
            .as_str()
            .unwrap()
            .contains("not a record of this run"),
        "{it}"
    );
    assert!(m(it, "load.rps").is_none(), "{it}");
}

#[test]
fn a_tool_whose_figures_disagree_or_whose_run_was_cut_short_is_refused() {
    let dir = temp_dir("tool-inconsistent");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let summary = |requests: &str, secs: &str, rps: &str| {
        format!(
            "echo 'Running 1s test @ {url}'\necho '  1 threads and 1 connections'\n\
             echo '  {requests} requests in {secs}, 120.00KB read'\n\
             echo 'Requests/sec: {rps}'\necho 'Transfer/sec:    120.00KB'"
        )
    };
    // A whole run whose rate is not its requests over its duration (it lives long enough for
    // the 1 s of `rigor load` and the whole seconds wrk is given by `rigor run`).
    let lying = fake_wrk(
        &dir,
        &format!("sleep 2\n{}", summary("1000", "1.00s", "999999.00")),
    );
    // Stopped 0.1 s into the 1 s run it was given.
    let short = fake_wrk(
        &temp_dir("tool-cut-short"),
        &format!("sleep 0.1\n{}", summary("77695", "0.00s", "77695.00")),
    );
    for (path, said) in [
        (
            &lying,
            "1000 requests in 1.00 s (1000.00/s) but a rate of 999999.00/s",
        ),
        (&short, "short of the 1.00 s run it was given"),
    ] {
        let out = rigor_command(
            &dir,
            &["load", "--tool", "wrk", "-c", "1", "-d", "1s", &url],
        )
        .env("PATH", path)
        .output()
        .unwrap();
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{t}");
        assert!(t.contains(said), "{said} not in\n{t}");
    }
    // In `rigor run` the iteration fails the same way, with no figure recorded.
    let toml = with_load(&config(port, "", "/plaintext", ""), "tool = \"wrk\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "1"]].concat())
        .env("PATH", &lying)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let json = result(&dir);
    let it = &iterations(&json)[0];
    assert!(
        it["error"]
            .as_str()
            .unwrap()
            .contains("disagree with each other"),
        "{it}"
    );
    assert!(m(it, "load.rps").is_none(), "{it}");
}
