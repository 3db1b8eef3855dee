//! `rigor bisect` on throwaway repositories: a server that gets slower (or holds more memory)
//! at commit k of 8 is named at commit k, a commit that does not build is skipped, good and bad
//! that do not differ stop with exit 5, and bad revisions or folders fail clearly. The user's
//! checkout and branches are left as they were.

mod bisect_common;
mod common;
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
    assert!(report["iterations"].as_u64().unwrap() > total, "{report}");
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
fn the_commit_that_added_2_mib_of_working_set_is_named() {
    let _serial = one_at_a_time();
    if !have_git() {
        return;
    }
    let dir = temp_dir("bisect-memory");
    let repo = dir.join("repo");
    let shas = step_history(&repo, "hold_mib", "0", "2", 3, None);
    let port = free_port();
    // The config lives in the checkout (untracked), as a project's own would.
    std::fs::write(
        repo.join("rigor.toml"),
        value_config(port, ".", "hold_mib", "--hold-mib"),
    )
    .unwrap();
    let before = checkout_state(&repo);
    let (code, t, report) = bisect_in(
        &repo,
        &dir,
        &[
            "--good",
            "HEAD~7",
            "--bad",
            "HEAD",
            "-s",
            "s",
            "-m",
            "app.rss",
            "-i",
            "6",
            "--threshold",
            "5%",
        ],
    );
    assert_eq!(code, Some(0), "{t}");
    let report = report.expect("a --json report");
    assert_eq!(report["culprit"], shas[2].as_str(), "{t}");
    assert_eq!(report["subject"], "commit 3: hold_mib = 2");
    let vs_parent = &report["culprit_vs_parent"];
    assert_eq!(vs_parent["verdict"], "regression", "{vs_parent}");
    // The run's own medians: 2 MiB more working set, give or take a page or two.
    let run: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(report["folder"].as_str().unwrap()).join("culprit.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let cmp = run["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == "app.rss")
        .unwrap();
    let grew = cmp["candidate_median"].as_f64().unwrap() - cmp["baseline_median"].as_f64().unwrap();
    assert!((1.8..=2.3).contains(&grew), "{grew} MiB: {cmp}");
    // The worktrees beside the config do not show in the user's `git status`.
    assert!(repo.join(".rigor/worktrees").is_dir());
    assert_eq!(checkout_state(&repo), before, "the user's checkout changed");
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
    // Every worktree is a clean checkout of its commit, and the user's checkout is as it was.
    let worktrees = dir.join(".rigor/worktrees");
    for entry in std::fs::read_dir(&worktrees).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(git(&path, &["rev-parse", "HEAD"]), name);
        assert_eq!(
            git(&path, &["status", "--porcelain", "--untracked-files=no"]),
            ""
        );
    }
    assert_eq!(checkout_state(&repo), before);
    std::fs::remove_dir_all(&dir).unwrap();
}
