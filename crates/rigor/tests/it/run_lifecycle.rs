//! Nothing is lost and nothing escapes: closed terminals, unwritable result paths, daemonising
//! applications, a rigor killed outright, applications that flood their output, and rows whose
//! application can never start.

use crate::common;
use common::marks::*;
use common::*;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// The testbed config with a marked environment, `command` replacing the plain server.
fn marked_config(port: u16, token: &str, command: &str) -> String {
    let toml = with_command(&config(port, "", "/plaintext", ""), port, command);
    with_app(&toml, &format!("env = {{ {MARK} = \"{token}\" }}"))
}

#[test]
fn a_closed_stdout_and_stderr_never_end_the_run() {
    let port = free_port();
    let dir = temp_dir("closed-pipes");
    std::fs::write(dir.join("rigor.toml"), config(port, "", "/plaintext", "")).unwrap();
    let mut child = rigor_command(&dir, &[RUN, &["-i", "2"]].concat())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _cleanup = Cleanup {
        token: "unused".into(),
        pids: vec![child.id() as i32],
    };
    // `rigor run … | head`: the reader goes away before rigor writes anything.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = wait_exit(&mut child, Duration::from_secs(120));
    let json = result(&dir);
    assert_eq!(json["status"], "complete", "{json}");
    assert_eq!(iterations(&json).len(), 2);
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(processes_with(&format!("--port {port} ")).is_empty());
}

#[test]
fn an_unwritable_result_path_is_refused_before_anything_runs() {
    let port = free_port();
    let dir = temp_dir("unwritable");
    std::fs::write(dir.join("not-a-folder"), "a file").unwrap();
    let toml = with_app(
        &config(port, "", "/plaintext", ""),
        "build = \"touch built\"",
    );
    let (t, json) = run_exit(&dir, &toml, &["--markdown", "not-a-folder/report.md"], 2);
    assert!(
        t.contains("--markdown") && t.contains("not-a-folder"),
        "{t}"
    );
    assert!(!dir.join("built").exists(), "the build ran: {t}");
    assert!(json.is_none(), "nothing was measured, nothing written");
    // A folder that does not exist yet is made.
    run_exit(&dir, &toml, &["-i", "1", "--csv", "new/deeper/r.csv"], 0);
    assert!(dir.join("new/deeper/r.csv").is_file());
}

#[test]
fn a_result_path_that_fails_at_the_end_lands_in_the_run_folder() {
    let port = free_port();
    let dir = temp_dir("late-failure");
    std::fs::write(dir.join("rigor.toml"), config(port, "", "/plaintext", "")).unwrap();
    let mut child = spawn_rigor(&dir, &[RUN, &["-i", "2", "--csv", "sub/r.csv"]].concat());
    let _cleanup = Cleanup {
        token: "unused".into(),
        pids: vec![child.id() as i32],
    };
    wait_for("the first iteration", Duration::from_secs(90), || {
        dir.join("sub/r.csv").is_file()
    });
    // The folder turns into a file while the second iteration runs.
    std::fs::remove_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub"), "in the way").unwrap();
    let status = wait_exit(&mut child, Duration::from_secs(90));
    let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    let run_dir = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let fallback = run_dir.join("report.csv");
    assert!(
        stderr.contains(&format!("saved to {} instead", fallback.display())),
        "{stderr}"
    );
    let csv = std::fs::read_to_string(&fallback).unwrap();
    assert!(csv.lines().count() >= 3, "both iterations: {csv}");
    assert_eq!(result(&dir)["status"], "complete");
}

