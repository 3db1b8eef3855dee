//! `rigor bench` end to end: commands with no config file, run by the built binary, their
//! verdict lines read back and checked against the result JSON and against what the testbed
//! server counted.

use crate::common;

use common::*;
use serde_json::Value;
use std::sync::MutexGuard;

/// Held by each test that measures: a server under load beside a busy loop would be the loop's
/// noise, and the loop the server's.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    crate::common::one_at_a_time()
}

/// The comparison of `candidate` against `baseline` on `id` in a result.
fn comparison<'a>(json: &'a Value, candidate: &str, id: &str) -> &'a Value {
    json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["candidate"] == candidate && c["measurement"] == id)
        .unwrap_or_else(|| panic!("no {candidate} comparison of {id} in {json}"))
}

/// The numbers of a verdict line `X ran F× faster than Y [LO, HI] (verdict)`: the two names,
/// the factor, the interval and the verdict.
fn faster_line(stdout: &str) -> (String, String, f64, f64, f64, String) {
    let line = stdout
        .lines()
        .find(|l| l.contains("× faster than"))
        .unwrap_or_else(|| panic!("no `faster than` line in:\n{stdout}"));
    let (who, rest) = line.split_once(" ran ").unwrap();
    let (factor, rest) = rest.split_once("× faster than ").unwrap();
    let (other, rest) = rest.split_once(" [").unwrap();
    let (interval, verdict) = rest.split_once("] (").unwrap();
    let (lo, hi) = interval.split_once(", ").unwrap();
    let num = |s: &str| {
        s.parse::<f64>()
            .unwrap_or_else(|_| panic!("`{s}` in `{line}`"))
    };
    (
        who.to_string(),
        other.to_string(),
        num(factor),
        num(lo),
        num(hi),
        verdict.trim_end_matches(')').to_string(),
    )
}

