//! `rigor run` when things go wrong: each fault is a clear message, the iteration is marked
//! failed with its reason, exit code 1, and no process of the application is left behind.

use crate::common;
use common::*;
use std::time::{Duration, Instant};

fn assert_no_leftovers(port: u16) {
    let needle = format!("--port {port} ");
    let deadline = Instant::now() + Duration::from_secs(2);
    while !processes_with(&needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        processes_with(&needle).is_empty(),
        "processes left: {:?}",
        processes_with(&needle)
    );
}

fn failed(port: u16, flags: &str, extra_app: &str, args: &[&str]) -> (String, serde_json::Value) {
    let dir = temp_dir(&format!("fault-{port}"));
    let toml = with_app(&config(port, flags, "/plaintext", ""), extra_app);
    let (t, json) = run_exit(&dir, &toml, args, 1);
    assert_no_leftovers(port);
    (
        t,
        json.expect("a result is written even when iterations fail"),
    )
}

#[test]
fn app_that_exits_before_ready_shows_its_log_tail() {
    let port = free_port();
    let (t, json) = failed(port, "--exit-at-start", "", &["-i", "2", "--keep-going"]);
    assert!(
        t.contains("exited") && t.contains("before it was ready"),
        "{t}"
    );
    assert!(t.contains("told to exit at start"), "log tail missing: {t}");
    let its = iterations(&json);
    assert_eq!(its.len(), 2, "with --keep-going, other iterations go on");
    assert!(its.iter().all(|i| i["error"].is_string()));
    assert_eq!(json["status"], "failed");
}

#[test]
fn app_never_ready_times_out() {
    let port = free_port();
    let (t, _) = failed(port, "--never-ready", "", &["-i", "1"]);
    assert!(t.contains("not ready after"), "{t}");
    // What the last check saw: /health answers 503 until the server is ready.
    assert!(t.contains("last: status 503"), "{t}");
}

#[test]
fn app_crashing_mid_load_is_reported() {
    let port = free_port();
    let (t, json) = failed(port, "--exit-after-requests 2000", "", &["-i", "1"]);
    // The testbed exits with status 3 after 2000 answers, mid-way through the measured load.
    let it = &iterations(&json)[0];
    let error = it["error"].as_str().unwrap();
    assert!(
        error.starts_with("the application crashed during the load (exit status: 3)"),
        "{error}"
    );
    assert!(
        t.contains("crashed during the load (exit status: 3)"),
        "{t}"
    );
}

#[test]
fn app_ignoring_sigterm_is_killed_and_said_so() {
    let port = free_port();
    let dir = temp_dir("sigterm");
    let toml = config(port, "--ignore-sigterm --spawn-child", "/plaintext", "")
        .replace("stop_timeout = \"2s\"", "stop_timeout = \"500ms\"");
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    let it = &iterations(json.as_ref().unwrap())[0];
    let w = message(&it["warnings"], "ignored_sigterm");
    assert!(
        w.contains("ignored SIGTERM for") && w.contains("and was killed"),
        "{w}"
    );
    assert_no_leftovers(port);
    // --strict turns that warning into exit 4.
    run_exit(&dir, &toml, &["-i", "1", "--strict"], 4);
    assert_no_leftovers(port);
}

#[test]
fn a_taken_port_is_named_before_starting() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (t, _) = failed(port, "", "", &["-i", "1"]);
    assert!(
        t.contains(&format!(
            "port {port} is already taken by PID {}",
            std::process::id()
        )),
        "{t}"
    );
}

#[test]
fn a_failed_build_stops_with_its_log_tail() {
    let port = free_port();
    let (t, json) = failed(
        port,
        "",
        "build = \"echo compiling; echo 'error: it broke' >&2; exit 3\"",
        &["-i", "2"],
    );
    assert!(
        t.contains("build of `app` failed") && t.contains("error: it broke"),
        "{t}"
    );
    assert_eq!(
        iterations(&json).len(),
        0,
        "no iteration runs without a build"
    );
    let build_error = json["rows"][0]["build_error"].as_str().unwrap_or_default();
    assert!(
        build_error.contains("build of `app` failed") && build_error.contains("error: it broke"),
        "{json}"
    );
}

#[test]
fn a_missing_or_stale_artifact_is_an_error() {
    let port = free_port();
    let (t, _) = failed(
        port,
        "",
        "build = \"true\"\nartifact = \"no-such-file\"",
        &["-i", "1"],
    );
    assert!(
        t.contains("artifact of `app` not found") && t.contains("no-such-file"),
        "{t}"
    );
    // An artifact older than a source beside it, that the build did not rewrite: stale.
    let port = free_port();
    let dir = temp_dir("stale");
    std::fs::write(dir.join("app.bin"), "old").unwrap();
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(dir.join("main.c"), "int main(){}").unwrap();
    let toml = with_app(
        &config(port, "", "/plaintext", ""),
        "build = \"true\"\nartifact = \"app.bin\"",
    );
    let (t, _) = run_exit(&dir, &toml, &["-i", "1"], 1);
    assert!(t.contains("stale artifact") && t.contains("main.c"), "{t}");
}

