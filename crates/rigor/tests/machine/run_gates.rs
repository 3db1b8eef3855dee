//! The gates a user chooses, on real runs of the testbed: `--strict=KIND` on a machine made
//! busy by the test's own CPU hogs, a measurement's own threshold turning a verdict, limits on
//! absolute values (exit 6, each ✓/✗ with the value the result holds), and a run of variants
//! that can never conclude refused before anything is built.

use crate::common;

use common::*;
use nix::sys::resource::{getrusage, UsageWho};
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::MutexGuard;
use std::time::Instant;

/// Held by each test: the hogs of one would be the noise of another.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    crate::common::one_at_a_time()
}

/// Busy loops, one per core, each bounded (`timeout`) so none outlives a crashed test, each in
/// a process group of its own: killed (the group: `timeout` and its loop) and reaped on drop.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start() -> Hogs {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Hogs(
            (0..cores)
                .map(|_| {
                    Command::new("timeout")
                        .args(["120", "sh", "-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .process_group(0)
                        .spawn()
                        .expect("spawn a hog")
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let group = nix::unistd::Pid::from_raw(c.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = c.wait();
        }
    }
}

/// Every warning kind of a result: the run's, its rows' and its iterations'.
fn all_kinds(json: &Value) -> Vec<String> {
    let mut out = kinds(&json["warnings"]);
    for row in json["rows"].as_array().unwrap() {
        out.extend(kinds(&row["warnings"]));
        for it in row["iterations"].as_array().unwrap() {
            out.extend(kinds(&it["warnings"]));
        }
    }
    out
}

#[test]
fn strict_on_chosen_kinds_ignores_the_noise_of_a_busy_machine() {
    let _serial = one_at_a_time();
    let dir = temp_dir("gates-strict");
    let toml = config(free_port(), "", "/plaintext", "");
    let hogs = Hogs::start();
    let (t, json) = run_exit(&dir, &toml, &["-i", "2", "--strict=proxy,debug_build"], 0);
    let json = json.expect("a result");
    let kinds = all_kinds(&json);
    // The hogs made noise warnings: the gate had something to ignore.
    assert!(
        kinds.iter().any(|k| k == "foreign_cpu"),
        "no foreign_cpu with hogs on every core: {kinds:?}\n{t}"
    );
    assert!(
        !kinds.iter().any(|k| k == "proxy" || k == "debug_build"),
        "{kinds:?}"
    );
    // Plain --strict fails on the same noise.
    let (t, json) = run_exit(&dir, &toml, &["-i", "2", "--strict"], 4);
    drop(hogs);
    assert!(!all_kinds(&json.expect("a result")).is_empty());
    assert!(t.contains("rigor: --strict: warnings were raised"), "{t}");
    // A kind that does not exist is a usage error naming it.
    let (t, _) = run_exit(&dir, &toml, &["-i", "1", "--strict=proxy,noise"], 2);
    assert!(t.contains("--strict=noise: no warning kind `noise`"), "{t}");
}

/// Two variants of the testbed, `slow` answering each request 1 ms late.
fn slow_variant(port: u16, extra: &str) -> String {
    config(port, "", "/plaintext", "")
        + "[scenarios.s.variants.base]\n[scenarios.s.variants.slow]\n\
           env = { HELLO_DELAY_US = \"1000\" }\n"
        + extra
}

fn comparison<'a>(json: &'a Value, id: &str) -> &'a Value {
    json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == id)
        .unwrap_or_else(|| panic!("no comparison of {id}: {}", json["comparisons"]))
}

