//! `rigor load` as a user drives it: bad flags are usage errors before anything is printed,
//! `--json -` keeps stdout for JSON, and Ctrl-C ends with what was measured and exit 130.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn rigor() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rigor"))
}

/// A server on loopback that hands each connection to `serve` on a thread of its own.
fn server(serve: fn(TcpStream)) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream));
        }
    });
    addr
}

/// A minimal keep-alive HTTP server on loopback answering every request with `ok`.
fn ok_server() -> SocketAddr {
    server(|mut s| {
        let mut buf = [0u8; 4096];
        let mut pending: Vec<u8> = Vec::new();
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                return;
            }
            pending.extend_from_slice(&buf[..n]);
            while let Some(p) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                pending.drain(..p + 4);
                let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                if s.write_all(answer).is_err() {
                    return;
                }
            }
        }
    })
}

#[test]
fn usage_errors_exit_2_before_any_banner() {
    let url = format!("http://{}/", ok_server());
    for (args, needle) in [
        (vec!["-c", "0"], "connections"),
        (vec!["-c", "18446744073709551615"], "connections"),
        (vec!["-t", "0"], "threads"),
        (vec!["-t", "100000"], "threads"),
        (vec!["--pipeline", "100000000000"], "pipeline"),
        (vec!["--pipeline", "0"], "pipeline"),
        (vec!["-d", "999999h"], "duration"),
        (vec!["-w", "999999h"], "warmup"),
        (vec!["--timeout", "0s"], "timeout"),
        (vec!["--rate", "0"], "rate"),
        (vec!["--rate", "NaN"], "rate"),
        (vec!["--rate", "1e300"], "rate"),
        (vec!["--rate", "1e-300"], "rate"),
        (vec!["--rate", "0.0009"], "rate"),
        (vec!["-m", "G T"], "G T"),
        (vec!["-H", "no colon"], "no colon"),
        (vec!["--cpus", "99999"], "99999"),
    ] {
        let mut cmd = rigor();
        cmd.arg("load").arg(&url).args(&args);
        if !args.contains(&"-d") {
            cmd.args(["-d", "1s"]);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("Running"), "{args:?}: {stderr}");
        assert!(!stderr.contains("multiple times"), "{args:?}: {stderr}");
    }
    let out = rigor().args(["load", "ftp://127.0.0.1/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("ftp"));
}

#[test]
fn json_to_stdout_is_json_alone() {
    let url = format!("http://{}/", ok_server());
    let out = rigor()
        .args(["load", &url, "-c", "4", "-d", "500ms", "--json", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(doc["schema"], "rigor.load.v1");
    assert!(doc["measurements"]["load.requests"].as_f64().unwrap() > 0.0);
    assert_eq!(doc["measurements"]["load.errors.parse"].as_f64(), Some(0.0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Requests/sec"), "{stderr}");
}

#[test]
fn ctrl_c_prints_what_was_measured_and_exits_130() {
    let url = format!("http://{}/", ok_server());
    let dir = std::env::temp_dir().join(format!("rigor-load-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("out.json");
    let child = rigor()
        .args(["load", &url, "-c", "4", "-d", "30s", "--json"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let start = Instant::now();
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(5));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stdout.contains("Requests/sec"), "{stdout}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["report"]["cancelled"], true);
    assert!(doc["report"]["requests"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn parse_failures_are_explained_in_the_text_and_the_json() {
    let addr = server(|mut s| {
        let mut buf = [0u8; 4096];
        while matches!(s.read(&mut buf), Ok(n) if n > 0) {
            if s.write_all(b"SPDY/9 nonsense\r\n\r\n").is_err() {
                return;
            }
        }
    });
    let out = rigor()
        .args(["load", &format!("http://{addr}/"), "-c", "2", "-d", "500ms"])
        .args(["--json", "-"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Parse failures: invalid status line") && stderr.contains("SPDY/9"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let parse = doc["measurements"]["load.errors.parse"].as_f64().unwrap();
    assert!(parse > 0.0);
    assert_eq!(
        doc["measurements"]["load.socket_errors"].as_f64(),
        Some(parse)
    );
    assert_eq!(
        doc["report"]["parse_failures"][0]["reason"],
        "invalid status line"
    );
}

#[test]
fn a_closed_stdout_does_not_crash_the_load() {
    // `rigor load … | head -0`: the reader is gone before the summary is printed.
    let url = format!("http://{}/", ok_server());
    let mut child = rigor()
        .args(["load", &url, "-c", "2", "-d", "300ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A server that answers the first request of each connection and closes it: with a pipeline,
/// the rest are lost, and `rigor load` must count and say so.
#[test]
fn requests_lost_with_a_closed_connection_are_errors_in_the_text_and_the_json() {
    let addr = server(|mut s| {
        let mut buf = [0u8; 4096];
        let mut got: Vec<u8> = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            match s.read(&mut buf) {
                Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                _ => return,
            }
        }
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    });
    let out = rigor()
        .args(["load", &format!("http://{addr}/"), "-c", "2", "-d", "400ms"])
        .args(["--pipeline", "8", "--json", "-"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("closed") && stderr.contains("not re-sent"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &doc["measurements"];
    let closed = m["load.errors.closed"].as_f64().unwrap();
    let answered = m["load.requests"].as_f64().unwrap();
    assert!(closed >= 6.0 * answered && answered > 0.0, "{m}");
    assert!(m["load.socket_errors"].as_f64().unwrap() >= closed, "{m}");
    let warned = doc["report"]["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "load_errors")
        .expect("a load_errors warning");
    let said = format!("closed: {closed} requests were outstanding");
    assert!(
        warned["message"].as_str().unwrap().contains(&said),
        "{warned}"
    );
}

/// `--io` picks the engine's I/O path and the JSON and the summary say which ran; `auto`
/// takes io_uring exactly where the kernel has it, and asking for it where it does not is an
/// error naming why.
#[test]
fn io_path_is_chosen_by_flag_and_recorded_in_the_json() {
    let url = format!("http://{}/", ok_server());
    let run = |io: &str| {
        rigor()
            .args([
                "load", &url, "-c", "2", "-d", "300ms", "--io", io, "--json", "-",
            ])
            .output()
            .unwrap()
    };
    let io_of = |out: &std::process::Output| {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        v["report"]["io"].as_str().map(str::to_string)
    };
    let epoll = run("epoll");
    assert!(
        epoll.status.success(),
        "{}",
        String::from_utf8_lossy(&epoll.stderr)
    );
    assert_eq!(io_of(&epoll).as_deref(), Some("epoll"));
    assert!(String::from_utf8_lossy(&epoll.stderr).contains("I/O: epoll"));
    let auto = run("auto");
    let uring = run("io_uring");
    match rigor_load::io_uring_support() {
        Ok(()) => {
            assert_eq!(io_of(&auto).as_deref(), Some("io_uring"));
            assert_eq!(io_of(&uring).as_deref(), Some("io_uring"));
        }
        Err(why) => {
            assert_eq!(io_of(&auto).as_deref(), Some("epoll"));
            let stderr = String::from_utf8_lossy(&uring.stderr);
            assert_eq!(uring.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains(&why.to_string()), "{stderr}");
        }
    }
    // https:// stays on epoll: asking for io_uring is a usage error before anything runs.
    let tls = rigor()
        .args(["load", "https://127.0.0.1:1/", "--io", "io_uring"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&tls.stderr);
    assert_eq!(tls.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("https://") && !stderr.contains("Running"),
        "{stderr}"
    );
    let bad = rigor()
        .args(["load", &url, "--io", "kqueue"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("io_uring"));
}

/// A cgroup v1 `pids` group allowing `max` tasks (threads count), removed when dropped.
struct PidsGroup(std::path::PathBuf);

impl PidsGroup {
    fn new(name: &str, max: u32) -> Option<PidsGroup> {
        let root = std::path::Path::new("/sys/fs/cgroup/pids");
        if !root.join("cgroup.procs").is_file() {
            return None;
        }
        let dir = root.join(format!("rigor-test-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("pids.max"), max.to_string()).unwrap();
        Some(PidsGroup(dir))
    }
}

impl Drop for PidsGroup {
    fn drop(&mut self) {
        for pid in std::fs::read_to_string(self.0.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
        {
            let _ = Command::new("kill").args(["-9", pid]).status();
        }
        std::thread::sleep(Duration::from_millis(200));
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
#[ignore = "needs root"]
fn threads_the_machine_will_not_give_are_an_error_not_a_panic_or_a_hang() {
    testkit::require_root();
    let Some(group) = PidsGroup::new("threads", 8) else {
        testkit::skip("no cgroup v1 pids controller at /sys/fs/cgroup/pids");
        return;
    };
    let url = format!("http://{}/", ok_server());
    // rigor joins the group before it starts: 8 tasks cannot hold it, its helpers and 8 workers.
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} load -c 50 -t 8 -d 1s -w 0s {url}",
        group.0.display(),
        env!("CARGO_BIN_EXE_rigor")
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() >= deadline {
            // The hang this test is about: SIGTERM first, as a user would, then the group.
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            std::thread::sleep(Duration::from_secs(2));
            drop(group);
            panic!("rigor load did not end within 60 s in a group of 8 tasks");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("cannot start load thread") && stderr.contains("of 8"),
        "{stderr}"
    );
}

#[test]
fn a_find_rate_start_too_low_for_a_few_requests_per_probe_is_a_usage_error() {
    let url = format!("http://{}/", ok_server());
    let out = rigor()
        .args(["load", &url, "--find-rate", "p99<50ms", "--rate", "0.05"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--rate (the search's start): start 0.05 rps sends fewer than 10 requests in a probe of 3s"),
        "{stderr}"
    );
    assert!(!stderr.contains("Finding"), "{stderr}");
}

#[test]
fn a_body_lines_file_over_64_mib_is_refused_naming_the_file_before_it_is_read() {
    let url = format!("http://{}/", ok_server());
    let dir = std::env::temp_dir().join(format!("rigor-load-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Sparse: 300 MiB by its size, nothing on disk.
    std::fs::File::create(dir.join("bodies.txt"))
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    let mix = dir.join("mix.toml");
    std::fs::write(
        &mix,
        "[[requests]]\npath = \"/\"\nmethod = \"POST\"\nbody_lines = \"bodies.txt\"\n",
    )
    .unwrap();
    let out = rigor()
        .args(["load", &url, "-d", "1s", "--requests"])
        .arg(&mix)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "requests[1]: body_lines `{}`: 300.0 MiB is more than the 64 MiB",
            dir.join("bodies.txt").display()
        )),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