/// Runs a config whose application leaves a `setsid` daemon behind; `as_nobody` runs rigor
/// unprivileged, so there is no cgroup to catch it. Either way the test needs root: to run rigor
/// as nobody, or to give the application a cgroup.
fn daemon_case(as_nobody: bool) {
    require_root();
    let port = free_port();
    let token = token(if as_nobody {
        "daemon-user"
    } else {
        "daemon-root"
    });
    let dir = temp_dir(&token);
    let command = format!(
        "setsid sleep 1000 & exec {} --port {port} --threads 1",
        hello_server().display()
    );
    std::fs::write(
        dir.join("rigor.toml"),
        marked_config(port, &token, &command),
    )
    .unwrap();
    let _cleanup = Cleanup {
        token: token.clone(),
        pids: vec![],
    };
    let mut cmd = rigor_command(&dir, &one_iteration());
    if as_nobody {
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        std::os::unix::fs::chown(dir.join("rigor.toml"), Some(65534), Some(65534)).unwrap();
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = result(&dir);
    let it = &iterations(&json)[0];
    let w = message(&it["warnings"], "left_behind");
    assert!(w.contains("(sleep)"), "{w}");
    let left = left_after(&token, Duration::from_secs(3));
    assert!(left.is_empty(), "left: {left:?}");
    if as_nobody {
        assert!(
            json["environment"].to_string().contains("unavailable"),
            "{json}"
        );
    } else {
        assert!(
            !json["environment"].to_string().contains("unavailable"),
            "the application had no cgroup: {}",
            json["environment"]
        );
    }
}

#[test]
#[ignore = "needs root"]
fn a_daemon_the_application_leaves_is_killed_and_named_without_a_cgroup() {
    daemon_case(true);
}

#[test]
#[ignore = "needs root"]
fn a_daemon_the_application_leaves_is_killed_and_named_with_a_cgroup() {
    daemon_case(false);
}

#[test]
fn what_a_dead_rigor_left_is_reported_and_removed_by_the_next_run() {
    let port = free_port();
    let token = token("dead-rigor");
    let dir = temp_dir(&token);
    let command = format!(
        "cd . && {} --port {port} --threads 1",
        hello_server().display()
    );
    let toml =
        marked_config(port, &token, &command).replace("duration = \"1s\"", "duration = \"60s\"");
    std::fs::write(dir.join("rigor.toml"), &toml).unwrap();
    let first = ["run", "-i", "1", "--json", "first.json", "--out-dir", "out"];
    let mut child = rigor_command(&dir, &first)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let _cleanup = Cleanup {
        token: token.clone(),
        pids: vec![child.id() as i32],
    };
    wait_for("the application", Duration::from_secs(90), || {
        marked(&token).iter().any(|(_, c)| c == "hello-server")
    });
    // Everything in rigor's process group dies at once (an OOM kill, `kill -9 -PGID`).
    unsafe { libc::killpg(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let left = marked(&token);
    // The `sh` around the command dies by its parent-death signal, perhaps not yet: the server,
    // its child, is the one that outlives rigor.
    let server = left
        .iter()
        .find(|(_, c)| c == "hello-server")
        .unwrap_or_else(|| panic!("the application died with rigor: {left:?}"))
        .0;
    let dead = child.id();
    let stale = rigor_cgroups(dead);
    if is_root() {
        assert!(
            !stale.is_empty(),
            "as root, the dead rigor's cgroup is left"
        );
    }
    // The next run finds both.
    let toml = toml.replace("duration = \"60s\"", "duration = \"1s\"");
    let (out, json) = run(
        &dir,
        &toml.replace(&format!("{port}"), &format!("{}", free_port())),
        &["-i", "1"],
    );
    let json = json.unwrap_or_else(|| panic!("no result: {}", text(&out)));
    let msg = message(&json["warnings"], "leftovers");
    assert!(
        msg.contains(&format!("{server} (hello-server)")) && msg.contains(&format!("rigor {dead}")),
        "{msg}"
    );
    let after = left_after(&token, Duration::from_secs(3));
    assert!(
        after.iter().all(|(p, _)| !left.iter().any(|(l, _)| l == p)),
        "{after:?}"
    );
    for c in &stale {
        assert!(!c.exists(), "stale cgroup kept: {}", c.display());
    }
}

#[test]
fn application_output_is_never_held_whole() {
    let port = free_port();
    let token = token("flood");
    let dir = temp_dir(&token);
    let _remove = RemoveDir(dir.clone());
    // 200 MB on one line, before the ready line that never comes, then an exit.
    let command = "head -c 200000000 /dev/zero | tr '\\0' x; exit 1";
    let toml = marked_config(port, &token, command).replace(
        &format!("ready = {{ http = \"http://127.0.0.1:{port}/health\", timeout = \"10s\" }}"),
        "ready = { stdout = \"listening\", timeout = \"120s\" }",
    );
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let mut child = spawn_rigor(&dir, &one_iteration());
    let _cleanup = Cleanup {
        token: token.clone(),
        pids: vec![child.id() as i32],
    };
    // rigor's own peak, read from its /proc status until it exits. (wait4's ru_maxrss would
    // also count the test binary's memory at the fork, kept across exec.)
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    while child.try_wait().unwrap().is_none() {
        let hwm = std::fs::read_to_string(&status).ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
        peak_kib = peak_kib.max(hwm.unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
    let result = std::fs::read_to_string(dir.join("result.json")).unwrap();
    let cut = |s: &str| s.chars().take(2000).collect::<String>();
    assert!(stderr.contains("exited"), "{}", cut(&stderr));
    assert!(
        stderr.len() < 32 * 1024,
        "stderr holds {} bytes",
        stderr.len()
    );
    assert!(
        result.len() < 64 * 1024,
        "result.json holds {} bytes",
        result.len()
    );
    // rigor stayed far below the 200 MB printed.
    assert!(peak_kib > 0, "rigor's VmHWM was never read");
    assert!(peak_kib < 120 * 1024, "rigor's peak RSS {peak_kib} KiB");
}

/// Removes a test folder (here: a 200 MB log) when dropped, failing or not.
struct RemoveDir(std::path::PathBuf);

impl Drop for RemoveDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_row_whose_application_cannot_start_stops_after_one_failure() {
    let port = free_port();
    let dir = temp_dir("no-start");
    let toml = config(port, "--exit-at-start", "/plaintext", "");
    let (t, json) = run_exit(&dir, &toml, &["-i", "3"], 1);
    let json = json.unwrap();
    assert_eq!(iterations(&json).len(), 1, "{t}");
    assert!(t.contains("--keep-going"), "{t}");
    assert_eq!(
        message(&json["rows"][0]["warnings"], "row_stopped"),
        "the application failed to start, so the row's other iterations were skipped"
    );
    assert_eq!(kinds(&json["rows"][0]["warnings"]), ["row_stopped"]);
    let (out, json) = run(&dir, &toml, &["-i", "3", "--keep-going"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(iterations(json.as_ref().unwrap()).len(), 3);
}

/// Kills, when dropped, every process whose command line contains the needle.
struct KillMatching(String);

impl Drop for KillMatching {
    fn drop(&mut self) {
        for pid in processes_with(&self.0) {
            // SAFETY: kill only sends a signal, to a process this test's rigor started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

#[test]
#[ignore = "needs root"]
fn a_hidden_daemon_dies_with_a_killed_rigor_even_without_a_cgroup() {
    // Root runs rigor as nobody, who gets no cgroup.
    require_root();
    let port = free_port();
    let token = token("hidden");
    let dir = temp_dir(&token);
    // No mark (empty environment), its own session, and rigor unprivileged (no cgroup).
    let needle = format!("sleep 99999.{port}");
    let command = format!(
        "env -i setsid {needle} & exec {} --port {port} --threads 1",
        hello_server().display()
    );
    let toml =
        marked_config(port, &token, &command).replace("duration = \"1s\"", "duration = \"60s\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    let mut child = rigor_command(&dir, &one_iteration())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .uid(65534)
        .gid(65534)
        .spawn()
        .unwrap();
    let _cleanup = Cleanup {
        token: token.clone(),
        pids: vec![child.id() as i32],
    };
    let _daemon = KillMatching(needle.clone());
    wait_for("the daemon", Duration::from_secs(90), || {
        !processes_with(&needle).is_empty()
    });
    std::thread::sleep(Duration::from_millis(2500));
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !processes_with(&needle).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        processes_with(&needle).is_empty(),
        "the daemon outlived rigor: {:?}",
        processes_with(&needle)
    );
    assert!(left_after(&token, Duration::from_secs(3)).is_empty());
}

/// `date -u +%Y%m%d-%H%M%S` for `secs` since the epoch: the name rigor gives a run's folder.
fn folder_name(secs: u64) -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "+%Y%m%d-%H%M%S", "-d", &format!("@{secs}")])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_run_never_writes_into_another_runs_folder() {
    let port = free_port();
    let dir = temp_dir("own-folder");
    // Another run's folders for every second this run may start in, each with its result.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let taken: Vec<String> = (now..now + 300).map(folder_name).collect();
    for name in &taken {
        std::fs::create_dir_all(dir.join("out").join(name)).unwrap();
        std::fs::write(dir.join("out").join(name).join("result.json"), "other").unwrap();
    }
    std::fs::write(dir.join("rigor.toml"), config(port, "", "/plaintext", "")).unwrap();
    let out = rigor(
        &dir,
        &["run", "--out-dir", "out", "--keep-noisy", "-i", "1"],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    for name in &taken {
        let kept = std::fs::read_to_string(dir.join("out").join(name).join("result.json"));
        assert_eq!(kept.unwrap(), "other", "{name} was overwritten: {t}");
    }
    let mut own: Vec<PathBuf> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !taken.iter().any(|n| p.ends_with(n)))
        .collect();
    assert_eq!(own.len(), 1, "{own:?}");
    let own = own.pop().unwrap();
    let name = own.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        taken.iter().any(|n| name.starts_with(&format!("{n}-"))),
        "{name} is not a taken name with a suffix"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(own.join("result.json")).unwrap()).unwrap();
    assert_eq!(json["status"], "complete", "{json}");
    assert!(t.contains(&name), "the folder rigor used is named: {t}");
}

#[test]
#[ignore = "needs root"]
fn a_full_disk_says_what_was_not_written_and_fails_the_run() {
    // Root mounts a small filesystem for the results and fills it: the logs (a few hundred
    // bytes) still fit, the result (some KiB) does not.
    require_root();
    let port = free_port();
    let dir = temp_dir("full-disk");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(mounted.success());
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(out.clone());
    std::fs::write(out.join("filler"), vec![0u8; 60 << 10]).unwrap();
    std::fs::write(dir.join("rigor.toml"), config(port, "", "/plaintext", "")).unwrap();
    let o = rigor(
        &dir,
        &["run", "--out-dir", "out", "--keep-noisy", "-i", "1"],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("No space left on device"), "{t}");
    assert!(t.contains("results: NOT all written"), "{t}");
    let run_dir = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("the run folder");
    let names: Vec<String> = std::fs::read_dir(&run_dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with(".rigor-tmp") || n == "result.json"),
        "{names:?}"
    );
    assert!(
        t.contains(&format!(
            "cannot write {}",
            run_dir.join("result.json").display()
        )),
        "{t}"
    );
}