#[test]
fn a_measurement_threshold_of_its_own_changes_its_verdict() {
    let _serial = one_at_a_time();
    let dir = temp_dir("gates-threshold");
    // load.rps judged at ±99.9% (a threshold is below 100%): the slow variant's collapse is
    // within it.
    let toml = slow_variant(
        free_port(),
        "[measurements.\"load.rps\"]\nthreshold = \"99.9%\"\n",
    );
    let (_, json) = run_exit(&dir, &toml, &["-i", "5"], 0);
    let json = json.expect("a result");
    let rps = comparison(&json, "load.rps");
    assert_eq!(rps["verdict"], "no change", "{rps}");
    // Not a free pass: the change itself is far beyond the global 2%.
    assert!(rps["ci_high_pct"].as_f64().unwrap() < -2.0, "{rps}");
    assert_eq!(json["measurements"]["load.rps"]["threshold_pct"], 99.9);
    // Latency, at the global threshold, is a regression in the same run.
    assert_eq!(
        comparison(&json, "load.latency.mean")["verdict"],
        "regression"
    );
    // Re-analysed: the recorded threshold holds unless the command line gives its own.
    let compare = |extra: &[&str]| {
        let args = [&["compare", "result.json", "--json", "cmp.json"][..], extra].concat();
        let out = rigor(&dir, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let cmp: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("cmp.json")).unwrap()).unwrap();
        comparison(&cmp, "load.rps")["verdict"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(compare(&[]), "no change");
    assert_eq!(compare(&["--threshold", "load.rps=2%"]), "regression");
}

#[test]
fn a_limit_not_met_exits_6_and_shows_the_value_the_result_holds() {
    let _serial = one_at_a_time();
    let dir = temp_dir("gates-limits");
    let toml = config(free_port(), "", "/plaintext", "")
        + "[[limits]]\nmeasure = \"app.rss\"\nmax = \"64GiB\"\n";
    let (t, json) = run_exit(
        &dir,
        &toml,
        &[
            "-i",
            "2",
            "--limit",
            "load.latency.p99<1us",
            "--limit",
            "load.rps>0",
        ],
        6,
    );
    let json = json.expect("a result");
    // The schema documents the limits as written.
    assert_schema(&json);
    let limits = json["limits"].as_array().expect("limits in the result");
    assert_eq!(limits.len(), 3, "{limits:?}");
    let summary = &json["rows"][0]["summary"];
    for l in limits {
        let id = l["measure"].as_str().unwrap();
        let value = l["value"].as_f64().unwrap();
        // The value is the row's median, as its summary has it.
        assert_eq!(value, summary[id]["median"].as_f64().unwrap(), "{l}");
        let passed = l["passed"].as_bool().unwrap();
        let (mark, expected) = match id {
            "load.latency.p99" => ("✗", false),
            _ => ("✓", true),
        };
        assert_eq!(passed, expected, "{l}");
        // Its line in the report, with the value as printed.
        let line = t
            .lines()
            .find(|line| line.contains(&format!("{mark} {id} ")))
            .unwrap_or_else(|| panic!("no {mark} line for {id}:\n{t}"));
        let printed: f64 = line
            .split(": ")
            .nth(1)
            .and_then(|v| v.split_whitespace().next())
            .map(|v| v.replace(',', ""))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no value in {line}"));
        assert!(
            (printed - value).abs() <= value.abs() * 0.01 + 0.01,
            "{line} against {value}"
        );
    }
    assert!(t.contains("limits: 1 of 3 not met"), "{t}");
    assert!(t.contains("rigor: 1 limit(s) not met"), "{t}");
    // A bound in a unit of another kind is refused before anything runs.
    let (t, _) = run_exit(&dir, &toml, &["-i", "1", "--limit", "app.rss<5ms"], 2);
    assert!(
        t.contains("--limit `app.rss<5ms`: app.rss: `5ms`: the measurement is in MiB"),
        "{t}"
    );
}

/// CPU seconds of this process's reaped children so far.
fn children_cpu_secs() -> f64 {
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
    let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    s(u.user_time()) + s(u.system_time())
}

#[test]
fn variants_that_can_never_conclude_are_refused_before_any_build() {
    let _serial = one_at_a_time();
    let dir = temp_dir("gates-hopeless");
    // One build for both variants (they differ in a variable of the command, not the build).
    let toml = with_app(
        &config(free_port(), "--delay-us {{delay}}", "/plaintext", ""),
        "build = \"touch built.marker\"",
    ) + "[variables]\ndelay = \"0\"\n\
         [scenarios.s.variants.base]\n[scenarios.s.variants.slow]\n\
         variables = { delay = \"1000\" }\n";
    let marker = dir.join("built.marker");
    let (cpu0, t0) = (children_cpu_secs(), Instant::now());
    let (t, json) = run_exit(&dir, &toml, &["-i", "6", "--exclude", "2:1"], 2);
    let (cpu, wall) = (children_cpu_secs() - cpu0, t0.elapsed());
    eprintln!("refused in {wall:?} wall, {cpu:.3} CPU-s");
    assert!(
        t.contains(
            "-i 6 with 3 excluded by --exclude leaves 3 per variant: that can never show a \
             significant difference at 95% confidence"
        ),
        "{t}"
    );
    assert!(t.contains("run at least -i 7 (4 kept per variant)"), "{t}");
    assert!(t.contains("--allow-inconclusive"), "{t}");
    assert!(!marker.exists(), "the build ran");
    assert!(json.is_none(), "a refused run writes no result");
    // Its own work, not the machine's business: well under a second of CPU.
    assert!(cpu < 1.0, "{cpu} CPU-s to refuse");

    // Asked to, it runs; the comparison says what its data point to.
    let (t, json) = run_exit(&dir, &toml, &["-i", "3", "--allow-inconclusive"], 0);
    assert!(marker.exists(), "{t}");
    let json = json.expect("a result");
    let rps = comparison(&json, "load.rps");
    assert_eq!(rps["verdict"], "inconclusive", "{rps}");
    let note = rps["note"].as_str().unwrap();
    assert!(
        note.contains("the data point to -") && note.ends_with(" iterations per side would decide"),
        "{note}"
    );
    assert!(
        kinds(&json["warnings"]).contains(&"too_few_iterations".to_string()),
        "{}",
        json["warnings"]
    );
}
