//! The fault matrix: Ctrl-C (SIGINT), SIGTERM, a second signal and SIGKILL delivered to rigor in
//! every phase — build, start/readiness, warmup, measured load, stop. Whatever the signal, no
//! process of the application (a compound command, so the server is a grandchild) and no cgroup
//! survives rigor; except after SIGKILL, the result file is valid, not "running", and keeps the
//! iterations that finished.

use crate::common;
use common::marks::*;
use common::*;
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Build,
    Ready,
    Warmup,
    Measure,
    Stop,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Signal {
    Int,
    Term,
    /// SIGTERM, then Ctrl-C while rigor is stopping.
    Twice,
    Kill,
}

const SIGNALS: [Signal; 4] = [Signal::Int, Signal::Term, Signal::Twice, Signal::Kill];

fn toml(phase: Phase, port: u16, token: &str) -> String {
    let (flags, build, stop, warmup, duration) = match phase {
        Phase::Build => ("", "build = \"sleep 60\"", "2s", "200ms", "1s"),
        Phase::Ready => ("--never-ready", "", "2s", "200ms", "1s"),
        Phase::Warmup => ("", "", "2s", "60s", "1s"),
        Phase::Measure => ("", "", "2s", "200ms", "60s"),
        Phase::Stop => ("--ignore-sigterm", "", "60s", "200ms", "1s"),
    };
    // A compound command, so the server is rigor's grandchild.
    let command = format!(
        "cd . && {} --port {port} --threads 1 {flags}",
        hello_server().display()
    );
    let toml = with_command(&config(port, "", "/plaintext", ""), port, &command);
    with_app(&toml, &format!("env = {{ {MARK} = \"{token}\" }}\n{build}"))
        .replace("timeout = \"10s\"", "timeout = \"60s\"")
        .replace(
            "stop_timeout = \"2s\"",
            &format!("stop_timeout = \"{stop}\""),
        )
        .replace("connections = 8", "connections = 4")
        .replace("warmup = \"300ms\"", &format!("warmup = \"{warmup}\""))
        .replace("duration = \"1s\"", &format!("duration = \"{duration}\""))
}

fn listening(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// Established TCP connections whose local port is `port` (the server's side of the load).
fn established(port: u16) -> usize {
    let want = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|t| t.lines().skip(1).map(str::to_string).collect::<Vec<_>>())
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(&want) && f[3] == "01"
        })
        .count()
}

/// Waits until rigor is in `phase`.
fn reach(phase: Phase, port: u16, token: &str) {
    let long = Duration::from_secs(90);
    let has = |comm: &str| marked(token).iter().any(|(_, c)| c == comm);
    match phase {
        Phase::Build => wait_for("the build", long, || has("sleep")),
        Phase::Ready => {
            wait_for("the application", long, || has("hello-server"));
            std::thread::sleep(Duration::from_millis(300));
        }
        Phase::Warmup | Phase::Measure | Phase::Stop => {
            wait_for("the application to listen", long, || listening(port));
            // The load's 4 connections are open: warmup (60 s long in that phase).
            wait_for("the load", long, || established(port) >= 4);
            match phase {
                // Warmup lasts 200 ms, then 60 s of measured load.
                Phase::Measure => std::thread::sleep(Duration::from_millis(1500)),
                // The load is over (its connections closed) and the app ignores SIGTERM for 60 s.
                Phase::Stop => {
                    wait_for("the end of the load", long, || established(port) == 0);
                    std::thread::sleep(Duration::from_millis(300));
                    assert!(has("hello-server"), "the application is already gone");
                }
                _ => std::thread::sleep(Duration::from_millis(300)),
            }
        }
    }
}

fn send(pid: u32, sig: i32) {
    // SAFETY: kill only sends a signal, to the rigor this test started.
    unsafe { libc::kill(pid as i32, sig) };
}

fn case(phase: Phase, signal: Signal) -> anyhow::Result<()> {
    let port = free_port();
    let token = token(&format!("{phase:?}-{signal:?}").to_lowercase());
    let dir = temp_dir(&token);
    std::fs::write(dir.join("rigor.toml"), toml(phase, port, &token)).unwrap();
    let mut child = spawn_rigor(&dir, &one_iteration());
    let _cleanup = Cleanup {
        token: token.clone(),
        pids: vec![child.id() as i32],
    };
    let pid = child.id();
    reach(phase, port, &token);
    match signal {
        Signal::Int => send(pid, libc::SIGINT),
        Signal::Term => send(pid, libc::SIGTERM),
        Signal::Twice => {
            send(pid, libc::SIGTERM);
            std::thread::sleep(Duration::from_millis(100));
            send(pid, libc::SIGINT);
        }
        Signal::Kill => send(pid, libc::SIGKILL),
    }
    let status = wait_exit(&mut child, Duration::from_secs(30));
    let mut problems = Vec::new();
    let left = left_after(&token, Duration::from_secs(5));
    if !left.is_empty() {
        problems.push(format!("processes left: {left:?}"));
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !rigor_cgroups(pid).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let cgroups = rigor_cgroups(pid);
    if !cgroups.is_empty() {
        problems.push(format!("cgroups left: {cgroups:?}"));
    }
    let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default();
    if signal != Signal::Kill {
        if status.code() != Some(1) {
            problems.push(format!("exit status {status}, expected 1"));
        }
        if stderr.contains("panicked") {
            problems.push("a panic".into());
        }
        if signal == Signal::Term && (!stderr.contains("SIGTERM") || stderr.contains("Ctrl-C")) {
            problems.push("the SIGTERM message does not name SIGTERM".into());
        }
        check_result(&dir.join("result.json"), phase, &mut problems);
    }
    let _ = std::fs::remove_dir_all(&dir);
    if problems.is_empty() {
        Ok(())
    } else {
        anyhow::bail!(
            "{phase:?} + {signal:?}: {}\n--- stderr ---\n{stderr}",
            problems.join("; ")
        )
    }
}

fn check_result(path: &Path, phase: Phase, problems: &mut Vec<String>) {
    let json: serde_json::Value = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(j) => j,
        Err(e) => {
            problems.push(format!("no valid result file: {e}"));
            return;
        }
    };
    if json["status"] != "interrupted" {
        problems.push(format!("status {}, expected interrupted", json["status"]));
    }
    if phase == Phase::Stop {
        // The load had finished: that iteration is kept, with its figures.
        let it = &json["rows"][0]["iterations"][0];
        if !it["error"].is_null() || m(it, "load.rps").is_none() {
            problems.push(format!("the finished iteration was not kept: {it}"));
        }
    }
}

fn matrix(phase: Phase) {
    let failures: Vec<String> = SIGNALS
        .iter()
        .filter_map(|s| case(phase, *s).err().map(|e| e.to_string()))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn signals_during_the_build_leave_nothing_behind() {
    matrix(Phase::Build);
}

#[test]
fn signals_while_waiting_for_readiness_leave_nothing_behind() {
    matrix(Phase::Ready);
}

#[test]
fn signals_during_warmup_leave_nothing_behind() {
    matrix(Phase::Warmup);
}

#[test]
fn signals_during_the_measured_load_leave_nothing_behind() {
    matrix(Phase::Measure);
}

#[test]
fn signals_while_stopping_leave_nothing_behind_and_keep_the_finished_iteration() {
    matrix(Phase::Stop);
}
