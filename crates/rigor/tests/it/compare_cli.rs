//! `rigor compare` end to end: real result files on disk, the built binary, its exit code and its
//! JSON, as a CI job would use it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh folder for one test, removed when dropped, failing or not.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Folder {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let dir = std::env::temp_dir().join(format!(
            "rigor-compare-cli-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }

    fn join(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Results `a` and `b` written to `a.json` and `b.json` in a fresh folder for test `name`: the
/// folder (keep it alive) and the paths of both files and of `out.json`.
fn two_results(name: &str, a: &str, b: &str) -> (Folder, PathBuf, PathBuf, PathBuf) {
    let dir = Folder::new(name);
    let (pa, pb) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&pa, a).unwrap();
    std::fs::write(&pb, b).unwrap();
    let out = dir.join("out.json");
    (dir, pa, pb, out)
}

/// A minimal `rigor.run.v1` result: one row, `n` iterations of RPS around `rps` (±0.4%).
fn result_json(rps: f64, n: usize, kernel: &str) -> String {
    let iterations: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let jitter = 1.0 + 0.002 * ((i * 7 % 5) as f64 - 2.0);
            serde_json::json!({
                "index": i + 1,
                "excluded": false,
                "measurements": {"load.rps": rps * jitter, "app.rss": 61.2, "load.latency.p99": 1.5},
                "warnings": [],
                "outside_window": {"requests": 2, "bytes": 180}
            })
        })
        .collect();
    serde_json::json!({
        "schema": "rigor.run.v1",
        "rigor_version": "0.1.0",
        "scenario": "plaintext",
        "profile": "local",
        "description": null,
        "started_at": "2026-11-30T02:00:00Z",
        "status": "complete",
        "environment": {"kernel": kernel, "logical_cores": 2},
        "warnings": [],
        "rows": [{"scenario": "plaintext", "variables": {"connections": "64"}, "variant": null,
                  "iterations": iterations, "summary": {}, "warnings": []}],
        "comparisons": []
    })
    .to_string()
}

/// `rigor compare` of `files` with `extra` flags, colour off and no step summary, for a test
/// that sets more before running it.
fn compare(files: &[&Path], extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rigor"));
    cmd.arg("compare")
        .args(files)
        .args(extra)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY");
    cmd
}

fn rigor(files: &[&Path], extra: &[&str]) -> Output {
    compare(files, extra).output().expect("run rigor")
}

