//! Load on other hosts, without ssh: the transport is `env …`, which runs the remote command on
//! this machine, so the whole path (install into the cache, `rigor agent --stdio`, handshake,
//! clock offset, common start, reports with histograms, merge) runs as it would over ssh.

use crate::agent_support;
use rigor_agent as agent;
use rigor_agent::AgentError;

use agent::install::{Install, LocalBinary};
use agent::transport::{sh_quote, HostSpec};
use agent::Agent;
use agent_support::{local_host, server};
use hello_server::Server;
use rigor_load::{merge, LoadSpec};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

fn rigor_binary() -> LocalBinary {
    static BIN: OnceLock<LocalBinary> = OnceLock::new();
    BIN.get_or_init(|| LocalBinary::new(Path::new(env!("CARGO_BIN_EXE_rigor"))).unwrap())
        .clone()
}

fn temp_dir(name: &str) -> PathBuf {
    agent_support::temp_dir("agent", name)
}

fn spec(srv: &Server, connections: usize, secs: u64) -> LoadSpec {
    LoadSpec {
        url: format!("http://{}/plaintext", srv.addr()),
        connections,
        threads: 1,
        duration: Duration::from_secs(secs),
        ..LoadSpec::default()
    }
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(needle))
                .unwrap_or(false)
        })
        .collect()
}

