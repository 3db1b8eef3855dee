//! Container applications against real podman containers: the page-cache trap measured from
//! the host, a fresh container per iteration (the engine's own events), none left after
//! Ctrl-C, after SIGKILL, nor after the next run's sweep; variants by tag; and the load inside
//! the container's network namespace counted against the server's own count. Skipped
//! (`test-skip: needs podman`) where podman does not answer.

use crate::common::marks::{spawn_rigor, wait_exit};
use crate::common::*;
use crate::containers_support::*;
use std::time::{Duration, Instant};

/// A config whose application is `command` in a container of `image` (podman), loaded
/// inside the container's network namespace on `path` for `duration`.
fn config(image: &str, command: &str, path: &str, duration: &str) -> String {
    format!(
        r#"
[jobs.app]
image = "{image}"
engine = "podman"
command = {command}
ready = {{ http = "http://127.0.0.1:80/health", timeout = "20s" }}
stop_timeout = "3s"

[jobs.load]
url = "http://127.0.0.1:80{path}"
network = "container"
connections = 4
warmup = "200ms"
duration = "{duration}"

[scenarios.s]
application = "app"
load = "load"
"#,
        command = toml_string(command)
    )
}

/// The testbed server as the container's first process.
const SERVER: &str = "/hello-server --port 80 --threads 1";

/// An application from `source` (its `image` or `dockerfile` keys and its command) with
/// container port 80 published on `port` of 127.0.0.1, loaded there on `/plaintext` by
/// `connections` for `duration` after `warmup`; `more` follows (variants, profiles, hosts).
fn published(source: &str, port: u16, load: (u32, &str, &str), more: &str) -> String {
    let (connections, warmup, duration) = load;
    format!(
        r#"
[jobs.app]
{source}
engine = "podman"
publish = ["127.0.0.1:{port}:80"]
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "20s" }}
stop_timeout = "3s"

[jobs.load]
url = "http://127.0.0.1:{port}/plaintext"
connections = {connections}
warmup = "{warmup}"
duration = "{duration}"

[scenarios.s]
application = "app"
load = "load"
{more}"#
    )
}

#[test]
fn the_page_cache_a_container_writes_is_its_cgroups_memory_not_its_processes() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-cache");
    let command =
        format!("sh -c 'dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>/dev/null && exec {SERVER}'");
    let toml = config(image(), &command, "/plaintext", "1s");
    let (out, json) = run(&dir, &toml, &["-i", "1", "--no-store"]);
    let json = json.unwrap_or_else(|| panic!("{}", text(&out)));
    let it = &iterations(&json)[0];
    assert!(it["error"].is_null(), "{}", it["error"]);
    let rss = m(it, "app.rss").unwrap();
    let cgroup = m(it, "app.cgroup.memory").unwrap();
    let cache = m(it, "app.cgroup.cache").unwrap();
    assert!(rss < 32.0, "the server's RSS is small: {rss} MiB");
    assert!(
        cgroup >= 64.0,
        "the cgroup holds the 64 MiB file: {cgroup} MiB"
    );
    assert!(cache >= 60.0, "as page cache: {cache} MiB");
    let page_cache = message(&json["rows"][0]["warnings"], "page_cache").to_string()
        + message(&it["warnings"], "page_cache");
    assert!(page_cache.contains("page cache"), "{page_cache}");
    // The container's own cgroup, not one rigor made: its engine's name is in the path.
    let env = &json["environment"]["jobs"]["app"]["container"];
    assert_eq!(env["engine"], "podman", "{env}");
    assert!(env["engine_version"]
        .as_str()
        .is_some_and(|v| !v.is_empty()));
}

/// The warnings of a row or of its iteration may hold the kind; "" when neither does.
fn message<'a>(warnings: &'a serde_json::Value, kind: &str) -> &'a str {
    warnings
        .as_array()
        .into_iter()
        .flatten()
        .find(|w| w["kind"] == kind)
        .and_then(|w| w["message"].as_str())
        .unwrap_or("")
}

