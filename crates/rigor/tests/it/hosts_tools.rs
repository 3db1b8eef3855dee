//! A load tool on load hosts over SSH: two load hosts (network namespaces with their own sshd)
//! each run wrk on their share of the connections against the testbed in the root namespace.
//! Their summed count is what the server answered, each host's own figures are kept, merged
//! percentiles are absent with a warning saying why, a tool missing on a host is an error
//! naming the host and how to install the tool, and a transport that dies mid-run fails the
//! iteration naming the host and leaves no tool running on any host.

use crate::common;
use crate::hosts_support;
use common::*;
use hosts_support::*;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The testbed on every address of the root namespace, loaded by `tool` (`lines` added to the
/// load job) from `hosts` through the lab's ssh config (profile `lab`).
fn lab_config(lab: &Lab, port: u16, hosts: &[&str], lines: &str) -> String {
    let mut toml = format!(
        r#"
[jobs.app]
command = "{bin} --port {port} --threads 2 --host 0.0.0.0"
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "10s" }}
stop_timeout = "2s"

[jobs.load]
url = "http://{root}:{port}/json"
connections = 8
threads = 2
warmup = "1s"
duration = "2s"
{lines}

[scenarios.s]
application = "app"
load = "load"

[profiles.lab]
load = {{ hosts = [{names}] }}
"#,
        bin = hello_server().display(),
        root = lab.root_addr(),
        names = hosts
            .iter()
            .map(|h| format!("\"{h}\""))
            .collect::<Vec<_>>()
            .join(", "),
    );
    for h in hosts {
        toml.push_str(&format!(
            "\n[hosts.{h}]\nssh = \"{h}\"\noptions = [\"-F\", {}]\n",
            toml_string(&lab.ssh_config_path().display().to_string())
        ));
    }
    toml
}

fn cmdline(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ")
}

