//! Load from other hosts over SSH: two load hosts (network namespaces with their own sshd) share
//! the load on the testbed in the root namespace. Their merged count is what the server
//! answered, the merged latency sits between theirs, each host's own figures and environment are
//! kept, a transport that dies mid-run fails that iteration naming the host and leaves nothing
//! running in any namespace, and an unreachable host is a clear error.

use crate::common;
use crate::hosts_support;
use common::*;
use hosts_support::*;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The testbed on every address of the root namespace, loaded from `hosts` through the lab's ssh
/// config (profile `lab`).
fn lab_config(lab: &Lab, port: u16, hosts: &[&str], duration: &str) -> String {
    let mut toml = format!(
        r#"
[jobs.app]
command = "{bin} --port {port} --threads 2 --host 0.0.0.0"
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "10s" }}
stop_timeout = "2s"

[jobs.load]
url = "http://{root}:{port}/json"
connections = 8
warmup = "300ms"
duration = "{duration}"

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

fn host<'a>(it: &'a Value, name: &str) -> &'a Value {
    &it["load"]["hosts"][name]
}

#[test]
#[ignore = "needs root"]
fn two_load_hosts_share_the_load_and_add_up_to_what_the_server_answered() {
    let Some(lab) = Lab::or_skip(&["l1", "l2"]) else {
        return;
    };
    let dir = temp_dir("hosts-share");
    let port = free_port();
    let toml = lab_config(&lab, port, &["l1", "l2"], "1s");
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "2"], 0);
    let json = json.expect("a result");
    for it in iterations(&json) {
        assert!(it["error"].is_null(), "{t}");
        let (r1, r2) = (
            m(it, "load.hosts.l1.requests").expect("l1's share"),
            m(it, "load.hosts.l2.requests").expect("l2's share"),
        );
        let merged = m(it, "load.requests").unwrap();
        assert!(r1 > 0.0 && r2 > 0.0, "{t}");
        assert_eq!(merged, r1 + r2, "merged requests are the sum of the hosts'");
        let rps = m(it, "load.rps").unwrap();
        let (p1, p2) = (
            m(it, "load.hosts.l1.rps").unwrap(),
            m(it, "load.hosts.l2.rps").unwrap(),
        );
        assert!((rps - (p1 + p2)).abs() < 1e-6 * rps, "{rps} vs {p1} + {p2}");

        // What the server answered on /json: the window's requests, those outside it (warmup,
        // in flight at the end) and rigor's own first request.
        let stats = server_stats(it);
        let served = stats["by_path"]["/json"].as_f64().unwrap();
        let load = &it["load"];
        let outside = load["outside_window"]["requests"].as_f64().unwrap();
        let in_flight = load["in_flight_at_end"].as_f64().unwrap();
        let sent = merged + outside + 1.0;
        assert!(
            served <= sent && served >= sent - in_flight,
            "server answered {served}; hosts: {merged} measured + {outside} outside (+1 first \
             request), {in_flight} in flight at the end"
        );

        // A percentile of the union lies between the parts' own.
        let p99 = m(it, "load.latency.p99").unwrap();
        let (a, b) = (
            m(it, "load.hosts.l1.latency.p99").unwrap(),
            m(it, "load.hosts.l2.latency.p99").unwrap(),
        );
        assert!(
            p99 >= a.min(b) - 1e-9 && p99 <= a.max(b) + 1e-9,
            "{p99} not in [{a}, {b}]"
        );
        assert_eq!(
            load["latency"]["count"].as_f64().unwrap(),
            merged,
            "every measured response is in the merged histogram"
        );

        // Each host ran in its own namespace (its hostname there) with 4 of the 8 connections.
        for name in ["l1", "l2"] {
            let h = host(it, name);
            assert_eq!(h["environment"]["hostname"], name, "{h}");
            assert_eq!(h["report"]["connections"], 4, "{h}");
            assert!(h["clock_rtt_ms"].as_f64().unwrap() >= 0.0);
            // It reached the server over the lab's network, not on itself.
            assert_eq!(h["network"]["path"], "other host", "{h}");
            assert_eq!(
                h["network"]["target"],
                format!("{}:{port}", lab.root_addr()),
                "{h}"
            );
        }
    }
    for name in ["l1", "l2"] {
        assert!(
            lab.pids_in(name)
                .iter()
                .all(|&pid| !cmdline(pid).contains("agent")),
            "an agent outlived the run on {name}"
        );
    }
}

#[test]
#[ignore = "needs root"]
fn a_transport_that_dies_mid_run_fails_naming_the_host_and_leaves_nothing_running() {
    let Some(lab) = Lab::or_skip(&["k1", "k2"]) else {
        return;
    };
    let dir = temp_dir("hosts-die");
    let port = free_port();
    std::fs::write(
        dir.join("rigor.toml"),
        lab_config(&lab, port, &["k1", "k2"], "4s"),
    )
    .unwrap();
    let child = spawn_lab_run(&dir, 1);
    // Once k2's agent runs, kill it: its ssh session ends under rigor.
    let deadline = Instant::now() + Duration::from_secs(60);
    let agent = loop {
        if let Some(pid) = lab
            .pids_in("k2")
            .into_iter()
            .find(|&p| cmdline(p).contains("agent --stdio") && !cmdline(p).starts_with("sh"))
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "no agent started on k2");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(1200));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(agent as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("host k2"), "the error names the host: {t}");
    let json = result(&dir);
    let it = &iterations(&json)[0];
    assert!(
        it["error"].as_str().unwrap_or("").contains("host k2"),
        "{}",
        it["error"]
    );
    std::thread::sleep(Duration::from_millis(500));
    for name in ["k1", "k2"] {
        let left: Vec<String> = lab
            .pids_in(name)
            .into_iter()
            .map(cmdline)
            .filter(|c| !c.contains("sshd"))
            .collect();
        assert!(left.is_empty(), "left running on {name}: {left:?}");
    }
    // Nor an ssh client of this lab here (other tests run agents of their own meanwhile).
    let config = lab.ssh_config_path().display().to_string();
    assert!(processes_with(&config).is_empty());
}