#[test]
fn the_load_inside_the_containers_network_reaches_the_server_and_each_iteration_is_a_new_container()
{
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-fresh");
    let toml = config(image(), SERVER, "/plaintext", "1s");
    std::fs::write(dir.join("rigor.toml"), &toml).unwrap();
    let since = jiff_now();
    let mut child = spawn_rigor(&dir, &[RUN, &["-i", "3", "--no-store"]].concat());
    let pid = child.id();
    let status = wait_exit(&mut child, Duration::from_secs(240));
    let json = try_result(&dir).unwrap_or_else(|| panic!("no result ({status})"));
    assert_schema(&json);
    let its = iterations(&json);
    assert_eq!(its.len(), 3);
    for it in its {
        assert!(it["error"].is_null(), "{}", it["error"]);
        served_what_was_sent(it);
        assert_eq!(it["network"]["path"], "container network namespace");
        assert!(!kinds(&it["warnings"]).contains(&"proxy".to_string()));
    }
    // The engine's own events: three containers of this rigor started, three ids.
    let events = podman(&[
        "events",
        "--stream=false",
        "--since",
        &since,
        "--filter",
        "event=start",
        "--format",
        "{{.ID}} {{.Name}}",
    ]);
    let mut ids: Vec<&str> = events
        .lines()
        .filter(|l| l.contains(&format!(" rigor-{pid}-")))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids.len(), 3, "{events}");
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "distinct containers: {events}");
    assert!(containers_of(pid).is_empty(), "{:?}", containers_of(pid));
}

/// Now, as `podman events --since` takes it.
fn jiff_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // A second early: the engine's timestamps and this clock round differently.
    (secs - 1).to_string()
}

/// Waits until `rigor` has a running container; its name.
fn running_container_of(rigor: u32) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let running = podman(&["ps", "--format", "{{.Names}}"]);
        if let Some(n) = running
            .lines()
            .find(|n| n.starts_with(&format!("rigor-{rigor}-")))
        {
            return n.to_string();
        }
        assert!(Instant::now() < deadline, "no container of rigor {rigor}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until none of `rigor`'s containers is left.
fn none_left(rigor: u32, within: Duration) -> Vec<String> {
    let deadline = Instant::now() + within;
    loop {
        let left = containers_of(rigor);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn no_container_is_left_after_ctrl_c() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-int");
    std::fs::write(
        dir.join("rigor.toml"),
        config(image(), SERVER, "/plaintext", "60s"),
    )
    .unwrap();
    let mut child = spawn_rigor(&dir, &[RUN, &["-i", "1", "--no-store"]].concat());
    let pid = child.id();
    running_container_of(pid);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    wait_exit(&mut child, Duration::from_secs(60));
    assert_eq!(none_left(pid, Duration::from_secs(1)), Vec::<String>::new());
}

#[test]
fn no_container_is_left_after_sigkill_and_the_next_run_sweeps_what_a_killed_run_left() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-kill");
    std::fs::write(
        dir.join("rigor.toml"),
        config(image(), SERVER, "/plaintext", "60s"),
    )
    .unwrap();
    let mut child = spawn_rigor(&dir, &[RUN, &["-i", "1", "--no-store"]].concat());
    let pid = child.id();
    running_container_of(pid);
    child.kill().unwrap();
    let _ = child.wait();
    // rigor's sentinel outlives it and removes the container.
    assert_eq!(
        none_left(pid, Duration::from_secs(30)),
        Vec::<String>::new()
    );

    // A container a rigor left where even its sentinel could not remove it (killed too): the
    // next run's sweep removes it, and leaves one of a rigor still running alone.
    let me = std::process::id();
    let my_start = std::fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
    let my_start = my_start
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(19)
        .unwrap();
    let dead = format!("rigor-test-dead-{me}");
    let alive = format!("rigor-test-alive-{me}");
    for (name, owner) in [
        (&dead, "999999999-1".to_string()),
        (&alive, format!("{me}-{my_start}")),
    ] {
        podman(&[
            "create",
            "--name",
            name,
            "--label",
            &format!("io.rigor.owner={owner}"),
            image(),
            "sleep",
            "60",
        ]);
    }
    let toml = config(image(), SERVER, "/plaintext", "300ms");
    let (out, _) = run(&dir, &toml, &["-i", "1", "--no-store"]);
    let names = podman(&["ps", "--all", "--format", "{{.Names}}"]);
    let _ = podman(&["rm", "-f", &alive]);
    assert!(!names.lines().any(|n| n == dead), "{names}\n{}", text(&out));
    assert!(names.lines().any(|n| n == alive), "{names}");
    assert!(
        text(&out).contains("removed 1 container(s)"),
        "{}",
        text(&out)
    );
}

#[test]
fn variants_by_tag_run_each_its_own_image() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-tags");
    let toml = config(image(), SERVER, "/plaintext", "300ms").replace(
        &format!("image = \"{}\"\n", image()),
        "image = \"{{image}}\"\n",
    ) + &format!(
        r#"
[scenarios.s.variants.one]
variables = {{ image = "{}" }}
[scenarios.s.variants.two]
image = "{}"
"#,
        image(),
        tagged("2")
    );
    let (out, json) = run(
        &dir,
        &toml,
        &["-i", "1", "--no-store", "--allow-inconclusive"],
    );
    let json = json.unwrap_or_else(|| panic!("{}", text(&out)));
    for (variant, tag) in [("one", image().to_string()), ("two", tagged("2"))] {
        let want = podman(&["image", "inspect", "--format", "{{.Id}}", &tag]);
        let build = json["builds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["variants"].to_string().contains(variant))
            .unwrap_or_else(|| panic!("no build of {variant}: {}", json["builds"]));
        assert!(
            build
                .to_string()
                .contains(want.trim_start_matches("sha256:")),
            "{variant} ran {tag} ({want}): {build}"
        );
        let row = json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["variant"] == variant)
            .unwrap();
        assert!(row["iterations"][0]["error"].is_null(), "{row}");
    }
}