#[test]
fn bad_config_names_file_line_and_key() {
    let dir = temp_dir("badcfg");
    let toml =
        config(free_port(), "", "/plaintext", "").replace("connections = 8", "conections = 8");
    let (out, _) = run(&dir, &toml, &[]);
    let t = text(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "an invalid config is a usage error: {t}"
    );
    assert!(t.contains("rigor.toml:") && t.contains("conections"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    let (out, _) = run(
        &dir,
        "[scenarios.x]\napplication = \"nope\"\nload = \"nope\"\n",
        &[],
    );
    let t = text(&out);
    assert!(t.contains("rigor.toml:2") && t.contains("`nope`"), "{t}");
    let out = rigor(&dir, &["run", "-f", "missing.toml"]);
    assert!(text(&out).contains("missing.toml"), "{}", text(&out));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ctrl_c_keeps_finished_iterations_and_leaves_no_process() {
    let port = free_port();
    let dir = temp_dir("ctrlc");
    let toml = config(port, "--spawn-child", "/plaintext", "")
        .replace("duration = \"1s\"", "duration = \"3s\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let mut child = rigor_command(&dir, &[RUN, &["-i", "3"]].concat())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first iteration is written and the second is under load.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let done = try_result(&dir).map_or(0, |j| iterations(&j).len());
        if done >= 1 {
            break;
        }
        assert!(Instant::now() < deadline, "first iteration never finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1200));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let json = result(&dir);
    assert_eq!(json["status"], "interrupted");
    let its = iterations(&json);
    assert!(
        its.iter().any(|i| i["error"].is_null()),
        "the finished iteration is kept: {its:?}"
    );
    assert_no_leftovers(port);
}

#[test]
fn an_interrupt_shortens_the_sigterm_grace_and_the_warning_says_so() {
    let port = free_port();
    let dir = temp_dir("sigterm-interrupted");
    let toml = config(port, "--ignore-sigterm", "/plaintext", "")
        .replace("stop_timeout = \"2s\"", "stop_timeout = \"10s\"")
        .replace("duration = \"1s\"", "duration = \"30s\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let mut child = common::marks::spawn_rigor(&dir, &common::marks::one_iteration());
    let needle = format!("--port {port} ");
    let deadline = Instant::now() + Duration::from_secs(30);
    while processes_with(&needle).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Ready, warmup over, well into the measured load.
    std::thread::sleep(Duration::from_millis(2000));
    // SAFETY: kill only sends SIGINT to the rigor this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    common::marks::wait_exit(&mut child, Duration::from_secs(30));
    assert_no_leftovers(port);
    let json = result(&dir);
    let it = &iterations(&json)[0];
    let w = warning(&it["warnings"], "ignored_sigterm");
    let message = w["message"].as_str().unwrap();
    // The interrupt cut the grace to about 2 s: the 10 s `stop_timeout` is not what it had,
    // and raising it would not have helped.
    assert!(!message.contains("for 10.0s"), "{w}");
    assert!(message.contains("interrupted"), "{w}");
    assert!(
        !w["advice"].as_str().unwrap().contains("stop_timeout"),
        "{w}"
    );
}

/// The testbed on a free port, outside any limit a test sets on rigor; killed when dropped.
struct Server {
    child: std::process::Child,
    port: u16,
}

impl Server {
    fn start() -> Server {
        let port = free_port();
        let child = std::process::Command::new(hello_server())
            .args(["--port", &port.to_string(), "--threads", "1"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the testbed");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the testbed never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/plaintext", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// rigor under `ulimit -v kib` (a shell sets it, then becomes rigor), in `dir`.
fn under_ulimit_v(dir: &std::path::Path, kib: u64, args: &str) -> std::process::Output {
    let script = format!(
        "ulimit -v {kib} && exec {} {args}",
        env!("CARGO_BIN_EXE_rigor")
    );
    std::process::Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// A limit's outcome: rigor finished, or said what it could not do and exited 1; never a
/// panic, an abort or a segfault. The dynamic loader failing before any of rigor's code runs
/// (exit 127, its own message) is the limit's edge, not rigor's.
fn assert_clean(kib: u64, what: &str, out: &std::process::Output) -> bool {
    let t = text(out);
    let loader = out.status.code() == Some(127) && t.contains("error while loading shared");
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)) || loader,
        "{what} under ulimit -v {kib}: {:?}\n{t}",
        out.status
    );
    assert!(!t.contains("panicked"), "{what} under ulimit -v {kib}: {t}");
    if out.status.code() == Some(1) {
        assert!(t.contains("error: "), "{what} under ulimit -v {kib}: {t}");
        return true;
    }
    false
}

#[test]
fn a_memory_limit_is_an_error_never_a_crash() {
    let server = Server::start();
    let dir = temp_dir("ulimit-v");
    // The lowest limit rigor starts under at all: below it the kernel or the loader refuse the
    // binary before any of rigor's code runs.
    let Some(floor) = (4_000..400_000)
        .step_by(500)
        .find(|&k| under_ulimit_v(&dir, k, "--version").status.success())
    else {
        skip("rigor --version never ran under ulimit -v");
        return;
    };
    eprintln!("rigor starts under ulimit -v {floor}");
    // From there up to the floor rigor states, the working commands are refused before any
    // thread starts (a thread the runtime cannot give a signal stack aborts the process); at
    // and above it, each limit fails somewhere else or not at all: the runtime's first
    // allocations, the load's threads, the engine's buffers.
    let load = format!("load {} -d 200ms -c 4", server.url());
    for kib in (floor..floor + 12_000).step_by(250) {
        let out = under_ulimit_v(&dir, kib, &load);
        assert!(assert_clean(kib, "rigor load", &out), "{}", text(&out));
        assert!(text(&out).contains("ulimit -v"), "{}", text(&out));
    }
    for kib in (256 * 1024..300 * 1024).step_by(4_096) {
        assert_clean(kib, "rigor load", &under_ulimit_v(&dir, kib, &load));
    }
    let toml = config(server.port, "", "/plaintext", "")
        .replace("duration = \"1s\"", "duration = \"300ms\"")
        .replace("warmup = \"300ms\"", "warmup = \"100ms\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    for kib in (floor..floor + 12_000)
        .step_by(1_000)
        .chain((256 * 1024..300 * 1024).step_by(8_192))
    {
        let out = under_ulimit_v(&dir, kib, "run -i 1 --no-store");
        assert_clean(kib, "rigor run", &out);
    }
}

#[test]
fn a_pids_limit_fails_cleanly_and_sigterm_is_heard() {
    let base = std::path::Path::new("/sys/fs/cgroup/pids");
    if !base.join("cgroup.procs").exists() {
        skip("no cgroup v1 pids controller mounted at /sys/fs/cgroup/pids");
        return;
    }
    let cg = base.join(format!("rigor-test-pids-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&cg) {
        skip(&format!("cannot make a pids cgroup ({e}): needs root"));
        return;
    }
    /// Removes the cgroup once its processes are gone.
    struct Remove(std::path::PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _remove = Remove(cg.clone());
    let server = Server::start();
    let dir = temp_dir("pids-max");
    let procs = cg.join("cgroup.procs");
    let (mut refused, mut interrupted) = (0, 0);
    for max in 2..=16 {
        std::fs::write(cg.join("pids.max"), max.to_string()).unwrap();
        let script = format!(
            "echo $$ > {} && exec {} load {} -c 50 -t 8 -d 10s",
            procs.display(),
            env!("CARGO_BIN_EXE_rigor"),
            server.url()
        );
        let mut child = std::process::Command::new("sh")
            .args(["-c", &script])
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
            .spawn()
            .unwrap();
        // Once the shell became rigor (it may already have failed and exited), SIGTERM.
        let exe = format!("/proc/{}/exe", child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_link(&exe).is_ok_and(|p| !p.ends_with("rigor"))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: kill only sends SIGTERM to the rigor this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let status = common::marks::wait_exit(&mut child, Duration::from_secs(15));
        let t = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
        assert!(!t.contains("panicked"), "pids.max {max}: {t}");
        match status.code() {
            Some(1) => {
                assert!(t.contains("cannot start"), "pids.max {max}: {t}");
                refused += 1;
            }
            Some(130) => interrupted += 1,
            _ => panic!("pids.max {max}: {status:?}\n{t}"),
        }
    }
    eprintln!("{refused} limits refused, {interrupted} loads ended by SIGTERM");
    assert!(refused > 0, "no pids.max from 2 to 16 stopped rigor load");
}

/// A variant that lost an iteration to a failure is told so: `-i 4` with one failed keeps 3,
/// which no verdict can come of, and the advice is not `-i 4` again (which would keep 3 again)
/// but an `-i` that counts the failure.
#[test]
fn too_few_kept_after_a_failure_counts_the_failure() {
    let dir = temp_dir("too-few-after-failure");
    let flag = dir.join("fail-once");
    std::fs::write(&flag, "").unwrap();
    let toml = format!(
        "[jobs.c]\ncommand = \"true\"\n\
         [scenarios.s]\ncommand = \"c\"\niterations = 4\n\
         [scenarios.s.variants.base]\n\
         [scenarios.s.variants.flaky]\n\
         command = \"if [ -e {f} ]; then rm {f}; exit 1; fi\"\n",
        f = flag.display()
    );
    let (out, json) = run(&dir, &toml, &["--no-store"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    let json = json.unwrap_or_else(|| panic!("no result: {t}"));
    let w = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "too_few_iterations")
        .unwrap_or_else(|| panic!("no too_few_iterations warning: {json}"));
    assert!(
        w["message"]
            .as_str()
            .unwrap()
            .starts_with("-i 4 with 1 failed leaves 3 per variant"),
        "{w}"
    );
    assert!(
        w["advice"].as_str().unwrap().contains("run at least -i 5"),
        "{w}"
    );
}