#[test]
#[ignore = "needs root"]
fn a_delay_on_one_load_hosts_link_shows_in_its_latency_and_not_the_others() {
    let Some(lab) = Lab::or_skip(&["n1", "n2"]) else {
        return;
    };
    if let Err(why) = lab.delay("n1", 20) {
        assert!(why.needs_iptables(), "{why}");
        println!("test-skip: needs iptables: a_delay_on_one_load_hosts_link_shows_in_its_latency");
        return;
    }
    let dir = temp_dir("hosts-delay");
    let port = free_port();
    let toml = lab_config(&lab, port, &["n1", "n2"], "1s");
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "1"], 0);
    let it = &iterations(json.as_ref().expect("a result"))[0];
    assert!(it["error"].is_null(), "{t}");
    let (d, n) = (
        m(it, "load.hosts.n1.latency.p50").unwrap(),
        m(it, "load.hosts.n2.latency.p50").unwrap(),
    );
    // Every request n1 sends waits 20 ms on its way out; n2's do not.
    assert!(d >= 20.0, "n1's median {d} ms under a 20 ms delay");
    assert!(n < 20.0, "n2's median {n} ms without one");
    // The merged median lies between the two hosts' own.
    let p50 = m(it, "load.latency.p50").unwrap();
    assert!(p50 >= n - 1e-9 && p50 <= d + 1e-9, "{n} <= {p50} <= {d}");
    lab.delay("n1", 0).unwrap();
}

#[test]
#[ignore = "needs root"]
fn a_url_only_the_load_hosts_resolve_is_loaded_from_them() {
    let Some(lab) = Lab::or_skip(&["r1"]) else {
        return;
    };
    // A name only r1 knows: `ip netns exec` gives its commands /etc/netns/NS/hosts as
    // /etc/hosts, and that is r1's transport here.
    let name = format!("rigor-only-r1-{}", std::process::id());
    let etc = std::path::PathBuf::from("/etc/netns").join(lab.netns("r1"));
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::write(
        etc.join("hosts"),
        format!("127.0.0.1 localhost\n{} {name}\n", lab.root_addr()),
    )
    .unwrap();
    let dir = temp_dir("hosts-name");
    let port = free_port();
    let toml = lab_config(&lab, port, &["r1"], "1s")
        .replace(
            &format!("http://{}:{port}/json", lab.root_addr()),
            &format!("http://{name}:{port}/json"),
        )
        .replace(
            &format!(
                "ssh = \"r1\"\noptions = [\"-F\", {}]",
                toml_string(&lab.ssh_config_path().display().to_string())
            ),
            &format!("transport = \"ip netns exec {}\"", lab.netns("r1")),
        );
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "1"], 0);
    let _ = std::fs::remove_dir_all(&etc);
    let it = &iterations(json.as_ref().expect("a result"))[0];
    assert!(it["error"].is_null(), "{t}");
    assert!(m(it, "app.first_request").unwrap() > 0.0, "sent from r1");
    let merged = m(it, "load.requests").unwrap();
    let served = server_stats(it)["by_path"]["/json"].as_f64().unwrap();
    let load = &it["load"];
    let outside = load["outside_window"]["requests"].as_f64().unwrap();
    let in_flight = load["in_flight_at_end"].as_f64().unwrap();
    let sent = merged + outside + 1.0;
    assert!(
        served <= sent && served >= sent - in_flight,
        "server answered {served}; r1: {merged} + {outside} outside + the first request"
    );
}

#[test]
#[ignore = "needs root"]
fn a_load_host_that_would_load_itself_is_refused_naming_it() {
    let Some(lab) = Lab::or_skip(&["s1"]) else {
        return;
    };
    let dir = temp_dir("hosts-self");
    let port = free_port();
    // 127.0.0.1 is this machine here, but s1's own loopback there.
    let toml = lab_config(&lab, port, &["s1"], "1s").replace(
        &format!("http://{}:{port}/json", lab.root_addr()),
        &format!("http://127.0.0.1:{port}/json"),
    );
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "1"], 1);
    let it = &iterations(json.as_ref().expect("a result"))[0];
    let e = it["error"].as_str().unwrap_or_default();
    assert!(
        e.contains("load host s1") && e.contains("loopback") && e.contains("would not reach"),
        "{e}\n{t}"
    );
}

#[test]
fn an_unreachable_load_host_is_an_error_naming_it() {
    let dir = temp_dir("hosts-unreachable");
    let port = free_port();
    let closed = free_port();
    let toml = config(port, "", "/json", "")
        + &format!(
            "\n[hosts.gone]\nssh = \"root@127.0.0.1\"\nport = {closed}\n\
             options = [\"-o\", \"ConnectTimeout=3\", \"-o\", \"StrictHostKeyChecking=no\"]\n\
             [profiles.lab]\nload = {{ hosts = [\"gone\"] }}\n"
        );
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "1"], 1);
    assert!(t.contains("host gone"), "{t}");
    let it = &iterations(json.as_ref().expect("a result"))[0];
    let e = it["error"].as_str().unwrap_or("");
    assert!(e.contains("host gone") && e.contains("ssh"), "{e}");
    assert!(processes_with(&format!("-p {closed} ")).is_empty());
}

fn cmdline(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ")
}