#[test]
fn a_docker_client_without_a_daemon_is_passed_over_for_the_engine_that_answers() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-detect");
    // A `docker` whose daemon is not there, first on PATH.
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let docker = bin.join("docker");
    std::fs::write(
        &docker,
        "#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. \
         Is the docker daemon running?' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&docker, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let toml = config(image(), SERVER, "/plaintext", "300ms").replace("engine = \"podman\"\n", "");
    std::fs::write(dir.join("rigor.toml"), &toml).unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "1", "--no-store"]].concat())
        .env("PATH", &path)
        .output()
        .unwrap();
    let json = try_result(&dir).unwrap_or_else(|| panic!("{}", text(&out)));
    assert_eq!(
        json["environment"]["jobs"]["app"]["container"]["engine"],
        "podman",
        "{}",
        text(&out)
    );
    assert!(iterations(&json)[0]["error"].is_null());

    // With no engine answering, the error gives each one's reason.
    let podman = bin.join("podman");
    std::fs::write(&podman, "#!/bin/sh\necho 'podman: broken' >&2\nexit 125\n").unwrap();
    std::fs::set_permissions(&podman, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "1", "--no-store"]].concat())
        .env("PATH", &path)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(
        t.contains("no container engine answers")
            && t.contains("Cannot connect to the Docker daemon")
            && t.contains("podman: broken"),
        "{t}"
    );
}

