//! `rigor bisect` on throwaway repositories: a server that gets slower (or holds more memory)
//! at commit k of 8 is named at commit k, a commit that does not build is skipped, good and bad
//! that do not differ stop with exit 5, and bad revisions or folders fail clearly. The user's
//! checkout and branches are left as they were.

use crate::bisect_common;
use crate::common;
use bisect_common::*;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Runs `rigor bisect ARGS` in `dir` with its report and step files in `outs`; its exit
/// code, output and report.
fn bisect_in(dir: &Path, outs: &Path, args: &[&str]) -> (Option<i32>, String, Option<Value>) {
    let json = outs.join("bisect.json");
    let _ = std::fs::remove_file(&json);
    let out_dir = outs.join("out");
    let mut all = vec!["bisect"];
    all.extend_from_slice(args);
    let (j, o) = (json.display().to_string(), out_dir.display().to_string());
    all.extend_from_slice(&["--json", &j, "--out-dir", &o]);
    let out = rigor(dir, &all);
    let report = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    (out.status.code(), text(&out), report)
}

/// Runs `rigor bisect ARGS` in `dir`, its files there too.
fn bisect(dir: &Path, args: &[&str]) -> (Option<i32>, String, Option<Value>) {
    bisect_in(dir, dir, args)
}

/// The step of the report that tested `sha`.
fn step<'a>(report: &'a Value, sha: &str) -> Option<&'a Value> {
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["commit"] == sha)
}

/// `git status`, the branches and HEAD of the user's checkout, to compare before and after.
fn checkout_state(repo: &Path) -> String {
    [
        git(repo, &["status", "--porcelain"]),
        git(repo, &["branch", "--list"]),
        git(repo, &["rev-parse", "HEAD"]),
    ]
    .join("\n")
}