#[test]
fn the_terminal_compares_the_key_figures_and_counts_the_rest() {
    // Two secondary figures alike on both sides beside the key ones.
    let with_secondary = |rps: f64| {
        let mut v: serde_json::Value =
            serde_json::from_str(&result_json(rps, 10, "6.8.0")).unwrap();
        for it in v["rows"][0]["iterations"].as_array_mut().unwrap() {
            it["measurements"]["app.threads.end"] = serde_json::json!(4.0);
            it["measurements"]["app.ctx_switches.involuntary"] = serde_json::json!(100.0);
        }
        v.to_string()
    };
    let (dir, a, b, _) = two_results(
        "short-terminal",
        &with_secondary(100_000.0),
        &with_secondary(80_000.0),
    );
    let md = dir.join("report.md");
    let o = rigor(&[&a, &b], &["--markdown", md.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("Requests/sec (1/s)"), "{stdout}");
    assert!(stdout.contains("Latency 99th (ms)"), "{stdout}");
    assert!(!stdout.contains("Threads at End"), "{stdout}");
    let closing = stdout
        .lines()
        .find(|l| l.starts_with("not shown: "))
        .unwrap_or_else(|| panic!("no closing line:\n{stdout}"));
    assert!(
        closing.starts_with("not shown: 2 comparison(s) without a verdict of change"),
        "{closing}"
    );
    // The Markdown report and --all-measurements hold them.
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("Threads at End"), "{md}");
    assert!(!md.contains("not shown: "), "{md}");
    let o = rigor(&[&a, &b], &["--all-measurements"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("Threads at End"), "{stdout}");
    assert!(stdout.contains("Involuntary Context Switches"), "{stdout}");
    assert!(!stdout.contains("not shown: "), "{stdout}");
}

#[test]
fn clear_rps_drop_exits_3_and_writes_json() {
    let (_dir, a, b, out) = two_results(
        "drop",
        &result_json(100_000.0, 10, "6.8.0"),
        &result_json(90_000.0, 10, "6.9.1"),
    );
    let o = rigor(
        &[&a, &b],
        &["--fail-on-regression", "--json", out.to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(3),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("Requests/sec (1/s)"), "{stdout}");
    assert!(stdout.contains("regression"), "{stdout}");
    assert!(
        !stdout.contains('\x1b'),
        "NO_COLOR must disable colour: {stdout}"
    );
    assert!(stderr.contains("regression in load.rps"), "{stderr}");

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["schema"], "rigor.compare.v1");
    assert_eq!(json["files"][0]["name"], "a");
    assert_eq!(json["files"][1]["name"], "b");
    let rps = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == "load.rps")
        .expect("a load.rps comparison");
    assert_eq!(rps["verdict"], "regression");
    assert_eq!(rps["baseline"], "a");
    assert_eq!(rps["candidate"], "b");
    assert_eq!(rps["row"]["connections"], "64");
    let change = rps["change_pct"].as_f64().unwrap();
    assert!((change + 10.0).abs() < 0.5, "{change}");
    assert!(rps["ci_high_pct"].as_f64().unwrap() < -2.0);
    assert!(rps["p_value"].as_f64().unwrap() < 0.05);
    let warning = &json["warnings"][0];
    assert_eq!(warning["kind"], "not_interleaved");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("kernel (6.8.0 / 6.9.1)"),
        "{warning}"
    );
}

