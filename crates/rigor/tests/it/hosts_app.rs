//! The application on a host of its own: its sources travel to the host (a network namespace
//! with its own sshd), are built and started there in a cgroup, sampled there, and loaded from
//! two other hosts. The server's own count equals the merged count, the app's PID and cgroup
//! live on its host, its figures and log come back; a crash there, or its transport dying, ends
//! the iteration with an error naming the host and leaves nothing running in any namespace.

use crate::common;
use crate::hosts_support;
use common::*;
use hosts_support::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// A source folder holding the testbed's binary; `build` copies it to the artifact, as a real
/// build would produce one. `marker` names a file that tells the host's copy of it apart.
fn sources(dir: &Path, marker: &str) -> std::path::PathBuf {
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(hello_server(), src.join("hello-server.bin")).unwrap();
    std::fs::write(src.join(marker), "the test's sources").unwrap();
    src
}

/// The application on host `app_host`, the load from `load_hosts` (none: from here).
fn app_config(
    lab: &Lab,
    src: &Path,
    port: u16,
    app_host: &str,
    load_hosts: &[&str],
    flags: &str,
    duration: &str,
) -> String {
    let load_role = if load_hosts.is_empty() {
        String::new()
    } else {
        format!(
            "\nload = {{ hosts = [{}] }}",
            load_hosts
                .iter()
                .map(|h| format!("\"{h}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let mut toml = format!(
        r#"
[jobs.app]
dir = {src}
build = "cp hello-server.bin app && chmod +x app"
artifact = "app"
command = "./app --port {port} --threads 2 --host 0.0.0.0 {flags}"
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "10s" }}
stop_timeout = "2s"

[jobs.load]
url = "http://{addr}:{port}/json"
connections = 8
warmup = "300ms"
duration = "{duration}"

[scenarios.s]
application = "app"
load = "load"

[profiles.lab]
application = {{ host = "{app_host}" }}{load_role}
"#,
        src = toml_string(&src.display().to_string()),
        addr = lab.addr(app_host),
    );
    let mut hosts = vec![app_host];
    hosts.extend(load_hosts);
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

/// The application processes (`./app --port`) in host `name`'s namespace.
fn apps_in(lab: &Lab, name: &str) -> Vec<u32> {
    lab.pids_in(name)
        .into_iter()
        .filter(|&p| cmdline(p).starts_with("./app --port"))
        .collect()
}

/// Removes the host's copies of the test's sources (the agent keeps them for the next run).
fn forget_sources(marker: &str) {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let Some(work) = home.map(|h| h.join(".cache/rigor/work")) else {
        return;
    };
    for e in std::fs::read_dir(&work).into_iter().flatten().flatten() {
        if e.path().join(marker).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

fn nothing_left(lab: &Lab, names: &[&str]) {
    std::thread::sleep(Duration::from_millis(500));
    for name in names {
        let left: Vec<String> = lab
            .pids_in(name)
            .into_iter()
            .map(cmdline)
            .filter(|c| !c.contains("sshd"))
            .collect();
        assert!(left.is_empty(), "left running on {name}: {left:?}");
    }
}

#[test]
#[ignore = "needs root"]
fn the_application_runs_on_its_host_under_load_from_two_others() {
    let Some(lab) = Lab::or_skip(&["a1", "l1", "l2"]) else {
        return;
    };
    let dir = temp_dir("hosts-app");
    // Its own: the tests of this process share one PID, and a host's work dir.
    let marker = format!("marker-hosts-app-{}", std::process::id());
    let src = sources(&dir, &marker);
    let port = free_port();
    std::fs::write(
        dir.join("rigor.toml"),
        app_config(&lab, &src, port, "a1", &["l1", "l2"], "", "1s"),
    )
    .unwrap();
    let mut child = spawn_lab_run(&dir, 2);
    // The application, as the host's namespace sees it: its PID and its cgroup.
    let mut seen: Vec<(u32, String)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(300);
    while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
        for p in apps_in(&lab, "a1") {
            if !seen.iter().any(|(s, _)| *s == p) {
                let cg = std::fs::read_to_string(format!("/proc/{p}/cgroup")).unwrap_or_default();
                seen.push((p, cg));
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("to host a1"),
        "the sources' journey is said: {t}"
    );
    let json = result(&dir);
    let its = iterations(&json);
    assert_eq!(its.len(), 2);
    for it in its {
        assert!(it["error"].is_null(), "{t}");
        let app_pid = it["pid"].as_u64().expect("the app's PID") as u32;
        let (_, cgroup) = seen
            .iter()
            .find(|(p, _)| *p == app_pid)
            .unwrap_or_else(|| panic!("PID {app_pid} never ran in a1's namespace: {seen:?}"));
        assert!(
            cgroup.contains("/rigor-"),
            "not in a cgroup of its own: {cgroup}"
        );
        // The server's own count: what the load hosts measured, plus what rigor sent outside
        // the window (warmup, the first request, readiness), less what was in flight.
        let merged = m(it, "load.requests").unwrap();
        let (r1, r2) = (
            m(it, "load.hosts.l1.requests").unwrap(),
            m(it, "load.hosts.l2.requests").unwrap(),
        );
        assert_eq!(merged, r1 + r2);
        assert!(r1 > 0.0 && r2 > 0.0);
        let stats = server_stats(it);
        let served = stats["by_path"]["/json"].as_f64().unwrap();
        let load = &it["load"];
        let outside = load["outside_window"]["requests"].as_f64().unwrap();
        let in_flight = load["in_flight_at_end"].as_f64().unwrap();
        let sent = merged + outside + 1.0;
        assert!(
            served <= sent && served >= sent - in_flight,
            "server answered {served} on /json; hosts: {merged} measured + {outside} outside \
             (+1 first request), {in_flight} in flight"
        );
        // Measured where it ran: memory, CPU and threads from the host's /proc.
        assert!(m(it, "app.rss").unwrap() > 1.0, "{it}");
        assert!(m(it, "app.cpu").unwrap() > 0.0, "{it}");
        assert!(m(it, "app.threads.max").unwrap() >= 2.0, "{it}");
        assert!(m(it, "app.start_time").unwrap() > 0.0);
        assert_eq!(it["network"]["owned_by_app"], true, "{}", it["network"]);
        assert!(
            it["machine"].is_object(),
            "the app host's machine over the window"
        );
        assert!(
            !it["series"]["t_ms"].as_array().unwrap().is_empty(),
            "the app's samples come back as a series"
        );
    }
    let build = &json["builds"][0];
    assert!(build["build_time_ms"].as_f64().unwrap() > 0.0, "{build}");
    assert!(build["artifact_hash"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    let hosts = &json["environment"]["hosts"];
    assert_eq!(hosts["a1"]["hostname"], "a1", "{hosts}");
    nothing_left(&lab, &["a1", "l1", "l2"]);
    forget_sources(&marker);
}

#[test]
#[ignore = "needs root"]
fn a_crash_on_the_application_host_fails_the_iteration_naming_it() {
    let Some(lab) = Lab::or_skip(&["c1"]) else {
        return;
    };
    let dir = temp_dir("hosts-app-crash");
    // Its own: the tests of this process share one PID, and a host's work dir.
    let marker = format!("marker-hosts-app-crash-{}", std::process::id());
    let src = sources(&dir, &marker);
    let port = free_port();
    let toml = app_config(
        &lab,
        &src,
        port,
        "c1",
        &[],
        "--exit-after-requests 3000",
        "3s",
    );
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "2"], 1);
    let json = json.expect("a result");
    let its = iterations(&json);
    assert_eq!(
        its.len(),
        2,
        "the second iteration ran after the first crashed: {t}"
    );
    for it in its {
        let e = it["error"].as_str().unwrap_or_default();
        assert!(e.contains("crashed") && e.contains("c1"), "{e}");
    }
    nothing_left(&lab, &["c1"]);
    forget_sources(&marker);
}

#[test]
#[ignore = "needs root"]
fn the_application_hosts_transport_dying_fails_clearly_and_leaves_nothing_there() {
    let Some(lab) = Lab::or_skip(&["d1"]) else {
        return;
    };
    let dir = temp_dir("hosts-app-die");
    // Its own: the tests of this process share one PID, and a host's work dir.
    let marker = format!("marker-hosts-app-die-{}", std::process::id());
    let src = sources(&dir, &marker);
    let port = free_port();
    std::fs::write(
        dir.join("rigor.toml"),
        app_config(&lab, &src, port, "d1", &[], "", "4s"),
    )
    .unwrap();
    let child = spawn_lab_run(&dir, 1);
    // Once the application runs on d1, kill the agent that started it.
    let deadline = Instant::now() + Duration::from_secs(120);
    while apps_in(&lab, "d1").is_empty() {
        assert!(
            Instant::now() < deadline,
            "the application never started on d1"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let agent = lab
        .pids_in("d1")
        .into_iter()
        .find(|&p| cmdline(p).contains("agent --stdio") && !cmdline(p).starts_with("sh"))
        .expect("the agent on d1");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(agent as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let json = result(&dir);
    let it: &Value = &iterations(&json)[0];
    let e = it["error"].as_str().unwrap_or_default();
    assert!(e.contains("host d1"), "the error names the host: {e}");
    nothing_left(&lab, &["d1"]);
    assert!(apps_in(&lab, "d1").is_empty());
    forget_sources(&marker);
}

/// The application on host `h1`, reached through `env` (this machine; the agent's cache in
/// `dir`), loaded from here: what a host does, without the lab.
fn env_config(
    dir: &Path,
    src: &Path,
    port: u16,
    build: &str,
    command: &str,
    ready: &str,
) -> String {
    format!(
        r#"
[jobs.app]
dir = {src}
build = {build}
artifact = "app"
command = {command}
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "{ready}" }}
stop_timeout = "2s"

[jobs.load]
url = "http://127.0.0.1:{port}/json"
connections = 4
warmup = "200ms"
duration = "2s"

[scenarios.s]
application = "app"
load = "load"

[hosts.h1]
transport = {transport}

[profiles.lab]
application = {{ host = "h1" }}
"#,
        src = toml_string(&src.display().to_string()),
        build = toml_string(build),
        command = toml_string(command),
        transport = toml_string(&format!(
            "env XDG_CACHE_HOME={}",
            dir.join("cache").display()
        )),
    )
}

/// The parent PID of `pid`.
fn ppid(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Starts rigor on `toml`, interrupts it (SIGINT, once) as soon as a process mentioning
/// `marker` runs, and returns how long rigor took to end after that, and what it said.
fn interrupt_when_running(dir: &Path, toml: &str, marker: &str) -> (Duration, String) {
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let child = spawn_lab_run(dir, 2);
    let deadline = Instant::now() + Duration::from_secs(120);
    while processes_with(marker).is_empty() {
        assert!(Instant::now() < deadline, "{marker} never ran");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let asked = Instant::now();
    let out = child.wait_with_output().unwrap();
    (asked.elapsed(), text(&out))
}

#[test]
fn an_interrupt_during_the_build_or_the_readiness_on_the_host_ends_at_once_leaving_nothing() {
    let dir = temp_dir("hosts-app-interrupt");
    let src = sources(&dir, "marker");
    let port = free_port();
    // A build that would take minutes: Ctrl-C must not wait for it.
    let marker = format!("sleep 300.{}", std::process::id());
    let toml = env_config(
        &dir,
        &src,
        port,
        &format!("{marker}; cp hello-server.bin app"),
        "./app",
        "10s",
    );
    let (took, t) = interrupt_when_running(&dir, &toml, &marker);
    assert!(took < Duration::from_secs(15), "took {took:?}: {t}");
    assert!(
        t.contains("host h1: interrupted while waiting for the build"),
        "{t}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(processes_with(&marker).is_empty(), "the build still runs");
    // An application that never gets ready, with minutes to do so.
    let marker = format!("sleep 301.{}", std::process::id());
    let toml = env_config(
        &dir,
        &src,
        port,
        "cp hello-server.bin app && chmod +x app",
        &marker,
        "300s",
    );
    let (took, t) = interrupt_when_running(&dir, &toml, &marker);
    assert!(took < Duration::from_secs(15), "took {took:?}: {t}");
    assert!(t.contains("host h1: interrupted while waiting for the application to be ready"));
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        processes_with(&marker).is_empty(),
        "the application still runs"
    );
    assert!(processes_with(&dir.join("cache").display().to_string()).is_empty());
}

#[test]
fn an_agent_killed_mid_iteration_is_connected_afresh_and_the_next_iterations_run() {
    let dir = temp_dir("hosts-app-agent-killed");
    let src = sources(&dir, "marker");
    let port = free_port();
    let toml = env_config(
        &dir,
        &src,
        port,
        "cp hello-server.bin app && chmod +x app",
        &format!("./app --port {port} --threads 1"),
        "10s",
    );
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let child = spawn_lab_run(&dir, 3);
    // Once the application runs, kill the agent that started it (rigor's child).
    let needle = format!("./app --port {port}");
    let deadline = Instant::now() + Duration::from_secs(120);
    while processes_with(&needle).is_empty() {
        assert!(Instant::now() < deadline, "the application never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(800));
    let cache = dir.join("cache").display().to_string();
    let agent = processes_with(&cache)
        .into_iter()
        .find(|&p| ppid(p) == Some(child.id() as i32))
        .expect("the agent");
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(agent),
        nix::sys::signal::Signal::SIGKILL,
    );
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    let json = result(&dir);
    let its = iterations(&json);
    assert_eq!(its.len(), 3, "{t}");
    let e = its[0]["error"].as_str().unwrap_or_default();
    assert!(e.contains("host h1"), "the error names the host: {e}");
    assert_eq!(e.matches("the transport died").count(), 1, "said once: {e}");
    for it in &its[1..] {
        assert!(it["error"].is_null(), "a fresh agent starts the build: {t}");
    }
    assert!(processes_with(&needle).is_empty());
}

#[test]
fn a_port_taken_on_the_host_is_refused_before_the_start() {
    let dir = temp_dir("hosts-app-port-taken");
    let src = sources(&dir, "marker");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let toml = env_config(
        &dir,
        &src,
        port,
        "cp hello-server.bin app && chmod +x app",
        &format!("./app --port {port} --threads 1"),
        "10s",
    );
    let (t, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "1"], 1);
    let it = &iterations(json.as_ref().expect("a result"))[0];
    let e = it["error"].as_str().unwrap_or_default().to_string();
    assert!(
        e.starts_with(&format!("host h1: port {port} is already taken by PID")),
        "{e}\n{t}"
    );
    // The log the iteration names exists and says what happened there.
    let log = it["log"].as_str().expect("the iteration's log");
    let kept = std::fs::read_to_string(log).unwrap_or_default();
    assert!(kept.contains("is already taken"), "{log}: {kept:?}");
    drop(taken);
}

#[test]
fn an_artifact_linking_outside_the_sources_is_refused_on_the_host() {
    let dir = temp_dir("hosts-app-artifact-link");
    let src = sources(&dir, "marker");
    let outside = dir.join("outside.bin");
    std::fs::copy(hello_server(), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, src.join("app")).unwrap();
    let port = free_port();
    let toml = env_config(&dir, &src, port, "true", "./app", "10s");
    let (t, _) = run_exit(&dir, &toml, &["-p", "lab", "-i", "1"], 1);
    assert!(
        t.contains("host h1: the artifact of `app` (") && t.contains("outside the sources"),
        "{t}"
    );
    // The failed build's log is kept here too, as a local build's would be.
    let logs: Vec<String> = build_logs(&dir.join("out"));
    assert!(
        logs.iter().any(|l| l.contains("outside the sources")),
        "{logs:?}"
    );
}

#[test]
#[ignore = "needs root"]
fn a_load_url_this_machine_serves_itself_is_named_not_measured_silently() {
    let Some(lab) = Lab::or_skip(&["g1"]) else {
        return;
    };
    let dir = temp_dir("hosts-app-served-here");
    // Its own: the tests of this process share one PID, and a host's work dir.
    let marker = format!("marker-hosts-app-served-here-{}", std::process::id());
    let src = sources(&dir, &marker);
    let port = free_port();
    // A copy of the application on this machine, on the port the load names: a config
    // written for a local run, given a host for its application.
    let copy = hello_server::start(hello_server::Config {
        port,
        threads: 1,
        ..hello_server::Config::default()
    })
    .expect("start hello-server");
    let toml = app_config(&lab, &src, port, "g1", &[], "", "1s")
        .replace(
            &format!("http://{}:{port}/json", lab.addr("g1")),
            &format!("http://127.0.0.1:{port}/json"),
        )
        .replace(
            "stop_timeout = \"2s\"",
            &format!("stop_timeout = \"2s\"\nmetrics = \"http://127.0.0.1:{port}/metrics\""),
        );
    let (out, json) = run(&dir, &toml, &["-p", "lab", "-i", "1"]);
    let t = text(&out);
    let json = json.expect("a result");
    let it = &iterations(&json)[0];
    let here = format!(
        "127.0.0.1:{port} is this machine's own loopback, where PID {} (",
        std::process::id()
    );
    for kind in ["proxy", "metrics"] {
        let said = messages(&it["warnings"], kind);
        assert!(
            said.iter()
                .any(|m| m.contains(&here) && m.contains("not the application on host g1")),
            "{kind}: {said:?}\n{t}"
        );
    }
    drop(copy);
    nothing_left(&lab, &["g1"]);
    forget_sources(&marker);
}

#[test]
fn a_transport_that_never_answers_is_stopped_by_the_first_interrupt() {
    let dir = temp_dir("hosts-app-mute");
    let src = sources(&dir, "marker");
    let port = free_port();
    // A transport that takes the command and never runs it, never answers, never exits.
    let marker = format!("sleep 302.{}", std::process::id());
    let toml = env_config(&dir, &src, port, "true", "./app", "10s");
    let at = toml.find("transport = ").unwrap();
    let end = at + toml[at..].find('\n').unwrap();
    let toml = format!(
        "{}transport = {}{}",
        &toml[..at],
        toml_string(&format!("sh -c 'exec {marker}' mute")),
        &toml[end..]
    );
    let (took, t) = interrupt_when_running(&dir, &toml, &marker);
    assert!(took < Duration::from_secs(15), "took {took:?}: {t}");
    assert!(
        t.contains("host h1: checking the installed rigor: interrupted"),
        "{t}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        processes_with(&marker).is_empty(),
        "the transport still runs"
    );
}