#[test]
fn a_server_slower_from_commit_6_is_named_and_a_broken_commit_is_skipped() {
    let _serial = one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("bisect-slower");
    let repo = dir.join("repo");
    // Commit 4 deletes the file the build copies (its build fails); 6 doubles the delay.
    let shas = step_history(&repo, "delay_us", "1000", "2000", 6, Some(4));
    let port = free_port();
    std::fs::write(
        dir.join("rigor.toml"),
        value_config(port, "repo", "delay_us", "--delay-us"),
    )
    .unwrap();
    let before = checkout_state(&repo);
    let (code, t, report) = bisect(
        &dir,
        &[
            "--good",
            &shas[0],
            "--bad",
            "main",
            "-s",
            "s",
            "-i",
            "6",
            "--threshold",
            "10%",
        ],
    );
    assert_eq!(code, Some(0), "{t}");
    let report = report.expect("a --json report");
    assert_eq!(report["schema"], "rigor.bisect.v1");
    assert_eq!(report["verdict"], "culprit", "{t}");
    assert_eq!(report["culprit"], shas[5].as_str(), "{t}");
    assert_eq!(report["subject"], "commit 6: delay_us = 2000");
    assert_eq!(report["measurement"], "load.rps");
    assert!(
        t.contains(&format!(
            "first bad commit: {} commit 6: delay_us = 2000",
            shas[5]
        )),
        "{t}"
    );
    // Twice the delay at 8 connections is half the requests: the culprit against its parent.
    let vs_parent = &report["culprit_vs_parent"];
    assert_eq!(vs_parent["verdict"], "regression", "{vs_parent}");
    let change = vs_parent["change_pct"].as_f64().unwrap();
    assert!((-60.0..=-40.0).contains(&change), "{change}");
    assert_eq!(report["parent"], shas[4].as_str());
    // The broken commit was skipped, not judged; the commits measured were decided right.
    let broken = step(&report, &shas[3]).expect("commit 4 was tried");
    assert_eq!(broken["decision"], "skipped", "{broken}");
    assert!(
        broken["note"].as_str().unwrap().contains("build"),
        "{broken}"
    );
    for s in report["steps"].as_array().unwrap().iter().skip(1) {
        let i = shas.iter().position(|x| s["commit"] == x.as_str()).unwrap();
        let expected = match i + 1 {
            4 => "skipped",
            n if n >= 6 => "bad",
            _ => "good",
        };
        assert_eq!(s["decision"], expected, "commit {}: {s}", i + 1);
    }
    // Step 0 confirmed the ends differ; progress said what it tested.
    assert_eq!(report["steps"][0]["decision"], "differ");
    assert!(t.contains("commits left, testing"), "{t}");
    let total: u64 = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["iterations"].as_u64().unwrap())
        .sum();
    // The iterations in all are the steps' (and the culprit's own run when one was needed).
    assert!(report["iterations"].as_u64().unwrap() >= total, "{report}");
    // Each step's result is a real run result, with the commits it ran.
    let measured = report["steps"].as_array().unwrap()[1..]
        .iter()
        .find(|s| s["decision"] != "skipped")
        .unwrap();
    let first = measured["result"].as_str().unwrap();
    let run: Value = serde_json::from_str(&std::fs::read_to_string(first).unwrap()).unwrap();
    assert_eq!(run["schema"], "rigor.run.v1");
    assert_eq!(
        run["environment"]["jobs"]["app"]["refs"]["good"]["commit"],
        shas[0].as_str()
    );
    assert_eq!(checkout_state(&repo), before, "the user's checkout changed");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_21_percent_working_set_step_across_9_commits_is_named_within_45_iterations() {
    let _serial = one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("bisect-memory");
    let repo = dir.join("repo");
    // The testbed holds 2 MiB more than its own few MiB up to commit 6, 3 from commit 7: about
    // a fifth more working set. Commit 5, the first one a binary search tests, does not build.
    let shas = step_history_of(10, &repo, "hold_mib", "2", "3", 7, Some(5));
    let port = free_port();
    // The config lives in the checkout (untracked), as a project's own would.
    std::fs::write(
        repo.join("rigor.toml"),
        value_config(port, ".", "hold_mib", "--hold-mib"),
    )
    .unwrap();
    // The user's own worktree, its folder moved away for the moment (an unmounted disk).
    let mine = dir.join("mine");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            mine.to_str().unwrap(),
            &shas[1],
        ],
    );
    let away = dir.join("mine-away");
    std::fs::rename(&mine, &away).unwrap();
    let before = checkout_state(&repo);
    let (code, t, report) = bisect_in(
        &repo,
        &dir,
        &[
            "--good", &shas[0], "--bad", "HEAD", "-s", "s", "-m", "app.rss",
        ],
    );
    assert_eq!(code, Some(0), "{t}");
    let report = report.expect("a --json report");
    eprintln!(
        "21% step: {} iterations, {:.0} s",
        report["iterations"], report["seconds"]
    );
    assert_eq!(report["candidates"], 9, "{t}");
    assert_eq!(report["culprit"], shas[6].as_str(), "{t}");
    assert_eq!(report["subject"], "commit 7: hold_mib = 3");
    let iterations = report["iterations"].as_u64().unwrap();
    assert!(iterations <= 45, "{iterations} iterations: {t}");
    // Each commit measured was placed on its own side of the middle; the broken one skipped.
    for s in report["steps"].as_array().unwrap().iter().skip(1) {
        let i = shas.iter().position(|x| s["commit"] == x.as_str()).unwrap();
        let expected = match i + 1 {
            5 => "skipped",
            n if n >= 7 => "bad",
            _ => "good",
        };
        assert_eq!(s["decision"], expected, "commit {}: {s}", i + 1);
        if expected != "skipped" {
            let p = &s["position"];
            let (low, high) = (p["low"].as_f64().unwrap(), p["high"].as_f64().unwrap());
            assert!(high < 0.5 || low > 0.5, "{p}");
        }
    }
    // Step 0's own run: bad holds about 1 MiB more than good (its medians, in MiB).
    let run: Value = serde_json::from_str(
        &std::fs::read_to_string(report["steps"][0]["result"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    let cmp = run["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == "app.rss")
        .unwrap();
    let grew = cmp["candidate_median"].as_f64().unwrap() - cmp["baseline_median"].as_f64().unwrap();
    assert!((0.8..=1.3).contains(&grew), "{grew} MiB: {cmp}");
    // The culprit against its parent: the same MiB, as a share of the parent's working set.
    let vs_parent = &report["culprit_vs_parent"];
    assert_eq!(vs_parent["verdict"], "regression", "{vs_parent}");
    let change = vs_parent["change_pct"].as_f64().unwrap();
    let expected = grew / cmp["baseline_median"].as_f64().unwrap() * 100.0;
    assert!(
        (change - expected).abs() < 5.0,
        "{change}% against {expected}%"
    );
    // Progress said how long is left.
    assert!(t.contains("ETA ~"), "{t}");
    assert_eq!(checkout_state(&repo), before, "the user's checkout changed");
    // The user's worktree is still registered, folder away or not; rigor's own are gone, and
    // the folder rigor keeps beside the config hides itself from git.
    let listed = git(&repo, &["worktree", "list", "--porcelain"]);
    assert!(listed.contains(mine.to_str().unwrap()), "{listed}");
    assert_eq!(listed.matches("worktree ").count(), 2, "{listed}");
    assert!(!repo.join(".rigor/worktrees").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join(".rigor/.gitignore")).unwrap(),
        "*\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_server_a_third_slower_is_named_on_a_machine_busy_on_every_core() {
    let _serial = one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("bisect-busy");
    let repo = dir.join("repo");
    // Each request a third slower from commit 5 of 8.
    let shas = step_history(&repo, "delay_us", "1500", "2000", 5, None);
    let port = free_port();
    std::fs::write(
        dir.join("rigor.toml"),
        value_config(port, "repo", "delay_us", "--delay-us"),
    )
    .unwrap();
    let hog = CpuHog::start(std::time::Duration::from_secs(900));
    // The time a request takes, as a user measures "slower per request" (its median holds
    // better than the request rate against the stalls a busy machine adds).
    let (code, t, report) = bisect(
        &dir,
        &[
            "--good",
            &shas[0],
            "--bad",
            "main",
            "-s",
            "s",
            "-m",
            "load.latency.p50",
        ],
    );
    drop(hog);
    assert_eq!(code, Some(0), "{t}");
    let report = report.expect("a --json report");
    eprintln!(
        "busy machine: {} iterations, {:.0} s",
        report["iterations"], report["seconds"]
    );
    assert_eq!(report["culprit"], shas[4].as_str(), "{t}");
    // The culprit takes longer per request than its parent (a third more delay, plus the same
    // overhead for both, give or take the noise).
    assert_eq!(report["culprit_vs_parent"]["verdict"], "regression", "{t}");
    let change = report["culprit_vs_parent"]["change_pct"].as_f64().unwrap();
    assert!((5.0..=60.0).contains(&change), "{change}: {t}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A scenario whose build and command take the variable `version` (as a runtime's version would
/// pick its binary): the testbed holds as many MiB more as the version's major number.
fn version_config(port: u16) -> String {
    format!(
        r#"
[variables]
version = "0.1.0"

[jobs.app]
build = "echo {{{{version}}}} >> built.log && echo {{{{version}}}} > app.value"
artifact = "app.value"
command = "exec {bin} --port {port} --threads 1 --hold-mib $(cut -d. -f1 app.value)"
env = {{ APP_VERSION = "{{{{version}}}}" }}
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "10s" }}
stop_timeout = "2s"

[jobs.load]
url = "http://127.0.0.1:{port}/plaintext"
connections = 8
warmup = "200ms"
duration = "600ms"

[scenarios.s]
application = "app"
load = "load"
"#,
        bin = hello_server().display()
    )
}

#[test]
fn a_bisection_over_8_version_values_names_the_value() {
    let _serial = one_at_a_time();
    let dir = temp_dir("bisect-values");
    let port = free_port();
    std::fs::write(dir.join("rigor.toml"), version_config(port)).unwrap();
    // Eight nightly "versions"; from the fifth on the testbed holds 2 MiB more.
    let values = [
        "0.1.23269",
        "0.1.23270",
        "0.1.23271",
        "0.1.23272",
        "2.1.23273",
        "2.1.23274",
        "2.1.23275",
        "2.1.23276",
    ];
    std::fs::write(
        dir.join("versions.txt"),
        format!("# nightly builds, oldest first\n{}\n", values.join("\n")),
    )
    .unwrap();
    let (code, t, report) = bisect(
        &dir,
        &[
            "--var",
            "version",
            "--values-from",
            "versions.txt",
            "-s",
            "s",
            "-m",
            "app.rss",
        ],
    );
    assert_eq!(code, Some(0), "{t}");
    let report = report.expect("a --json report");
    eprintln!(
        "values: {} iterations, {:.0} s",
        report["iterations"], report["seconds"]
    );
    // Each value was built once, however many steps ran it (the ends run in every step).
    let built = std::fs::read_to_string(dir.join("built.log")).unwrap();
    let mut once: Vec<&str> = built.lines().collect();
    let all = once.len();
    once.sort_unstable();
    once.dedup();
    assert_eq!(once.len(), all, "a value built twice: {built}");
    assert!(all >= 3, "{built}");
    assert_eq!(report["var"], "version");
    assert_eq!(report["culprit"], "2.1.23273", "{t}");
    assert_eq!(report["parent"], "0.1.23272", "{t}");
    assert_eq!(report["candidates"], 7);
    assert!(t.contains("first bad value: version=2.1.23273"), "{t}");
    assert_eq!(report["culprit_vs_parent"]["verdict"], "regression", "{t}");
    // Every value measured was placed on its own side of the change.
    for s in report["steps"].as_array().unwrap().iter().skip(1) {
        let major = s["commit"].as_str().unwrap().starts_with("2.");
        assert_eq!(s["decision"], if major { "bad" } else { "good" }, "{s}");
    }
    // Each step ran the values as variants setting the variable: the build wrote it.
    let run: Value = serde_json::from_str(
        &std::fs::read_to_string(report["steps"][1]["result"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    let tested = report["steps"][1]["commit"].as_str().unwrap();
    let build = run["builds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| {
            b["variants"]
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v == "tested")
        })
        .unwrap();
    let command = build["command"].as_str().unwrap();
    assert_eq!(
        command,
        format!("echo {tested} >> built.log && echo {tested} > app.value"),
        "{build}"
    );
    // Named values: a narrower search between two of them.
    let (code, t, report) = bisect(
        &dir,
        &[
            "--var",
            "version",
            "--values",
            &values.join(","),
            "--good",
            "0.1.23271",
            "--bad",
            "2.1.23274",
            "-s",
            "s",
            "-m",
            "app.rss",
        ],
    );
    assert_eq!(code, Some(0), "{t}");
    let report = report.unwrap();
    assert_eq!(report["culprit"], "2.1.23273", "{t}");
    assert_eq!(report["candidates"], 3);
    // Bad value flags fail clearly.
    let fails = |args: &[&str], says: &str| {
        let (got, t, _) = bisect(&dir, args);
        assert_eq!(got, Some(2), "{args:?}: {t}");
        assert!(t.contains(says), "{args:?}: expected `{says}` in {t}");
    };
    fails(
        &[
            "--var", "version", "--values", "1,2", "--good", "3", "-s", "s",
        ],
        "--good `3` is not one of the values of --var version",
    );
    fails(
        &["--values", "1,2", "-s", "s"],
        "--values and --values-from need --var NAME",
    );
    fails(
        &["--var", "version", "-s", "s"],
        "--values V1,V2,… or --values-from FILE",
    );
    fails(
        &["--var", "version", "--values-from", "nope.txt", "-s", "s"],
        "--values-from nope.txt",
    );
    fails(&["-s", "s", "--bad", "main"], "--good is needed");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn good_and_bad_that_do_not_differ_stop_with_exit_5() {
    let _serial = one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("bisect-same");
    let repo = dir.join("repo");
    let shas = step_history(&repo, "delay_us", "1000", "1000", 8, None);
    let port = free_port();
    std::fs::write(
        dir.join("rigor.toml"),
        value_config(port, "repo", "delay_us", "--delay-us"),
    )
    .unwrap();
    let (code, t, report) = bisect(
        &dir,
        &[
            "--good",
            &shas[0],
            "--bad",
            &shas[7],
            "-s",
            "s",
            "-i",
            "6",
            "--threshold",
            "10%",
        ],
    );
    assert_eq!(code, Some(5), "{t}");
    assert!(
        t.contains("good and bad do not differ beyond 10%: load.rps"),
        "{t}"
    );
    let report = report.expect("a --json report");
    assert_eq!(report["culprit"], Value::Null);
    assert_eq!(report["verdict"], "no difference", "{t}");
    assert_eq!(report["steps"].as_array().unwrap().len(), 1, "{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_revisions_folders_outside_git_and_missing_flags_fail_clearly() {
    let _one = crate::common::one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("bisect-bad-revs");
    let repo = dir.join("repo");
    let shas = step_history(&repo, "delay_us", "1000", "2000", 4, None);
    let port = free_port();
    std::fs::write(
        dir.join("rigor.toml"),
        value_config(port, "repo", "delay_us", "--delay-us"),
    )
    .unwrap();
    let fails = |args: &[&str], code: i32, says: &str| {
        let (got, t, _) = bisect(&dir, args);
        assert_eq!(got, Some(code), "{args:?}: {t}");
        assert!(t.contains(says), "{args:?}: expected `{says}` in {t}");
        assert!(!t.contains("panicked"), "{t}");
    };
    fails(
        &["--good", "no-such-rev", "--bad", "main", "-s", "s"],
        1,
        "--good `no-such-rev` is not a commit of the repository at",
    );
    fails(
        &["--good", &shas[0], "--bad", "nope~3", "-s", "s"],
        1,
        "--bad `nope~3` is not a commit",
    );
    fails(
        &["--good", "main", "--bad", &shas[0], "-s", "s"],
        1,
        "is not an ancestor of --bad",
    );
    fails(
        &["--good", "main", "--bad", "main", "-s", "s"],
        1,
        "the same commit",
    );
    fails(
        &["--good", "main~1", "--bad", "main", "-s", "nosuch"],
        2,
        "no scenario named `nosuch`",
    );
    fails(
        &[
            "--good", "main~1", "--bad", "main", "-s", "s", "-m", "load.rpz",
        ],
        2,
        "unknown measurement `load.rpz`",
    );
    // A --json that cannot be written is refused before anything is built, not after the
    // last step.
    std::fs::write(dir.join("occupied"), "").unwrap();
    let out = rigor(
        &dir,
        &[
            "bisect",
            "--good",
            "main~1",
            "--bad",
            "main",
            "-s",
            "s",
            "--json",
            "occupied/bisect.json",
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(t.contains("--json occupied/bisect.json"), "{t}");
    // A job folder outside any repository.
    let plain = dir.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(
        dir.join("rigor.toml"),
        value_config(port, "plain", "delay_us", "--delay-us"),
    )
    .unwrap();
    fails(
        &["--good", "main~1", "--bad", "main", "-s", "s"],
        1,
        "is not inside a git repository",
    );
    // Nothing was built or measured.
    assert!(!dir.join(".rigor").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_command_scenario_needs_a_measurement() {
    let _one = crate::common::one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("bisect-command");
    let repo = dir.join("repo");
    step_history(&repo, "v", "1", "2", 4, None);
    std::fs::write(
        dir.join("rigor.toml"),
        "[jobs.c]\ndir = \"repo\"\nrole = \"command\"\ncommand = \"cat v\"\n\
         [scenarios.c]\ncommand = \"c\"\n",
    )
    .unwrap();
    let (code, t, _) = bisect(&dir, &["--good", "main~1", "--bad", "main", "-s", "c"]);
    assert_eq!(code, Some(2), "{t}");
    assert!(t.contains("name the measurement to bisect with -m"), "{t}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ctrl_c_stops_cleanly_leaving_no_server_and_valid_worktrees() {
    let _serial = one_at_a_time();
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    if !have_git() {
        return;
    }
    let dir = temp_dir("bisect-interrupt");
    let repo = dir.join("repo");
    let shas = step_history(&repo, "delay_us", "1000", "2000", 6, None);
    let port = free_port();
    std::fs::write(
        dir.join("rigor.toml"),
        value_config(port, "repo", "delay_us", "--delay-us"),
    )
    .unwrap();
    let before = checkout_state(&repo);
    let mut child = rigor_command(
        &dir,
        &[
            "bisect",
            "--good",
            &shas[0],
            "--bad",
            "main",
            "-s",
            "s",
            "-i",
            "6",
            "--threshold",
            "10%",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Once the first commit between the ends is being measured, Ctrl-C.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(" iteration 1:") && seen.contains("commits left, testing") {
            break;
        }
    }
    assert!(seen.contains("commits left, testing"), "{seen}");
    // SAFETY: kill only sends a signal, to the rigor this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let t = format!("{seen}{}\n{stdout}", rest.join("\n"));
    assert_eq!(status.code(), Some(1), "{t}");
    assert!(stdout.contains("interrupted"), "{t}");
    assert!(
        processes_with(&format!("--port {port}")).is_empty(),
        "a server outlived rigor: {t}"
    );
    // Rigor's worktrees were removed, interrupted or not, and the user's checkout is as it was.
    let listed = git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
    assert!(!dir.join(".rigor/worktrees").exists());
    assert_eq!(checkout_state(&repo), before);
    std::fs::remove_dir_all(&dir).unwrap();
}
