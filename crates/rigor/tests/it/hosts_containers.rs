//! A container application on a host of its own (a network namespace with its own sshd): the
//! host's engine finds the image, or builds it from the sources sent there, and starts a fresh
//! container each iteration, measured on that host from the container's first process and its
//! own cgroup, while the load runs from here to the port the container publishes there. The
//! server's own count equals what the load sent, the engine's events show one container per
//! iteration, the environment names the host's engine, and nothing is left on the host.

use crate::common::*;
use crate::containers_support::*;
use crate::hosts_support::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// The application: `image` (or `dockerfile`) on host `c1`, publishing `port` on all of the
/// host's addresses; the load from here to the host's address.
fn config(lab: &Lab, image_keys: &str, port: u16, dir: &Path) -> String {
    format!(
        r#"
[jobs.app]
dir = {dir}
{image_keys}
engine = "podman"
command = "/hello-server --port 80 --threads 1 --host 0.0.0.0"
publish = ["0.0.0.0:{port}:80"]
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "30s" }}
stop_timeout = "3s"

[jobs.load]
url = "http://{addr}:{port}/plaintext"
connections = 4
warmup = "200ms"
duration = "1s"

[scenarios.s]
application = "app"
load = "load"

[profiles.lab]
application = {{ host = "c1" }}

[hosts.c1]
ssh = "c1"
options = ["-F", {ssh}]
"#,
        dir = toml_string(&dir.display().to_string()),
        addr = lab.addr("c1"),
        ssh = toml_string(&lab.ssh_config_path().display().to_string()),
    )
}

/// Now, as `podman events --since` takes it (a second early: the clocks round differently).
fn since_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (secs - 1).to_string()
}

/// The agents (`rigor agent --stdio`) running on host `c1` now.
fn agents_on(lab: &Lab) -> Vec<u32> {
    lab.pids_in("c1")
        .into_iter()
        .filter(|p| {
            let raw = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&raw).contains("agent\0--stdio")
        })
        .collect()
}

/// Whether a container's name is one an agent of `agents` gave it (`rigor-AGENT-…`): other
/// rigors on this machine may run containers of their own meanwhile.
fn of_agents(name: &str, agents: &[u32]) -> bool {
    agents
        .iter()
        .any(|a| name.starts_with(&format!("rigor-{a}-")))
}

/// The ids of the containers the engine started since `since` for `agents`.
fn started_since(since: &str, agents: &[u32]) -> Vec<String> {
    let events = podman(&[
        "events",
        "--stream=false",
        "--since",
        since,
        "--filter",
        "event=start",
        "--format",
        "{{.ID}} {{.Name}}",
    ]);
    events
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|n| of_agents(n, agents))
        })
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// The containers of `agents` the engine still has, in any state.
fn containers_of_agents(agents: &[u32]) -> Vec<String> {
    podman(&["ps", "--all", "--format", "{{.Names}}"])
        .lines()
        .filter(|n| of_agents(n, agents))
        .map(str::to_string)
        .collect()
}

/// What a run on the lab did, seen from here: the agents that ran on `c1`, and each container's
/// first process with the cgroups it was seen in.
struct Seen {
    agents: Vec<u32>,
    first_processes: Vec<(u32, String)>,
}