#[test]
fn a_dockerfile_is_built_once_and_its_published_port_is_no_proxy_when_the_kernel_forwards() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-build");
    std::fs::write(
        dir.join("Dockerfile"),
        format!(
            "FROM {}\nCOPY page.txt /www/page.txt\nCMD [\"/hello-server\", \"--host\", \"0.0.0.0\", \"--port\", \"80\", \
             \"--threads\", \"1\"]\n",
            image()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("page.txt"), "built\n").unwrap();
    let port = free_port();
    let toml = published(
        "dockerfile = \"Dockerfile\"\ncontext = \".\"",
        port,
        (4, "200ms", "500ms"),
        "",
    );
    let (out, json) = run(&dir, &toml, &["-i", "2", "--no-store"]);
    let json = json.unwrap_or_else(|| panic!("{}", text(&out)));
    let builds = json["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 1, "built once: {builds:?}");
    assert!(builds[0]["build_time_ms"].as_f64().unwrap() > 0.0);
    let id = builds[0]["artifact_hash"].as_str().unwrap().to_string();
    let images = podman(&["images", "--no-trunc", "--format", "{{.ID}}"]);
    assert!(
        images.contains(id.trim_start_matches("sha256:")),
        "{id} in {images}"
    );
    for it in iterations(&json) {
        assert!(it["error"].is_null(), "{}", it["error"]);
        // The kernel forwards the published port; podman's conmon only reserves it.
        assert_eq!(it["network"]["path"], "loopback");
        assert!(!kinds(&it["warnings"]).contains(&"proxy".to_string()));
        served_what_was_sent(it);
    }
    let _ = std::process::Command::new("podman")
        .args(["rmi", "-f", &id])
        .output();
}

/// A Dockerfile whose `RUN` step never ends, built with `build_timeout`.
fn endless_build(base: &str, marker: u32, dir: &std::path::Path, timeout: &str) {
    std::fs::write(dir.join("Dockerfile"), endless_dockerfile(base, marker)).unwrap();
    let toml = format!(
        r#"
[jobs.app]
dockerfile = "Dockerfile"
engine = "podman"
build_timeout = "{timeout}"
ready = {{ tcp = "127.0.0.1:1" }}

[jobs.load]
url = "http://127.0.0.1:1/"

[scenarios.s]
application = "app"
load = "load"
"#
    );
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
}

#[test]
fn a_build_stopped_by_its_timeout_or_ctrl_c_leaves_neither_its_step_nor_its_working_container() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let name = format!("rigor-test-stopped-build-{}", std::process::id());
    let base = own_base(&name);
    let marker = 700_000 + std::process::id();
    let dir = temp_dir("ctr-stop-build");
    // Killed by `build_timeout`.
    endless_build(&base, marker, &dir, "3s");
    let out = rigor(&dir, &[RUN, &["-i", "1", "--no-store"]].concat());
    let t = text(&out);
    assert!(t.contains("build_timeout"), "{t}");
    let left = build_leftovers(&name, marker, Duration::from_secs(20));
    // Interrupted (SIGINT to rigor alone) while the step runs.
    endless_build(&base, marker, &dir, "10m");
    let mut child = spawn_rigor(&dir, &[RUN, &["-i", "1", "--no-store"]].concat());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !endless_step_runs(marker) {
        assert!(Instant::now() < deadline, "the build's step never ran");
        std::thread::sleep(Duration::from_millis(100));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    wait_exit(&mut child, Duration::from_secs(60));
    let left_after_int = build_leftovers(&name, marker, Duration::from_secs(20));
    // What a failing assertion would leave goes first.
    for n in left.iter().chain(&left_after_int) {
        if let Some(c) = n.strip_prefix("working container ") {
            let _ = std::process::Command::new("podman")
                .args(["rm", "-f", c])
                .output();
        }
    }
    let _ = std::process::Command::new("podman")
        .args(["rmi", &base])
        .output();
    assert_eq!(left, Vec::<String>::new(), "after build_timeout");
    assert_eq!(left_after_int, Vec::<String>::new(), "after Ctrl-C");
}

#[test]
fn a_terminals_ctrl_c_during_a_build_on_a_host_stops_it_through_the_agent() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let name = format!("rigor-test-host-build-int-{}", std::process::id());
    let base = own_base(&name);
    let marker = 800_000 + std::process::id();
    let dir = temp_dir("ctr-host-build-int");
    endless_build(&base, marker, &dir, "10m");
    // The host is this machine, its agent started through `env`.
    let mut toml = std::fs::read_to_string(dir.join("rigor.toml")).unwrap();
    toml.push_str(
        "\n[profiles.h]\napplication = { host = \"h\" }\n\n[hosts.h]\ntransport = \"env\"\n",
    );
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let mut child = {
        use std::os::unix::process::CommandExt;
        rigor_command(&dir, &[RUN, &["-i", "1", "--no-store", "-p", "h"]].concat())
            .stdin(std::process::Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout.txt")).unwrap())
            .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
            .process_group(0)
            .spawn()
            .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !endless_step_runs(marker) {
        assert!(Instant::now() < deadline, "the build's step never ran");
        std::thread::sleep(Duration::from_millis(100));
    }
    // As a terminal's Ctrl-C: SIGINT to rigor's whole process group.
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    wait_exit(&mut child, Duration::from_secs(60));
    let said = std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default()
        + &std::fs::read_to_string(dir.join("stdout.txt")).unwrap_or_default();
    let left = build_leftovers(&name, marker, Duration::from_secs(20));
    remove_build_leftovers(&left, &base);
    // rigor told the agent to stop; the agent was not killed by the signal.
    assert!(said.contains("host h: interrupted"), "{said}");
    assert!(!said.contains("killed by signal"), "{said}");
    assert_eq!(left, Vec::<String>::new());
}

#[test]
fn an_image_on_a_host_on_this_machines_network_records_the_hosts_engine_and_is_no_proxy_of_itself()
{
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-host-env");
    // The host's own podman, as its PATH finds it: it says a version this machine's does not.
    let bin = dir.join("host-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("podman");
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("podman"))
        .find(|p| p.is_file())
        .unwrap();
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n[ \"$1\" = version ] && {{ echo 9.9.9-the-host; exit 0; }}\nexec {} \"$@\"\n",
            real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let port = free_port();
    let source = format!(
        "image = \"{}\"\ncommand = \"{SERVER} --host 0.0.0.0\"",
        image()
    );
    let more = format!(
        r#"
[scenarios.s.variants.one]
[scenarios.s.variants.two]
image = "{two}"

[profiles.h]
application = {{ host = "h" }}

[hosts.h]
transport = {transport}
"#,
        two = tagged("2"),
        transport = toml_string(&format!("env PATH={path}")),
    );
    let toml = published(&source, port, (4, "200ms", "500ms"), &more);
    let (out, json) = run(
        &dir,
        &toml,
        &["-i", "1", "--allow-inconclusive", "--no-store", "-p", "h"],
    );
    let json = json.unwrap_or_else(|| panic!("{}", text(&out)));
    assert_schema(&json);
    // Each variant ran its own image, by the id the host's engine gives its tag.
    let hashes: Vec<(String, String)> = json["builds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["variant"].as_str().unwrap_or_default().to_string(),
                b["artifact_hash"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let id = |tag: &str| {
        format!(
            "sha256:{}",
            podman(&["image", "inspect", "--format", "{{.Id}}", tag])
        )
    };
    assert!(
        hashes.contains(&("one".into(), id(image())))
            && hashes.contains(&("two".into(), id(&tagged("2")))),
        "{hashes:?}"
    );
    for row in json["rows"].as_array().unwrap() {
        let its = row["iterations"].as_array().unwrap();
        assert!(
            !its.is_empty() && its.iter().all(|it| it["error"].is_null()),
            "{row}"
        );
    }
    let it = iterations(&json)
        .first()
        .unwrap_or_else(|| panic!("{}", text(&out)));
    assert!(it["error"].is_null(), "{}", it["error"]);
    // The port is the container's, held by podman's reservation while the kernel forwards it:
    // neither the host's check nor this machine's calls it a proxy.
    assert_eq!(it["network"]["owned_by_app"], true, "{}", it["network"]);
    assert!(
        !kinds(&it["warnings"]).contains(&"proxy".to_string()),
        "{}",
        it["warnings"]
    );
    let env = &json["environment"]["jobs"]["app"]["container"];
    assert_eq!(env["engine"], "podman", "{env}");
    assert_eq!(env["engine_version"], "9.9.9-the-host", "{env}");
    // The job's image as written, whichever variant the host built last.
    assert_eq!(env["image"], image(), "{env}");
    // The agent removed the iteration's container.
    let published = format!(":{port}->");
    let ports = podman(&["ps", "--all", "--format", "{{.Names}} {{.Ports}}"]);
    assert!(!ports.contains(&published), "{ports}");
}

/// What a rigor killed with its sentinel (or an agent killed outright) leaves: its container,
/// still running and holding the port it publishes on `port`, owned by a rigor that is gone.
fn left_by_a_killed_run(port: u16) -> String {
    // Above the kernel's largest PID: no process has it.
    let name = format!("rigor-4194400-0-{:08x}", std::process::id());
    podman(&[
        "run",
        "--detach",
        "--name",
        &name,
        "--label",
        "io.rigor.owner=4194400-1",
        "--publish",
        &format!("127.0.0.1:{port}:80"),
        image(),
        "/hello-server",
        "--port",
        "80",
        "--host",
        "0.0.0.0",
    ]);
    name
}

#[test]
fn a_container_a_killed_run_left_on_the_published_port_is_swept_before_the_port_is_checked() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-sweep-port");
    let port = free_port();
    let source = format!(
        "image = \"{}\"\ncommand = \"{SERVER} --host 0.0.0.0\"",
        image()
    );
    let more = "\n[profiles.h]\napplication = { host = \"h\" }\n\n[hosts.h]\ntransport = \"env\"\n";
    let toml = published(&source, port, (2, "100ms", "300ms"), more);
    // Here, and on a host (whose agent sweeps its own engine).
    for profile in [&[][..], &["-p", "h"][..]] {
        let left = left_by_a_killed_run(port);
        let id = podman(&["inspect", "--format", "{{.Id}}", &left]);
        let (out, json) = run(&dir, &toml, &[&["-i", "1", "--no-store"], profile].concat());
        let gone = !podman(&["ps", "--all", "--format", "{{.Names}}"])
            .lines()
            .any(|n| n == left);
        if !gone {
            let _ = std::process::Command::new("podman")
                .args(["rm", "-f", &left])
                .output();
        }
        let json = json.unwrap_or_else(|| panic!("{profile:?}: {}", text(&out)));
        let it = &iterations(&json)[0];
        assert!(it["error"].is_null(), "{profile:?}: {}", it["error"]);
        assert!(gone, "{profile:?}: {left} is still there");
        if !profile.is_empty() {
            // The host's sweep is said in the result, not on the host's stderr alone.
            let said = it["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|w| w["kind"] == "leftovers")
                .filter_map(|w| w["message"].as_str())
                .collect::<Vec<_>>();
            assert!(
                said.iter()
                    .any(|m| m.starts_with("on host h: 1 container(s)") && m.contains(&id[..12])),
                "{said:?}"
            );
        }
    }
}

#[test]
fn a_dockerfile_that_fails_to_build_on_a_host_keeps_its_log_here() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-host-build-fails");
    let marker = format!("the step of test {} fails", std::process::id());
    std::fs::write(
        dir.join("Dockerfile"),
        format!("FROM {}\nRUN echo '{marker}'; exit 7\n", image()),
    )
    .unwrap();
    let toml = r#"
[jobs.app]
dockerfile = "Dockerfile"
engine = "podman"
ready = { tcp = "127.0.0.1:1" }

[jobs.load]
url = "http://127.0.0.1:1/"

[scenarios.s]
application = "app"
load = "load"

[profiles.h]
application = { host = "h" }

[hosts.h]
transport = "env"
"#;
    let (out, _) = run(&dir, toml, &["-i", "1", "--no-store", "-p", "h"]);
    let t = text(&out);
    assert!(t.contains("host h: `podman build"), "{t}");
    // The build's log here holds what the host's engine said, as a local build's would.
    let logs: Vec<String> = build_logs(&dir.join("out"));
    assert!(
        logs.iter()
            .any(|l| l.contains(&marker) && l.contains("exit 7")),
        "{logs:?}\n{t}"
    );
}

#[test]
fn a_command_job_from_an_image_reports_its_figures_from_the_containers_output() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-cmd");
    let toml = format!(
        r#"
[jobs.prog]
role = "command"
image = "{}"
engine = "podman"
command = "sh -c 'dd if=/dev/zero of=/tmp/f bs=1M count=8 2>/dev/null; sleep 1; echo value: 42'"
[jobs.prog.extract.v]
regex = 'value: (?P<value>\d+)'
direction = "higher"

[scenarios.c]
command = "prog"
"#,
        image()
    );
    let (out, json) = run(&dir, &toml, &["-i", "1", "--no-store"]);
    let json = json.unwrap_or_else(|| panic!("{}", text(&out)));
    let it = &iterations(&json)[0];
    assert!(it["error"].is_null(), "{}", it["error"]);
    assert_eq!(m(it, "cmd.v"), Some(42.0));
    // Sampled from the container's own cgroup while it ran: the file it wrote is there.
    assert!(
        m(it, "app.cgroup.memory").unwrap() >= 8.0,
        "{}",
        it["measurements"]
    );
    assert!(m(it, "app.elapsed").unwrap() >= 1000.0);
}

#[test]
fn rigor_load_runs_inside_a_running_containers_network() {
    if !podman_or_skip() {
        return;
    }
    let _one = one_at_a_time();
    let dir = temp_dir("ctr-load");
    let name = format!("rigor-test-load-{}", std::process::id());
    // Not published: only a client in its network namespace reaches it.
    podman(&[
        "run",
        "-d",
        "--name",
        &name,
        image(),
        "/hello-server",
        "--port",
        "80",
        "--threads",
        "1",
    ]);
    let out = rigor_command(
        &dir,
        &[
            "load",
            "--network",
            &format!("container:{name}"),
            "-c",
            "4",
            "-d",
            "1s",
            "--json",
            "load.json",
            "http://127.0.0.1:80/plaintext",
        ],
    )
    .output()
    .unwrap();
    podman(&["stop", "-t", "5", &name]);
    let logs = podman(&["logs", &name]);
    podman(&["rm", "-f", &name]);
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("load.json")).unwrap()).unwrap();
    let line = logs
        .lines()
        .find_map(|l| l.strip_prefix("hello-server stats: "))
        .unwrap_or_else(|| panic!("{logs}"));
    let stats: serde_json::Value = serde_json::from_str(line).unwrap();
    let served = stats["by_path"]["/plaintext"].as_f64().unwrap();
    let report = &json["report"];
    let measured = json["measurements"]["load.requests"].as_f64().unwrap();
    let outside = report["outside_window"]["requests"].as_f64().unwrap_or(0.0);
    let in_flight = report["in_flight_at_end"].as_f64().unwrap_or(0.0);
    let sent = measured + outside;
    assert!(
        measured > 0.0 && served <= sent && served >= sent - in_flight,
        "server answered {served}; engine: {measured} measured + {outside} outside, {in_flight} \
         in flight"
    );

    // Not `container:NAME`, or a container that is not there: said, not a panic.
    let bad = rigor(
        &dir,
        &["load", "--network", "bridge", "http://127.0.0.1:80/"],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("container:NAME"), "{}", text(&bad));
    let gone = rigor(
        &dir,
        &[
            "load",
            "--network",
            "container:rigor-test-none",
            "-d",
            "1s",
            "http://127.0.0.1:80/",
        ],
    );
    assert!(!gone.status.success());
    assert!(text(&gone).contains("rigor-test-none"), "{}", text(&gone));
}
