//! The `hello-server` binary as rigor sees it: output lines, signals, exit codes, flags.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::Client;

fn server(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hello-server"));
    if !args.contains(&"--port") {
        cmd.args(["--port", "0"]);
    }
    cmd.args(["--threads", "2"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Keep the caller's environment from changing what the flags say.
    for (k, _) in std::env::vars() {
        if k.starts_with("HELLO_") {
            cmd.env_remove(k);
        }
    }
    cmd
}

/// Starts the binary and waits for its listening line.
fn spawn(cmd: &mut Command) -> (Child, BufReader<ChildStdout>, SocketAddr) {
    let mut child = cmd.spawn().expect("spawn hello-server");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let rest = line
        .strip_prefix("hello-server listening on ")
        .expect(&line);
    let mut parts = rest.split_whitespace();
    let addr: SocketAddr = parts.next().unwrap().parse().unwrap();
    assert_eq!(parts.next(), Some("pid"));
    assert_eq!(parts.next().unwrap().parse::<u32>().unwrap(), child.id());
    (child, out, addr)
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: sending a signal to a child we own.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

fn wait_timeout(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

fn stderr_of(child: &mut Child) -> String {
    let mut s = String::new();
    child.stderr.take().unwrap().read_to_string(&mut s).unwrap();
    s
}

#[test]
fn sigterm_prints_stats_line_and_exits_zero() {
    let (mut child, mut out, addr) = spawn(&mut server(&[]));
    let mut c = Client::connect(addr);
    for _ in 0..7 {
        assert_eq!(c.get("/plaintext").status, 200);
    }
    c.get("/health");
    signal(&child, libc::SIGTERM);
    let status = wait_timeout(&mut child, Duration::from_secs(5)).expect("exits on SIGTERM");
    assert_eq!(status.code(), Some(0));
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let json = line.strip_prefix("hello-server stats: ").expect(&line);
    let v: serde_json::Value = serde_json::from_str(json.trim_end()).unwrap();
    assert_eq!(v["requests"], 7);
    assert_eq!(v["by_path"]["/health"], 1);
    assert_eq!(v["connections"], 1);
}

#[test]
fn sigint_also_stops_gracefully() {
    let (mut child, _out, _addr) = spawn(&mut server(&[]));
    signal(&child, libc::SIGINT);
    let status = wait_timeout(&mut child, Duration::from_secs(5)).expect("exits on SIGINT");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn ignore_sigterm_keeps_serving_until_sigkill() {
    let (mut child, _out, addr) = spawn(&mut server(&["--ignore-sigterm"]));
    signal(&child, libc::SIGTERM);
    assert!(wait_timeout(&mut child, Duration::from_millis(300)).is_none());
    assert_eq!(Client::connect(addr).get("/plaintext").status, 200);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn exit_at_start_exits_2_before_listening() {
    let output = server(&["--exit-at-start"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("fatal: told to exit at start"));
    assert!(output.stdout.is_empty());
}

#[test]
fn exit_after_requests_crashes_with_code_3() {
    let (mut child, _out, addr) = spawn(&mut server(&["--exit-after-requests", "5"]));
    let mut c = Client::connect(addr);
    assert_eq!(c.get("/health").status, 200); // probes do not count
    for _ in 0..5 {
        assert_eq!(c.get("/plaintext").status, 200);
    }
    let status = wait_timeout(&mut child, Duration::from_secs(5)).expect("exits");
    assert_eq!(status.code(), Some(3));
    assert!(stderr_of(&mut child).contains("--exit-after-requests"));
}

#[test]
fn port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let output = server(&["--port", &port]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("cannot listen on 127.0.0.1:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_flags_are_usage_errors() {
    for args in [
        &["--error-rate", "2"][..],
        &["--threads", "zero"],
        &["--no-such-flag"],
    ] {
        let output = server(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn env_vars_configure_and_flags_win() {
    let (mut child, _out, addr) = spawn(server(&[]).env("HELLO_BODY_SIZE", "5"));
    assert_eq!(Client::connect(addr).get("/plaintext").text(), "Hello");
    child.kill().unwrap();
    child.wait().unwrap();

    let (mut child, _out, addr) = spawn(server(&["--body-size", "3"]).env("HELLO_BODY_SIZE", "5"));
    assert_eq!(Client::connect(addr).get("/plaintext").text(), "Hel");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn spawn_child_lives_with_the_server_and_goes_with_it() {
    let (mut child, _out, _addr) = spawn(&mut server(&["--spawn-child"]));
    let pid = child.id();
    let children = |pid: u32| -> Vec<u32> {
        let path = format!("/proc/{pid}/task/{pid}/children");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect()
    };
    let kids = children(pid);
    assert_eq!(kids.len(), 1, "{kids:?}");
    let kid = kids[0];
    signal(&child, libc::SIGTERM);
    assert_eq!(
        wait_timeout(&mut child, Duration::from_secs(5))
            .unwrap()
            .code(),
        Some(0)
    );
    // Reaped by the server before it exited, so the pid is gone (or reused, not as our kid).
    let alive = std::fs::read_to_string(format!("/proc/{kid}/stat"))
        .map(|s| s.contains(&format!(" {pid} ")))
        .unwrap_or(false);
    assert!(!alive, "child {kid} outlived the server");
}

#[test]
fn read_file_warms_page_cache_before_listening() {
    let path = std::env::temp_dir().join(format!("hello-server-bin-read-{}", std::process::id()));
    let path_s = path.to_str().unwrap();
    let mut child = server(&["--read-file", path_s, "--read-file-mib", "2"])
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("hello-server read 2 MiB from "), "{line}");
    line.clear();
    out.read_line(&mut line).unwrap();
    assert!(line.starts_with("hello-server listening on "), "{line}");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 << 20);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn shutdown_knobs_drop_threads_then_grow_and_linger() {
    let (mut child, _out, _addr) = spawn(&mut server(&[
        "--shutdown-hold-mib",
        "64",
        "--shutdown-linger-ms",
        "1500",
    ]));
    let status_of = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let value = |status: &str, key: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap()
    };
    assert!(value(&status_of(child.id()), "Threads:") >= 3);
    signal(&child, libc::SIGTERM);
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    let mut seen = false;
    while std::time::Instant::now() < deadline && !seen {
        let s = status_of(child.id());
        seen = value(&s, "Threads:") == 1 && value(&s, "VmRSS:") >= 64 * 1024;
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(seen, "one thread and 64 MiB resident while lingering");
    let status = wait_timeout(&mut child, Duration::from_secs(5)).expect("exits after lingering");
    assert_eq!(status.code(), Some(0));
}