#[test]
#[ignore = "needs root"]
fn wrk_on_two_load_hosts_adds_up_to_what_the_server_answered() {
    if !installed("wrk") {
        return skip("needs wrk");
    }
    let Some(lab) = Lab::or_skip(&["w1", "w2"]) else {
        return;
    };
    let dir = temp_dir("hosts-wrk");
    let port = free_port();
    let toml = lab_config(&lab, port, &["w1", "w2"], "tool = \"wrk\"");
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "2"], 0);
    let json = json.expect("a result");
    for it in iterations(&json) {
        assert!(it["error"].is_null(), "{t}");
        assert!(it["load"].is_null(), "the engine did not run: {t}");
        let tool = &it["tool"];
        assert_eq!(tool["tool"], "wrk");
        let (r1, r2) = (
            m(it, "load.hosts.w1.requests").expect("w1's share"),
            m(it, "load.hosts.w2.requests").expect("w2's share"),
        );
        let merged = m(it, "load.requests").unwrap();
        assert!(r1 > 100.0 && r2 > 100.0, "{t}");
        assert_eq!(merged, r1 + r2, "merged requests are the sum of the hosts'");
        let rps = m(it, "load.rps").unwrap();
        let (p1, p2) = (
            m(it, "load.hosts.w1.rps").unwrap(),
            m(it, "load.hosts.w2.rps").unwrap(),
        );
        assert!((rps - (p1 + p2)).abs() < 1e-6 * rps, "{rps} vs {p1} + {p2}");

        // What the server answered on /json: each host's measured and warmup runs, rigor's first
        // request, and at most one request per connection per run still in flight when wrk
        // stopped (counted by the server, not by wrk).
        let served = server_stats(it)["by_path"]["/json"].as_f64().unwrap();
        let warm: f64 = ["w1", "w2"]
            .iter()
            .map(|h| {
                tool["hosts"][h]["report"]["warmup"]["requests"]
                    .as_f64()
                    .unwrap()
            })
            .sum();
        let counted = merged + warm + 1.0;
        eprintln!(
            "server answered {served} on /json; wrk on w1 + w2 counted {r1} + {r2} = {merged} \
             measured, {warm} in the warmup runs, +1 first request = {counted}"
        );
        assert!(
            served >= counted && served <= counted + 2.0 * 8.0,
            "server answered {served}; the hosts' wrk counted {merged} measured + {warm} warmup \
             (+1 first request), up to 8 in flight per run"
        );
        // Outside the window: the warmup runs, the first request (and the readiness checks).
        assert!(it["outside_window"]["requests"].as_f64().unwrap() >= warm + 1.0);

        // Percentiles of the whole load cannot come from two wrk summaries: absent, and said.
        assert!(m(it, "load.latency.p99").is_none(), "never averaged");
        assert!(m(it, "load.latency.mean").is_none(), "never averaged");
        let (x1, x2) = (
            m(it, "load.hosts.w1.latency.max").unwrap(),
            m(it, "load.hosts.w2.latency.max").unwrap(),
        );
        assert_eq!(m(it, "load.latency.max"), Some(x1.max(x2)));
        assert!(m(it, "load.hosts.w1.latency.p99").unwrap() > 0.0);
        let warned = it["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "latency_not_merged");
        assert!(warned, "{}", it["warnings"]);
        assert!(m(it, "load.cpu").unwrap() > 0.0);
        assert!(m(it, "load.hosts.w2.cpu").unwrap() > 0.0);

        // Each host ran wrk there with 4 of the 8 connections and 2 threads.
        for name in ["w1", "w2"] {
            let h = &tool["hosts"][name];
            assert_eq!(h["environment"]["hostname"], name, "{h}");
            assert_eq!(h["network"]["path"], "other host", "{h}");
            let command: Vec<&str> = h["report"]["command"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            assert_eq!(command[..5], ["wrk", "-c", "4", "-t", "2"], "{command:?}");
            assert!(
                h["report"]["output"]
                    .as_str()
                    .unwrap()
                    .contains("Requests/sec:"),
                "{h}"
            );
            assert!(h["report"]["cpu_secs"].as_f64().unwrap() > 0.0);
        }
    }
    assert_schema(&json);
    for name in ["w1", "w2"] {
        let left: Vec<String> = lab
            .pids_in(name)
            .into_iter()
            .map(cmdline)
            .filter(|c| c.contains("agent") || c.starts_with("wrk"))
            .collect();
        assert!(left.is_empty(), "left running on {name}: {left:?}");
    }
}

#[test]
#[ignore = "needs root"]
fn a_tool_missing_on_a_load_host_is_an_error_naming_the_host() {
    if installed("wrk2") {
        return skip("needs a machine without wrk2");
    }
    let Some(lab) = Lab::or_skip(&["x1"]) else {
        return;
    };
    let dir = temp_dir("hosts-no-tool");
    let port = free_port();
    let toml = lab_config(&lab, port, &["x1"], "tool = \"wrk2\"\nrate = 100");
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "1"], 1);
    let it: &Value = &iterations(json.as_ref().expect("a result"))[0];
    let e = it["error"].as_str().unwrap_or_default();
    assert!(
        e.starts_with(
            "host x1: wrk2 is not installed: `wrk2` is not on PATH (build it from giltene/wrk2"
        ),
        "{e}\n{t}"
    );
    assert!(t.contains("host x1: wrk2 is not installed"), "{t}");
}

#[test]
#[ignore = "needs root"]
fn a_transport_that_dies_mid_tool_run_names_the_host_and_leaves_no_tool_running() {
    if !installed("wrk") {
        return skip("needs wrk");
    }
    let Some(lab) = Lab::or_skip(&["d1", "d2"]) else {
        return;
    };
    let dir = temp_dir("hosts-wrk-die");
    let port = free_port();
    let toml = lab_config(&lab, port, &["d1", "d2"], "tool = \"wrk\"")
        .replacen("warmup = \"1s\"", "warmup = \"0s\"", 1)
        .replacen("duration = \"2s\"", "duration = \"20s\"", 1);
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let child = spawn_lab_run(&dir, 1);
    // Once wrk runs on d2, kill d2's agent: its ssh session ends under rigor.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !lab
        .pids_in("d2")
        .into_iter()
        .any(|p| cmdline(p).starts_with("wrk"))
    {
        assert!(Instant::now() < deadline, "wrk never started on d2");
        std::thread::sleep(Duration::from_millis(50));
    }
    let agent = lab
        .pids_in("d2")
        .into_iter()
        .find(|&p| cmdline(p).contains("agent --stdio") && !cmdline(p).starts_with("sh"))
        .expect("d2's agent");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(agent as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let started = Instant::now();
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "rigor waited out the 20 s run: {t}"
    );
    let json = result(&dir);
    let e = iterations(&json)[0]["error"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(e.contains("host d2"), "{e}");
    std::thread::sleep(Duration::from_millis(500));
    for name in ["d1", "d2"] {
        let left: Vec<String> = lab
            .pids_in(name)
            .into_iter()
            .map(cmdline)
            .filter(|c| !c.contains("sshd"))
            .collect();
        assert!(left.is_empty(), "left running on {name}: {left:?}");
    }
}