/// Runs the lab's profile for `iterations`, watching each iteration's container from here.
fn run_lab(lab: &Lab, dir: &Path, iterations: u32) -> (std::process::Output, Seen) {
    let mut child = spawn_lab_run(dir, iterations);
    let mut seen = Seen {
        agents: Vec::new(),
        first_processes: Vec::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(300);
    while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
        for a in agents_on(lab) {
            if !seen.agents.contains(&a) {
                seen.agents.push(a);
            }
        }
        let listed = std::process::Command::new("podman")
            .args(["ps", "--format", "{{.Names}} {{.Pid}}"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        for line in listed.lines().filter(|l| of_agents(l, &seen.agents)) {
            let Some(pid) = line.split_whitespace().nth(1).and_then(|p| p.parse().ok()) else {
                continue;
            };
            if pid > 0 && !seen.first_processes.iter().any(|(p, _)| *p == pid) {
                let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
                seen.first_processes.push((pid, cg));
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if matches!(child.try_wait(), Ok(None)) {
        let _ = child.kill();
    }
    (child.wait_with_output().unwrap(), seen)
}

/// The test image, this binary's turn at the machine, and a lab with host `c1`; `None` (the
/// skip said) where podman or the lab cannot be had.
fn lab_with_image() -> Option<(&'static str, std::sync::MutexGuard<'static, ()>, Lab)> {
    if !podman_or_skip() {
        return None;
    }
    let image = image();
    let one = one_at_a_time();
    let lab = Lab::or_skip(&["c1"])?;
    Some((image, one, lab))
}

/// Nothing of the run is left: no container of rigor's, nothing but sshd in the host.
fn nothing_left(lab: &Lab, agents: &[u32]) {
    std::thread::sleep(Duration::from_millis(500));
    let left = containers_of_agents(agents);
    assert!(left.is_empty(), "{left:?}");
    let left: Vec<String> = lab
        .pids_in("c1")
        .into_iter()
        .map(|p| {
            let raw = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&raw).replace('\0', " ")
        })
        .filter(|c| !c.contains("sshd") && !c.trim().is_empty())
        .collect();
    assert!(left.is_empty(), "left running on c1: {left:?}");
}

#[test]
#[ignore = "needs root"]
fn an_image_on_a_host_runs_there_fresh_each_iteration_with_that_hosts_engine() {
    let Some((image, _one, lab)) = lab_with_image() else {
        return;
    };
    let dir = temp_dir("hosts-ctr");
    let port = free_port();
    let keys = format!("image = {}", toml_string(image));
    std::fs::write(dir.join("rigor.toml"), config(&lab, &keys, port, &dir)).unwrap();
    let since = since_now();
    let (out, seen) = run_lab(&lab, &dir, 2);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = result(&dir);
    let its = iterations(&json);
    assert_eq!(its.len(), 2);
    let id = podman(&["image", "inspect", "--format", "{{.Id}}", image]);
    for it in its {
        assert!(it["error"].is_null(), "{}", it["error"]);
        served_what_was_sent(it);
        // Measured on the host from the container's first process and its own cgroup.
        let pid = it["pid"].as_u64().expect("the container's first process") as u32;
        let (_, cgroup) = seen
            .first_processes
            .iter()
            .find(|(p, _)| *p == pid)
            .unwrap_or_else(|| {
                panic!(
                    "PID {pid} was never a container's first process: {:?}",
                    seen.first_processes
                )
            });
        assert!(cgroup.contains("libpod"), "{cgroup}");
        assert!(m(it, "app.rss").unwrap() > 0.5, "{it}");
        assert!(m(it, "app.cgroup.memory").unwrap() > 0.5, "{it}");
        assert!(m(it, "app.threads.max").unwrap() >= 1.0, "{it}");
        assert!(m(it, "app.start_time").unwrap() > 0.0);
        let size = m(it, "app.size").expect("the image's size");
        let bytes: f64 = podman(&["image", "inspect", "--format", "{{.Size}}", image])
            .parse()
            .unwrap();
        assert!(
            (size - bytes / 1024.0).abs() < 1.0,
            "{size} KiB vs {bytes} B"
        );
        assert!(
            !kinds(&it["warnings"]).contains(&"proxy".to_string()),
            "{}",
            it["warnings"]
        );
    }
    // One fresh container per iteration, by the engine's own events.
    let mut started = started_since(&since, &seen.agents);
    started.sort();
    started.dedup();
    assert_eq!(started.len(), 2, "{started:?}");
    // The host's engine, in the environment; the image id is the build's hash.
    let env = &json["environment"]["jobs"]["app"]["container"];
    assert_eq!(env["engine"], "podman", "{env}");
    assert!(env["engine_version"]
        .as_str()
        .is_some_and(|v| !v.is_empty()));
    assert!(json["environment"]["hosts"]["c1"].is_object());
    let hash = json["builds"][0]["artifact_hash"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        hash.trim_start_matches("sha256:"),
        id.trim_start_matches("sha256:")
    );
    nothing_left(&lab, &seen.agents);
}

#[test]
#[ignore = "needs root"]
fn a_dockerfile_on_a_host_is_built_there_from_the_sources_sent() {
    let Some((base, _one, lab)) = lab_with_image() else {
        return;
    };
    let dir = temp_dir("hosts-ctr-build");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    let marker = format!("built on the host {}", std::process::id());
    std::fs::write(src.join("page.html"), &marker).unwrap();
    std::fs::write(
        src.join("Dockerfile"),
        format!("FROM {base}\nCOPY page.html /www/index.html\n"),
    )
    .unwrap();
    let port = free_port();
    let toml = config(&lab, "dockerfile = \"Dockerfile\"", port, &src);
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let (out, seen) = run_lab(&lab, &dir, 1);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("on host c1"), "the build's place is said: {t}");
    let json = result(&dir);
    let it = &iterations(&json)[0];
    assert!(it["error"].is_null(), "{}", it["error"]);
    served_what_was_sent(it);
    assert!(m(it, "app.build_time").unwrap() > 0.0, "{it}");
    // The image the host built holds the sources sent to it.
    let tag = podman(&["images", "--format", "{{.Repository}}:{{.Tag}}"])
        .lines()
        .find(|l| l.contains("rigor-build-app"))
        .map(str::to_string)
        .expect("the image built on the host");
    let page = podman(&["run", "--rm", &tag, "cat", "/www/index.html"]);
    assert_eq!(page, marker);
    let _ = std::process::Command::new("podman")
        .args(["rmi", "-f", &tag])
        .output();
    nothing_left(&lab, &seen.agents);
}

#[test]
#[ignore = "needs root"]
fn a_killed_rigor_leaves_no_container_on_the_host() {
    let Some((image, _one, lab)) = lab_with_image() else {
        return;
    };
    let dir = temp_dir("hosts-ctr-kill");
    let port = free_port();
    let keys = format!("image = {}", toml_string(image));
    let toml = config(&lab, &keys, port, &dir).replace("duration = \"1s\"", "duration = \"60s\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let mut child = spawn_lab_run(&dir, 1);
    // Once the container serves the load, rigor is killed outright.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut agents = Vec::new();
    while Instant::now() < deadline {
        assert!(matches!(child.try_wait(), Ok(None)), "rigor ended early");
        for a in agents_on(&lab) {
            if !agents.contains(&a) {
                agents.push(a);
            }
        }
        if !containers_of_agents(&agents).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        !containers_of_agents(&agents).is_empty(),
        "no container started"
    );
    std::thread::sleep(Duration::from_secs(2));
    child.kill().unwrap();
    let _ = child.wait();
    // Its transport goes with it; the agent on the host then stops and removes the container.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !containers_of_agents(&agents).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    nothing_left(&lab, &agents);
}

#[test]
#[ignore = "needs root"]
fn a_dockerfile_build_stopped_by_build_timeout_on_a_host_leaves_neither_step_nor_working_container()
{
    let Some((_, _one, lab)) = lab_with_image() else {
        return;
    };
    let name = format!("rigor-test-host-stopped-build-{}", std::process::id());
    let base = own_base(&name);
    let marker = 900_000 + std::process::id();
    let dir = temp_dir("hosts-ctr-build-timeout");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("Dockerfile"), endless_dockerfile(&base, marker)).unwrap();
    let port = free_port();
    let keys = "dockerfile = \"Dockerfile\"\nbuild_timeout = \"4s\"";
    std::fs::write(dir.join("rigor.toml"), config(&lab, keys, port, &src)).unwrap();
    let (out, seen) = run_lab(&lab, &dir, 1);
    let t = text(&out);
    // The agent on the host outlives the build: it, not rigor's exit, must stop the step.
    let left = build_leftovers(&name, marker, Duration::from_secs(20));
    remove_build_leftovers(&left, &base);
    assert!(t.contains("host c1") && t.contains("build_timeout"), "{t}");
    assert_eq!(left, Vec::<String>::new(), "{t}");
    nothing_left(&lab, &seen.agents);
}