/// Two commands, the second taking 1.3× the first's time: rigor says the first ran faster, by a
/// factor whose interval excludes 1, and its line agrees with the comparison in the JSON (which
/// `rigor compare` reads back). They sleep rather than compute: on a machine other work keeps
/// busy, a loop's elapsed time is the other work's as much as its own.
#[test]
fn bench_says_which_of_two_commands_is_faster() {
    let _one = one_at_a_time();
    let dir = temp_dir("bench-faster");
    let (a, b) = ("sleep 0.2".to_string(), "sleep 0.26".to_string());
    let out = rigor(
        &dir,
        &[
            "bench",
            &a,
            &b,
            "--json",
            "result.json",
            "--until-conclusive=40",
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = result(&dir);
    assert_schema(&json);
    // The commands ran as given, each at least the default 10 times, interleaved in rounds.
    for (name, command) in [("A", &a), ("B", &b)] {
        let row = json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["variant"] == name)
            .unwrap_or_else(|| panic!("no row {name}"));
        let kept = row["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|it| it["error"].is_null() && it["measurements"]["app.elapsed"].is_number())
            .count();
        assert!(kept >= 10, "{name}: {kept} iterations measured\n{t}");
        let config = std::fs::read_to_string(dir.join("rigor-results/bench.toml")).unwrap();
        assert!(
            config.contains(&format!("command = \"{command}\"")),
            "{config}"
        );
    }
    let elapsed = comparison(&json, "B", "app.elapsed");
    assert_eq!(elapsed["verdict"], "regression", "{t}");
    let (who, other, factor, lo, hi, verdict) = faster_line(&stdout);
    assert_eq!((who.as_str(), other.as_str()), ("A", "B"), "{t}");
    assert_eq!(verdict, "regression");
    assert!(lo > 1.0 && lo <= factor && factor <= hi, "{t}");
    // The factor is the JSON's change of B against A, as a ratio.
    let change = elapsed["change_pct"].as_f64().unwrap();
    let low = elapsed["ci_low_pct"].as_f64().unwrap();
    assert!(
        (factor - (1.0 + change / 100.0)).abs() < 0.006,
        "{factor} vs {change}%"
    );
    assert!((lo - (1.0 + low / 100.0)).abs() < 0.006, "{lo} vs {low}%");
    // The figure line shows the same change and verdict.
    let figures = stdout
        .lines()
        .find(|l| l.starts_with("B vs A: "))
        .unwrap_or_else(|| panic!("no `B vs A` line in:\n{stdout}"));
    assert!(
        figures.contains(&format!("Elapsed Time {change:+.1}%")) && figures.contains("regression"),
        "{figures}"
    );
    // The CPU of the tree is measured and compared too (a sleep's is a few milliseconds).
    let cpu = comparison(&json, "B", "app.cpu_time");
    assert!(cpu["change_pct"].as_f64().is_some(), "{cpu}");
    let compared = rigor(&dir, &["compare", "result.json"]);
    assert_eq!(compared.status.code(), Some(0), "{}", text(&compared));
    assert!(String::from_utf8_lossy(&compared.stdout).contains("Elapsed Time"));
}

/// `--url`: the commands are servers; each start is loaded at the URL, and the requests the
/// engine counts are the ones the server answered. A server that delays every response by
/// 2 ms serves fewer requests per second, and rigor says so.
#[test]
fn bench_url_compares_two_servers_under_load() {
    let _one = one_at_a_time();
    let dir = temp_dir("bench-url");
    let port = free_port();
    let bin = hello_server();
    let fast = format!("{} --port {port} --threads 1", bin.display());
    let slow = format!("{fast} --delay-us 2000");
    let url = format!("http://127.0.0.1:{port}/plaintext");
    let out = rigor(
        &dir,
        &[
            "bench",
            "--url",
            &url,
            "-c",
            "4",
            "-d",
            "1s",
            "-n",
            "fast",
            "-n",
            "slow",
            &fast,
            &slow,
            "--json",
            "result.json",
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = result(&dir);
    assert_schema(&json);
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{t}");
    for row in rows {
        let its = row["iterations"].as_array().unwrap();
        assert!(its.len() >= 6, "{t}");
        for it in its.iter().filter(|it| it["error"].is_null()) {
            let served = server_stats(it)["by_path"]["/plaintext"].as_f64().unwrap();
            let load = &it["load"];
            let sent = m(it, "load.requests").unwrap()
                + load["outside_window"]["requests"].as_f64().unwrap()
                + 1.0;
            let in_flight = load["in_flight_at_end"].as_f64().unwrap();
            assert!(
                served <= sent && served >= sent - in_flight,
                "{}: server answered {served}; engine sent {sent}, {in_flight} in flight",
                row["variant"]
            );
        }
    }
    let rps = comparison(&json, "slow", "load.rps");
    assert_eq!(rps["verdict"], "regression", "{t}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("slow vs fast: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        line.contains("Requests/sec") || line.contains("load.rps"),
        "{line}"
    );
    let (who, other, _, lo, _, verdict) = faster_line(&stdout);
    assert_eq!((who.as_str(), other.as_str()), ("fast", "slow"), "{t}");
    assert!(lo > 1.0 && verdict == "regression", "{t}");
    assert!(
        processes_with(&format!("--port {port}")).is_empty(),
        "a server outlived the bench"
    );
}

/// Runs `rigor bench` with `args` in a fresh folder and expects exit 2 naming `needle`, with
/// nothing started or written.
fn refused(name: &str, args: &[&str], needle: &str) {
    let dir = temp_dir(name);
    let out = rigor(&dir, &[&["bench"], args].concat());
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {t}");
    assert!(t.contains(needle), "{args:?}: no `{needle}` in {t}");
    assert!(
        !dir.join("rigor-results").exists(),
        "{args:?} wrote results"
    );
}

/// Bad input is a usage error naming what is wrong, before anything runs.
#[test]
fn bench_refuses_bad_input_before_running() {
    refused("bench-none", &[], "<COMMAND>");
    refused(
        "bench-hopeless",
        &["-i", "2", "true", "false"],
        "that can never show a significant difference",
    );
    refused("bench-empty", &["true", " "], "command 2 is empty");
    refused(
        "bench-names",
        &["-n", "x", "true", "false"],
        "-n/--name given 1 times for 2 commands",
    );
    refused(
        "bench-name-chars",
        &["-n", "a b", "-n", "c", "true", "true"],
        "-n/--name `a b`",
    );
    refused(
        "bench-url",
        &["--url", "ftp://x/", "true"],
        "--url ftp://x/",
    );
    refused(
        "bench-duration",
        &["--url", "http://127.0.0.1:1/", "-d", "0s", "true"],
        "-d/--duration",
    );
    refused("bench-c-alone", &["-c", "4", "true"], "--url");
    refused(
        "bench-c-huge",
        &["--url", "http://127.0.0.1:1/", "-c", "999999999", "true"],
        "-c/--connections 999999999 is more than",
    );
    refused(
        "bench-iters",
        &["-i", "0", "true", "false"],
        "-i/--iterations must be at least 1",
    );
    refused(
        "bench-strict-kind",
        &["--strict=proxy,prox", "true", "false"],
        "--strict=prox: no warning kind `prox`",
    );
    // Refused at once, not after judging whether 10^11 iterations could reach a verdict.
    refused(
        "bench-iters-huge",
        &["-i", "99999999999", "true", "false"],
        "-i/--iterations 99999999999 is more than the limit",
    );
    refused(
        "bench-name-dot",
        &["-n", ".", "-n", "b", "true", "true"],
        "-n/--name `.`: a name is 1 to 40 letters, digits, `_`, `-` or `.`, starting with a letter",
    );
    refused(
        "bench-cap-below-i",
        &["-i", "50", "--until-conclusive=10", "true", "true"],
        "--until-conclusive=10 is below -i 50",
    );
    refused(
        "bench-cap-below-default",
        &["--until-conclusive=5", "true", "true"],
        "--until-conclusive=5 is below the 10 iterations a bench starts with",
    );
    refused(
        "bench-store",
        &["--store", "/proc/rigor-bench-x/h.db", "true", "true"],
        "the history store /proc/rigor-bench-x/h.db cannot be written",
    );
}

/// `rigor run` refuses the same holes before its first iteration: a history store it could
/// never write (found only when storing, after every iteration) and a `--until-conclusive`
/// cap below the iterations it plans (which could add no round).
#[test]
fn run_refuses_an_unwritable_store_and_a_cap_below_its_iterations() {
    let dir = temp_dir("bench-run-refusals");
    std::fs::write(
        dir.join("rigor.toml"),
        "[jobs.j]\nrole = \"command\"\ncommand = \"true\"\n\n\
         [scenarios.s]\ncommand = \"j\"\niterations = 6\n",
    )
    .unwrap();
    for (args, needle) in [
        (
            vec!["run", "--store", "/proc/rigor-run-x/h.db"],
            "the history store /proc/rigor-run-x/h.db cannot be written",
        ),
        (
            vec!["run", "--no-store", "--until-conclusive=4"],
            "--until-conclusive=4 is below the 6 iterations per row",
        ),
    ] {
        let out = rigor(&dir, &args);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {t}");
        assert!(t.contains(needle), "{args:?}: no `{needle}` in {t}");
        assert!(!dir.join("rigor-results").exists(), "{args:?} ran: {t}");
    }
    // A store in a folder yet to be made is fine, and the check leaves no trace of it.
    let out = rigor(&dir, &["run", "--store", "db/h.db", "--until-conclusive=6"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(dir.join("db/h.db").is_file());
}

/// A command that fails fails the bench (exit 1), saying its exit status, and its verdict line
/// says why it was not compared; with `--warmup` the failure stops the bench before measuring.
#[test]
fn bench_says_a_failing_command_failed() {
    let dir = temp_dir("bench-fails");
    let out = rigor(
        &dir,
        &[
            "bench",
            "-i",
            "2",
            "--allow-inconclusive",
            "true",
            "echo oops >&2; exit 3",
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("exit status: 3") && t.contains("oops"), "{t}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The verdict is one line, closed on the same line: the output's tail is said on stderr.
    let verdict = stdout
        .lines()
        .find(|l| l.starts_with("B vs A: not compared: every iteration of B failed"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        verdict.contains("exit status: 3") && verdict.ends_with(')'),
        "{stdout}"
    );
    // The headline, top and bottom, says B was not compared rather than judging it.
    let headline: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("• B vs A"))
        .collect();
    assert_eq!(headline.len(), 2, "{stdout}");
    assert!(
        headline
            .iter()
            .all(|l| l.contains("not compared: no iteration of B was measured")),
        "{stdout}"
    );
    let warm = temp_dir("bench-fails-warm");
    let out = rigor(&warm, &["bench", "--warmup", "1", "true", "exit 3"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("warmup of B (`exit 3`) failed"), "{t}");
    // The shell runs its own `exit`: the status is the command's, not exec's "not found".
    assert!(
        t.contains("exit status: 3") && !t.contains("not found"),
        "{t}"
    );
    assert!(!t.contains("iteration 1"), "{t}");
}

/// `--strict=KIND,…` gates a bench on those kinds only, as it does a run: the noise warnings of a
/// busy machine do not fail a bench gated on `proxy`.
#[test]
fn bench_strict_takes_the_kinds_run_takes() {
    let dir = temp_dir("bench-strict-kinds");
    let out = rigor(
        &dir,
        &["bench", "-i", "4", "--strict=proxy", "true", "true"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A bench whose report is lost to a full disk (`> /dev/full`) fails (exit 1) and says so; the
/// result file is still written.
#[test]
fn a_report_lost_to_a_full_disk_fails_the_bench() {
    let dir = temp_dir("bench-full");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = rigor_command(
        &dir,
        &["bench", "-i", "4", "--json", "result.json", "true", "true"],
    )
    .stdout(full)
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not written to standard output") && stderr.contains("No space left"),
        "{stderr}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(json["schema"], "rigor.run.v1", "{json}");
}

/// SIGINT (or SIGTERM) to rigor during `--warmup` stops the warmup command with all its
/// processes, even one that ignores SIGINT, and rigor says the warmup was interrupted: no
/// warmup command outlives the bench.
#[test]
fn an_interrupted_warmup_leaves_no_command_behind() {
    let dir = temp_dir("bench-warmup-interrupt");
    let token = marks::token("bench-warmup");
    let _cleanup = marks::Cleanup {
        token: token.clone(),
        pids: Vec::new(),
    };
    let mut child = rigor_command(
        &dir,
        &[
            "bench",
            "--warmup",
            "3",
            "trap '' INT; sleep 60 & wait",
            "true",
        ],
    )
    .env(marks::MARK, &token)
    .stdin(std::process::Stdio::null())
    .stdout(std::fs::File::create(dir.join("stdout.txt")).unwrap())
    .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
    .spawn()
    .expect("start rigor");
    marks::wait_for(
        "the warmup's sleep",
        std::time::Duration::from_secs(20),
        || marks::marked(&token).iter().any(|(_, c)| c == "sleep"),
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = marks::wait_exit(&mut child, std::time::Duration::from_secs(15));
    let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("warmup of A"), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let left = marks::left_after(&token, std::time::Duration::from_secs(3));
    assert!(left.is_empty(), "left behind: {left:?}\n{stderr}");
}