#[test]
fn two_agents_split_the_load_and_merge_exactly() {
    let cache = temp_dir("split");
    let srv = server();
    let bin = rigor_binary();
    let mut a = Agent::connect_with(&local_host("load1", &cache), &bin).unwrap();
    let mut b = Agent::connect_with(&local_host("load2", &cache), &bin).unwrap();
    assert_eq!(
        b.install(),
        Install::Reused,
        "the second connect reuses the binary"
    );
    assert!(a.host_info().cpus >= 1);
    for agent in [&mut a, &mut b] {
        let o = agent.clock_offset().unwrap();
        // Same machine, same clock: the offset is within the round trip.
        assert!(
            o.offset_ns.unsigned_abs() as u128 <= o.rtt.as_nanos() + 5_000_000,
            "{o:?}"
        );
    }
    let start = SystemTime::now() + Duration::from_millis(1500);
    a.start_load("run1", &spec(&srv, 4, 2), start).unwrap();
    b.start_load("run1", &spec(&srv, 4, 2), start).unwrap();
    let ra = a.wait_load("run1", Duration::from_secs(30)).unwrap();
    let rb = b.wait_load("run1", Duration::from_secs(30)).unwrap();
    std::thread::sleep(Duration::from_millis(150));

    let m = merge(&[ra.clone(), rb.clone()]);
    assert!(
        ra.requests > 0 && rb.requests > 0,
        "{} {}",
        ra.requests,
        rb.requests
    );
    assert_eq!(m.requests, ra.requests + rb.requests);
    assert_eq!(m.connections, 8);
    assert_eq!(
        srv.stats().requests,
        m.requests,
        "the server answered exactly what the agents measured"
    );
    assert_eq!(m.errors.total(), 0, "{:?}", m.errors);

    let mut union = ra.latency_histogram.clone().unwrap();
    union.add(rb.latency_histogram.as_ref().unwrap()).unwrap();
    assert_eq!(m.latency.count, union.len());
    assert_eq!(m.latency.count, m.requests);
    for (p, got) in [
        (50.0, m.latency.p50_ms),
        (90.0, m.latency.p90_ms),
        (99.0, m.latency.p99_ms),
        (99.9, m.latency.p999_ms),
    ] {
        assert_eq!(got, union.value_at_percentile(p) as f64 / 1000.0, "p{p}");
    }
    assert_eq!(m.latency.max_ms, union.max() as f64 / 1000.0);
    drop((a, b));
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn killing_the_transport_mid_load_names_the_host_and_leaves_no_agent() {
    let cache = temp_dir("kill");
    let srv = server();
    let mut a = Agent::connect_with(&local_host("load1", &cache), &rigor_binary()).unwrap();
    a.start_load("long", &spec(&srv, 2, 30), SystemTime::now())
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let pid = a.transport_pid();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let e = a.wait_load("long", Duration::from_secs(10)).unwrap_err();
    assert!(matches!(e, AgentError::Transport { .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.starts_with("host load1: "), "{e}");
    assert!(e.contains("died") && e.contains("signal 9"), "{e}");
    drop(a);
    let needle = cache.display().to_string();
    assert_eq!(processes_mentioning(&needle), Vec::<u32>::new());
    let _ = std::fs::remove_dir_all(&cache);
}

/// The remote half of a dead transport: ssh gone, sshd closes the agent's stdin.
#[test]
fn a_closed_stdin_stops_the_load_and_the_agent() {
    let srv = server();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rigor"))
        .args(["agent", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let spec = agent::protocol::SpecWire::from(&spec(&srv, 2, 60));
    let load = agent::protocol::ToAgent::Load {
        id: "x".into(),
        spec,
        start_at_unix_ns: agent::protocol::unix_ns(SystemTime::now()),
    };
    writeln!(stdin, "{}", agent::protocol::line(&load)).unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let l = lines.next().expect("progress").unwrap();
        if l.contains("\"measuring\"") {
            break;
        }
    }
    assert!(srv.stats().requests > 0);
    drop(stdin);
    let closed = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            closed.elapsed() < Duration::from_secs(5),
            "the agent still runs 5 s after its stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let before = srv.stats().requests;
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        srv.stats().requests,
        before,
        "the load stopped with the agent"
    );
}

#[test]
fn the_agent_refuses_another_protocol_and_survives_unknown_messages() {
    let run = |input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rigor"))
            .args(["agent", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(
        "{\"type\":\"hello\",\"protocol\":99,\"rigor_version\":\"9.9\"}\n{\"type\":\"clock\"}\n",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(
        text.contains("\"type\":\"error\"")
            && text.contains("version 99")
            && text.contains("version 4"),
        "{text}"
    );
    assert!(
        !text.contains("unix_ns"),
        "it stopped at the mismatch: {text}"
    );

    let out = run("{\"type\":\"teleport\"}\n{\"type\":\"clock\"}\n{\"type\":\"bye\"}\n");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("\"error\"") && lines[0].contains("teleport"));
    assert!(lines[1].starts_with("{\"type\":\"clock\",\"unix_ns\":"));
}

#[test]
fn install_copies_once_reuses_and_replaces_a_corrupt_binary() {
    let cache = temp_dir("install");
    let host = local_host("load1", &cache);
    let bin = rigor_binary();
    let a = Agent::connect_with(&host, &bin).unwrap();
    assert_eq!(a.install(), Install::Copied);
    drop(a);
    let installed = cache
        .join("rigor/agent")
        .join(&bin.sha256[..16])
        .join("rigor");
    assert_eq!(LocalBinary::new(&installed).unwrap().sha256, bin.sha256);
    let a = Agent::connect_with(&host, &bin).unwrap();
    assert_eq!(a.install(), Install::Reused);
    drop(a);
    // Replaced, not written in place: the agent's sentinel (a fork of it) may still be running
    // the file for a moment after the agent exited.
    std::fs::remove_file(&installed).unwrap();
    std::fs::write(&installed, b"#!/bin/sh\necho corrupted\n").unwrap();
    let a = Agent::connect_with(&host, &bin).unwrap();
    assert_eq!(a.install(), Install::Copied);
    drop(a);
    assert_eq!(LocalBinary::new(&installed).unwrap().sha256, bin.sha256);
    let leftovers: Vec<_> = std::fs::read_dir(installed.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers, ["rigor"], "no temporary file is left behind");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn a_login_banner_on_stdout_is_kept_as_a_log_even_when_it_starts_with_a_brace() {
    let dir = temp_dir("banner");
    let host = HostSpec {
        name: "chatty".into(),
        transport: Some(format!(
            "sh -c 'echo \"{{ Welcome to the lab }}\"; echo motd; exec \"$0\" \"$@\"' env \
             XDG_CACHE_HOME={}",
            sh_quote(&dir.display().to_string())
        )),
        ..HostSpec::default()
    };
    let mut agent = Agent::connect_with(&host, &rigor_binary()).expect("connects");
    agent.clock_offset().expect("speaks");
}

#[test]
fn another_architecture_and_an_unreachable_host_are_clear_errors() {
    let dir = temp_dir("arch");
    let fake = dir.join("bin");
    std::fs::create_dir_all(&fake).unwrap();
    let uname = fake.join("uname");
    std::fs::write(
        &uname,
        "#!/bin/sh\ncase \"$1\" in -s) echo Linux;; -m) echo sparc64;; esac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&uname, std::fs::Permissions::from_mode(0o755)).unwrap();
    let host = HostSpec {
        name: "odd".into(),
        transport: Some(format!(
            "env PATH={}:/usr/bin:/bin XDG_CACHE_HOME={}",
            fake.display(),
            dir.display()
        )),
        ..HostSpec::default()
    };
    let e = Agent::connect_with(&host, &rigor_binary()).err().unwrap();
    assert!(matches!(e, AgentError::Install { .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.starts_with("host odd: the host is sparc64"), "{e}");

    if Command::new("ssh").arg("-V").output().is_err() {
        testkit::skip("no ssh client installed");
        return;
    }
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let host = HostSpec {
        name: "gone".into(),
        ssh: Some("nobody@127.0.0.1".into()),
        port: Some(closed_port),
        options: [
            "-F",
            "/dev/null",
            "-o",
            "ConnectTimeout=5",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
        ]
        .map(String::from)
        .to_vec(),
        ..HostSpec::default()
    };
    let e = Agent::connect_with(&host, &rigor_binary()).err().unwrap();
    assert!(matches!(e, AgentError::Transport { .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.starts_with("host gone: ssh could not reach the host or was refused (exit 255)"),
        "{e}"
    );
    assert!(e.contains("refused"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