#[test]
fn equal_results_exit_0() {
    let same = result_json(100_000.0, 10, "6.8.0");
    let (dir, a, b, out) = two_results("equal", &same, &same);
    let md = dir.join("out.md");
    let o = rigor(
        &[&a, &b],
        &[
            "--fail-on-regression",
            "--json",
            out.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    for c in json["comparisons"].as_array().unwrap() {
        assert_eq!(c["verdict"], "no change", "{c}");
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("| measurement | a | b | Δ median | 95% CI | p | verdict |"),
        "{md}"
    );
}

#[test]
fn missing_file_is_a_clear_error() {
    let one = result_json(100_000.0, 3, "6.8.0");
    let (dir, a, _, _) = two_results("missing", &one, &one);
    let missing = dir.join("nope.json");
    let o = rigor(&[&a, &missing], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert_ne!(o.status.code(), Some(3));
    assert!(stderr.contains("nope.json: no such file"), "{stderr}");
}

#[test]
fn one_file_without_variants_has_nothing_to_re_analyse() {
    // One file re-analyses the run's own variants; a run without them fails and says why.
    let one = result_json(100_000.0, 3, "6.8.0");
    let (_dir, a, _, _) = two_results("one", &one, &one);
    let o = rigor(&[&a], &[]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("the run has 0 variant(s), so there is nothing to compare within it"),
        "{stderr}"
    );
    // No file at all is still a usage error.
    assert_eq!(rigor(&[], &[]).status.code(), Some(2));
}

/// A `rigor.run.v1` result with one row whose iterations carry `values[i]` of each id, plus
/// top-level fields from `extra` (a description, declarations…).
fn result_with(values: &[(&str, &[f64])], extra: serde_json::Value) -> String {
    let n = values[0].1.len();
    let iterations: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let m: serde_json::Map<String, serde_json::Value> = values
                .iter()
                .map(|(id, v)| (id.to_string(), serde_json::json!(v[i])))
                .collect();
            serde_json::json!({"index": i, "excluded": false, "measurements": m,
                               "warnings": [], "outside_window": {"requests": 2, "bytes": 180}})
        })
        .collect();
    let mut doc = serde_json::json!({
        "schema": "rigor.run.v1", "rigor_version": "0.1.0", "scenario": "s", "profile": "local",
        "description": null, "started_at": "2026-11-30T02:00:00Z", "status": "complete",
        "environment": {"kernel": "6.8.0"}, "warnings": [],
        "rows": [{"scenario": "s", "variables": {}, "variant": null, "iterations": iterations,
                  "summary": {}, "warnings": []}],
        "comparisons": []
    });
    for (k, v) in extra.as_object().unwrap() {
        doc[k] = v.clone();
    }
    doc.to_string()
}

/// A result whose one row has `values` of measurement `id`, one per iteration.
fn one_id(id: &str, values: &[f64]) -> String {
    result_with(&[(id, values)], serde_json::json!({}))
}

fn comparison<'a>(json: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == id)
        .unwrap_or_else(|| panic!("no {id} in {json}"))
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn an_undeclared_throughput_drop_gets_no_verdict_until_its_direction_is_declared() {
    let around = |c: f64| -> Vec<f64> {
        (0..10)
            .map(|i| c * (1.0 + 0.002 * ((i * 7 % 5) as f64 - 2.0)))
            .collect()
    };
    let (base, cand) = (around(800_000.0), around(720_000.0));
    let (_dir, a, b, out) = two_results(
        "undeclared",
        &one_id("cmd.msgs_per_sec", &base),
        &one_id("cmd.msgs_per_sec", &cand),
    );
    let watch = [
        "--fail-on-regression",
        "--measurements",
        "cmd.msgs_per_sec",
        "--json",
    ];

    // Undeclared: a 10% drop is neither an improvement nor a regression, and the warning says
    // how to declare it.
    let o = rigor(&[&a, &b], &[&watch[1..], &[out.to_str().unwrap()]].concat());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let json = read_json(&out);
    let c = comparison(&json, "cmd.msgs_per_sec");
    assert_eq!(c["verdict"], "inconclusive", "{c}");
    assert!(c["direction"].is_null(), "{c}");
    assert!(c["change_pct"].as_f64().unwrap() < -9.0, "{c}");
    let w = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "undeclared_measurement")
        .expect("undeclared warning");
    assert!(
        w["advice"]
            .as_str()
            .unwrap()
            .contains("--measure cmd.msgs_per_sec=higher"),
        "{w}"
    );
    assert!(stdout.contains("no verdict"), "{stdout}");
    assert!(!stdout.contains("improvement"), "{stdout}");

    // Gating on it cannot work: a usage error naming the id and how to declare it, not a pass.
    let o = rigor(&[&a, &b], &[&watch[..], &[out.to_str().unwrap()]].concat());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cmd.msgs_per_sec") && stderr.contains("--measure cmd.msgs_per_sec=higher"),
        "{stderr}"
    );

    // Declared on the command line: a regression, exit 3.
    let o = rigor(
        &[&a, &b],
        &[
            &watch[..],
            &[
                out.to_str().unwrap(),
                "--measure",
                "cmd.msgs_per_sec=higher",
            ],
        ]
        .concat(),
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        comparison(&read_json(&out), "cmd.msgs_per_sec")["verdict"],
        "regression"
    );

    // Declared in the results (as `rigor run` stores rigor.toml's [measurements.ID]): the same.
    let decl = serde_json::json!({"measurements": {"cmd.msgs_per_sec": {"direction": "higher", "unit": "1/s", "label": "Messages/sec"}}});
    std::fs::write(
        &a,
        result_with(&[("cmd.msgs_per_sec", &base)], decl.clone()),
    )
    .unwrap();
    std::fs::write(&b, result_with(&[("cmd.msgs_per_sec", &cand)], decl)).unwrap();
    let o = rigor(&[&a, &b], &[&watch[..], &[out.to_str().unwrap()]].concat());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("Messages/sec (1/s)"), "{stdout}");
    let json = read_json(&out);
    assert_eq!(comparison(&json, "cmd.msgs_per_sec")["direction"], "higher");

    // A flag that contradicts the catalogue, or is not a direction, is a usage error.
    let o = rigor(&[&a, &b], &["--measure", "load.rps=lower"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("higher is better"));
    let o = rigor(&[&a, &b], &["--measure", "cmd.msgs_per_sec=up"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_change_column_never_contradicts_the_medians_beside_it() {
    // Two modes: the medians rise 26.93 → 33.90 while the Hodges–Lehmann shift of the same data
    // is -0.29% (numpy: 100*expm1(median of pairwise log ratios) = -0.2932551319647856).
    let id = "load.latency.p99";
    let (dir, a, b, out) = two_results(
        "contradiction",
        &one_id(id, &[26.10, 26.50, 26.93, 34.10, 34.30]),
        &one_id(id, &[26.00, 26.20, 33.90, 34.00, 34.20]),
    );
    let md = dir.join("out.md");
    let o = rigor(
        &[&a, &b],
        &[
            "--json",
            out.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let json = read_json(&out);
    let c = comparison(&json, id);
    assert_eq!(c["baseline_median"], 26.93);
    assert_eq!(c["candidate_median"], 33.9);
    // 100*(33.9/26.93 - 1) = 25.88191607872261
    assert!(
        (c["change_pct"].as_f64().unwrap() - 25.88191607872261).abs() < 1e-9,
        "{c}"
    );
    assert!(
        (c["shift_pct"].as_f64().unwrap() + 0.2932551319647856).abs() < 1e-9,
        "{c}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("| Latency 99th (ms) | 26.93 | 33.90 | +25.9% |"),
        "{md}"
    );
    assert!(
        md.contains("Δ median: candidate median vs baseline median"),
        "{md}"
    );
}

#[test]
fn small_samples_with_ties_get_the_exact_p_value() {
    // Error counts tie a lot. scipy.stats.permutation_test with |U - mn/2| over midranks,
    // n_resamples=inf: p = 0.11904761904761904 (the normal approximation says 0.0827).
    let id = "load.bad_responses";
    let (_dir, a, b, out) = two_results(
        "ties",
        &one_id(id, &[0., 0., 1., 0., 2.]),
        &one_id(id, &[1., 2., 2., 3., 1.]),
    );
    let o = rigor(&[&a, &b], &["--json", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let p = comparison(&read_json(&out), id)["p_value"]
        .as_f64()
        .unwrap();
    assert!((p - 0.11904761904761904).abs() < 1e-12, "{p}");
}

#[test]
fn hostile_descriptions_and_file_names_reach_the_step_summary_as_text() {
    let rps: Vec<f64> = (0..5).map(|i| 1000.0 + i as f64).collect();
    let described = result_with(
        &[("load.rps", &rps)],
        serde_json::json!({"description": "<script>alert(1)</script>\u{1b}[31mred"}),
    );
    let (dir, a, _, _) = two_results("hostile", &described, "");
    let b = dir.join("<img src=x onerror=alert(1)>\u{1b}[31m.json");
    std::fs::write(&b, one_id("load.rps", &rps)).unwrap();
    let summary = dir.join("summary.md");
    let o = compare(&[&a, &b], &[])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    let unescaped = |needle: &str| {
        md.match_indices(needle)
            .any(|(i, _)| !md[..i].ends_with('\\'))
    };
    assert!(md.contains("script>alert(1)"), "{md}");
    assert!(md.contains("img src=x onerror=alert(1)>"), "{md}");
    assert!(!unescaped("<script>"), "{md}");
    assert!(!unescaped("</script>"), "{md}");
    assert!(!unescaped("<img"), "{md}");
    // Control characters are shown, not sent to whatever displays the summary.
    assert!(!md.contains('\u{1b}'), "{md:?}");
    assert!(md.contains("u{1b}[31mred"), "{md}");
}

#[test]
fn closed_stdout_and_stderr_still_write_the_json_and_the_exit_code() {
    // `rigor compare … | head -0` in a script whose stderr is gone too: the verdict and the JSON
    // must survive the closed terminal.
    let (_dir, a, b, out) = two_results(
        "closed",
        &result_json(100_000.0, 10, "6.8.0"),
        &result_json(90_000.0, 10, "6.8.0"),
    );
    let mut child = compare(
        &[&a, &b],
        &["--fail-on-regression", "--json", out.to_str().unwrap()],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "a panic exits 101");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["schema"], "rigor.compare.v1");
}

#[test]
fn contradictory_directions_are_usage_errors_and_only_the_conflict_is_said() {
    let base: Vec<f64> = (0..5).map(|i| 1000.0 + i as f64).collect();
    let cand: Vec<f64> = (0..5).map(|i| 510.0 + i as f64).collect();
    let decl = |d: &str| serde_json::json!({"measurements": {"cmd.x": {"direction": d}}});
    let (_dir, a, b, out) = two_results(
        "conflict",
        &result_with(&[("cmd.x", &base)], decl("higher")),
        &result_with(&[("cmd.x", &cand)], decl("lower")),
    );

    // The same id declared both ways on the command line: named, exit 2.
    for flags in [
        &["--measure", "cmd.x=higher,cmd.x=lower"][..],
        &["--measure", "cmd.x=higher", "--measure", "cmd.x=lower"][..],
    ] {
        let o = rigor(&[&a, &b], flags);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(
            stderr.contains("cmd.x=higher") && stderr.contains("cmd.x=lower"),
            "{stderr}"
        );
    }

    // Files that disagree: the conflict is said, not "rigor does not know".
    let o = rigor(&[&a, &b], &["--json", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    let warnings = read_json(&out)["warnings"].clone();
    let kinds: Vec<&str> = warnings
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    let conflict = warnings
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "conflicting_declarations")
        .unwrap_or_else(|| panic!("{kinds:?}"));
    assert!(
        conflict["message"]
            .as_str()
            .unwrap()
            .starts_with("the results declare cmd.x differently ("),
        "{conflict}"
    );
    assert!(!kinds.contains(&"undeclared_measurement"), "{kinds:?}");
    assert!(!stdout.contains("does not know"), "{stdout}");
    assert!(!stdout.contains("not declared"), "{stdout}");
    let note = comparison(&read_json(&out), "cmd.x")["note"].clone();
    assert!(note.as_str().unwrap().contains("differently"), "{note}");

    // Gating on it: exit 2, naming the disagreement, not a silent pass of a -49% change.
    let o = rigor(
        &[&a, &b],
        &["--fail-on-regression", "--measurements", "cmd.x"],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cmd.x") && stderr.contains("differently"),
        "{stderr}"
    );
    // Settled on the command line, it is judged.
    let o = rigor(
        &[&a, &b],
        &[
            "--fail-on-regression",
            "--measurements",
            "cmd.x",
            "--measure",
            "cmd.x=higher",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Ten RPS values around `centre`, spread ±`spread` (a fraction) in a fixed zig-zag.
fn rps_around(centre: f64, spread: f64) -> Vec<f64> {
    [0.0, 0.8, -0.6, 1.0, -1.0, 0.4, -0.2, 0.6, -0.8, 0.2]
        .iter()
        .map(|k| centre * (1.0 + spread * k))
        .collect()
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn fail_on_inconclusive_exits_5_on_a_watched_inconclusive_verdict() {
    // ±20% noise around a 3% drop: the interval straddles the 2% threshold.
    let (_dir, a, b, out) = two_results(
        "inconclusive",
        &result_with(
            &[
                ("load.rps", &rps_around(100_000.0, 0.2)),
                ("app.rss", &[61.2; 10]),
            ],
            serde_json::json!({}),
        ),
        &result_with(
            &[
                ("load.rps", &rps_around(97_000.0, 0.2)),
                ("app.rss", &[61.2; 10]),
            ],
            serde_json::json!({}),
        ),
    );
    let json = ["--json", out.to_str().unwrap()];

    // Without the flag (and with --fail-on-regression alone) inconclusive passes, as before.
    let o = rigor(&[&a, &b], &json);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert_eq!(
        comparison(&read_json(&out), "load.rps")["verdict"],
        "inconclusive"
    );
    let o = rigor(&[&a, &b], &[&json[..], &["--fail-on-regression"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("rigor: load.rps is inconclusive (b vs a, s)"));

    // With it: exit 5, each inconclusive watched comparison said, and why the command failed.
    let o = rigor(
        &[&a, &b],
        &[&json[..], &["--fail-on-inconclusive"]].concat(),
    );
    let stderr = stderr_of(&o);
    assert_eq!(o.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("rigor: load.rps is inconclusive (b vs a, s)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("rigor: --fail-on-inconclusive: a watched measurement is inconclusive"),
        "{stderr}"
    );
    // The JSON is written all the same, and says the same verdict.
    assert_eq!(
        comparison(&read_json(&out), "load.rps")["verdict"],
        "inconclusive"
    );

    // Watching what was decided (memory: no change) passes.
    let o = rigor(
        &[&a, &b],
        &["--fail-on-inconclusive", "--measurements", "app.rss"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    assert!(!stderr_of(&o).contains("inconclusive"), "{}", stderr_of(&o));
}

#[test]
fn a_regression_keeps_exit_3_over_an_inconclusive_verdict() {
    // load.rps drops 10% (tight), the p99 latency is too noisy to call.
    let p99_base = rps_around(1.5, 0.3);
    let p99_cand = rps_around(1.52, 0.3);
    let (_dir, a, b, out) = two_results(
        "precedence",
        &result_with(
            &[
                ("load.rps", &rps_around(100_000.0, 0.004)),
                ("load.latency.p99", &p99_base),
            ],
            serde_json::json!({}),
        ),
        &result_with(
            &[
                ("load.rps", &rps_around(90_000.0, 0.004)),
                ("load.latency.p99", &p99_cand),
            ],
            serde_json::json!({}),
        ),
    );
    let watch = [
        "--measurements",
        "load.rps,load.latency.p99",
        "--json",
        out.to_str().unwrap(),
    ];
    let o = rigor(
        &[&a, &b],
        &[
            &watch[..],
            &["--fail-on-regression", "--fail-on-inconclusive"],
        ]
        .concat(),
    );
    let stderr = stderr_of(&o);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("rigor: regression in load.rps (b vs a, s)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("rigor: load.latency.p99 is inconclusive"),
        "{stderr}"
    );
    let json = read_json(&out);
    assert_eq!(comparison(&json, "load.rps")["verdict"], "regression");
    assert_eq!(
        comparison(&json, "load.latency.p99")["verdict"],
        "inconclusive"
    );
    // Only --fail-on-inconclusive: the regression is a decided verdict, the latency is not.
    let o = rigor(
        &[&a, &b],
        &[&watch[..], &["--fail-on-inconclusive"]].concat(),
    );
    assert_eq!(o.status.code(), Some(5), "{}", stderr_of(&o));
    // Watching only the regressed id with only this flag: a decided verdict, exit 0.
    let o = rigor(
        &[&a, &b],
        &["--measurements", "load.rps", "--fail-on-inconclusive"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
}

#[test]
fn fail_on_inconclusive_refuses_to_watch_what_it_cannot_judge() {
    let base: Vec<f64> = (0..5).map(|i| 1000.0 + i as f64).collect();
    let (_dir, a, b, _) = two_results(
        "unjudgeable",
        &one_id("cmd.x", &base),
        &one_id("cmd.x", &base),
    );
    // An id with no direction can never be decided: a usage error naming this flag.
    let o = rigor(
        &[&a, &b],
        &["--fail-on-inconclusive", "--measurements", "cmd.x"],
    );
    let stderr = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--fail-on-inconclusive watches cmd.x")
            && stderr.contains("--measure cmd.x=higher"),
        "{stderr}"
    );
    // The default primary, which these files never measured: said, not a silent pass.
    let o = rigor(
        &[&a, &b],
        &["--fail-on-inconclusive", "--measure", "cmd.x=higher"],
    );
    let stderr = stderr_of(&o);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr
            .contains("--fail-on-inconclusive watches load.rps unless --measurements names others")
            && stderr.contains("measured: cmd.x"),
        "{stderr}"
    );
}

/// `git` in `dir` with a fixed identity, failing the test if it fails.
fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("run git");
    assert!(o.status.success(), "git {args:?}: {}", stderr_of(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn git_bisect_run_skips_inconclusive_commits_and_names_the_first_regressed_one() {
    if Command::new("git").arg("--version").output().is_err() {
        testkit::skip("git is not installed");
        return;
    }
    // Each commit of a throwaway repository holds the result its benchmark would have saved:
    // commits 1-5 as fast as the baseline, commit 4 too noisy to call, 10% slower from 6 on.
    let dir = Folder::new("bisect");
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let base = dir.join("base.json");
    std::fs::write(
        &base,
        result_with(
            &[("load.rps", &rps_around(100_000.0, 0.004))],
            serde_json::json!({}),
        ),
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    let mut hashes = Vec::new();
    for k in 0..=8 {
        let rps = match k {
            4 => rps_around(99_000.0, 0.2),
            k if k >= 6 => rps_around(90_000.0, 0.004),
            _ => rps_around(100_000.0 * (1.0 + 0.001 * (k as f64 % 2.0)), 0.004),
        };
        std::fs::write(
            repo.join("result.json"),
            result_with(&[("load.rps", &rps)], serde_json::json!({})),
        )
        .unwrap();
        git(&repo, &["add", "result.json"]);
        git(
            &repo,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("commit {k}"),
            ],
        );
        hashes.push(git(&repo, &["rev-parse", "HEAD"]).trim().to_string());
    }
    // The wrapper docs/cli.md shows: 0 good, 3 bad, 5 skip, anything else stops the bisection.
    let script = dir.join("judge.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n\"{}\" compare \"{}\" result.json --fail-on-regression --fail-on-inconclusive\n\
             rc=$?\ncase $rc in 0|3) exit $rc ;; 5) exit 125 ;; *) exit 128 ;; esac\n",
            env!("CARGO_BIN_EXE_rigor"),
            base.display()
        ),
    )
    .unwrap();
    git(&repo, &["bisect", "start", &hashes[8], &hashes[0]]);
    let out = git(&repo, &["bisect", "run", "sh", script.to_str().unwrap()]);
    assert!(
        out.contains(&format!("{} is the first bad commit", hashes[6])),
        "expected commit 6 ({}):\n{out}",
        hashes[6]
    );
    let log = git(&repo, &["bisect", "log"]);
    assert!(
        log.contains(&format!("git bisect skip {}", hashes[4])),
        "{log}"
    );
    git(&repo, &["bisect", "reset"]);
}

#[test]
fn a_negative_rate_is_refused_and_the_median_of_huge_values_stays_finite() {
    let (_dir, a, b, out) = two_results(
        "impossible",
        &result_json(-5000.0, 5, "6.8.0"),
        &result_json(5000.0, 5, "6.8.0"),
    );
    let o = rigor(&[&a, &b], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("a.json: row 1 iteration") && stderr.contains("`load.rps` is -"),
        "{stderr}"
    );
    // Two iterations at the largest finite value on each side: their median is that value.
    let huge = |path: &Path| {
        let mut v: serde_json::Value = serde_json::from_str(&result_json(1.0, 2, "6.8.0")).unwrap();
        for it in v["rows"][0]["iterations"].as_array_mut().unwrap() {
            it["measurements"]["load.rps"] = serde_json::json!(f64::MAX);
        }
        std::fs::write(path, v.to_string()).unwrap();
    };
    huge(&a);
    huge(&b);
    let o = rigor(&[&a, &b], &["--json", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains("inf"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let c = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == "load.rps")
        .unwrap_or_else(|| panic!("{json}"));
    assert_eq!(c["baseline_median"].as_f64(), Some(f64::MAX), "{c}");
}

#[test]
fn a_report_lost_to_a_full_disk_is_an_error_and_the_json_is_still_written() {
    let (_dir, a, b, out) = two_results(
        "full",
        &result_json(100_000.0, 10, "6.8.0"),
        &result_json(100_100.0, 10, "6.8.0"),
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = compare(&[&a, &b], &["--json", out.to_str().unwrap()])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not written to standard output") && stderr.contains("No space left"),
        "{stderr}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["schema"], "rigor.compare.v1");
}

/// A result of `n` rows (`connections` = 1..=n, listed in `order`), each of three iterations of
/// load.rps around `rps(connections)`.
fn many_rows(n: usize, reversed: bool, rps: impl Fn(usize) -> f64) -> String {
    let mut rows: Vec<serde_json::Value> = (1..=n)
        .map(|c| {
            let iterations: Vec<serde_json::Value> = (0..5)
                .map(|i| {
                    let jitter = 1.0 + 0.002 * ((i * 7 % 5) as f64 - 2.0);
                    serde_json::json!({"index": i + 1, "excluded": false,
                        "measurements": {"load.rps": rps(c) * jitter},
                        "warnings": [], "outside_window": {"requests": 0, "bytes": 0}})
                })
                .collect();
            serde_json::json!({"scenario": "plaintext", "variables": {"connections": c.to_string()},
                "variant": null, "iterations": iterations, "summary": {}, "warnings": []})
        })
        .collect();
    if reversed {
        rows.reverse();
    }
    serde_json::json!({
        "schema": "rigor.run.v1", "rigor_version": "0.1.0", "scenario": "plaintext",
        "profile": "local", "description": null, "started_at": "2026-11-30T02:00:00Z",
        "status": "complete", "environment": {}, "warnings": [], "rows": rows, "comparisons": []
    })
    .to_string()
}

#[test]
fn thousands_of_rows_are_each_matched_to_their_own() {
    // The candidate lists its rows in the opposite order, and every seventh row lost half its
    // throughput: each verdict must land on its own row.
    let n = 3_000;
    let base = many_rows(n, false, |c| 1_000.0 + c as f64);
    let cand = many_rows(n, true, |c| {
        (1_000.0 + c as f64) * if c.is_multiple_of(7) { 0.5 } else { 1.0 }
    });
    let (_dir, a, b, out) = two_results("many-rows", &base, &cand);
    let o = rigor(&[&a, &b], &["--json", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let json = read_json(&out);
    let comparisons = json["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), n);
    let mut seen = std::collections::BTreeSet::new();
    for c in comparisons {
        let connections: usize = c["row"]["connections"].as_str().unwrap().parse().unwrap();
        assert!(seen.insert(connections), "row {connections} compared twice");
        let base_median = c["baseline_median"].as_f64().unwrap();
        assert!(
            (base_median - (1_000.0 + connections as f64)).abs() < 1e-6,
            "{c}"
        );
        let regressed = c["verdict"] == "regression";
        assert_eq!(regressed, connections.is_multiple_of(7), "{c}");
    }
    assert_eq!(seen.len(), n);
}

#[test]
fn a_result_past_the_size_limit_or_without_end_is_refused_naming_it() {
    let one = result_json(100_000.0, 3, "6.8.0");
    let (dir, a, _, _) = two_results("too-big", &one, &one);
    // Sparse: its size is past the limit without taking the disk.
    let big = dir.join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(256 * 1024 * 1024 + 1).unwrap();
    drop(f);
    for (file, name) in [
        (big.as_path(), "big.json"),
        (Path::new("/dev/zero"), "/dev/zero"),
    ] {
        let o = rigor(&[&a, file], &[]);
        let stderr = stderr_of(&o);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(name) && stderr.contains("larger than 256 MiB"),
            "{stderr}"
        );
    }
}
