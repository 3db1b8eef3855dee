//! `rigor compare` end to end: real result files on disk, the built binary, its exit code and its
//! JSON, as a CI job would use it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory per test, without extra dependencies.
fn temp_dir(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let dir = std::env::temp_dir().join(format!(
        "rigor-compare-cli-{name}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
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

fn rigor(args: &[&Path], extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rigor"))
        .arg("compare")
        .args(args)
        .args(extra)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("run rigor")
}

#[test]
fn clear_rps_drop_exits_3_and_writes_json() {
    let dir = temp_dir("drop");
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    let out = dir.join("out.json");
    std::fs::write(&a, result_json(100_000.0, 10, "6.8.0")).unwrap();
    std::fs::write(&b, result_json(90_000.0, 10, "6.9.1")).unwrap();
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
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn equal_results_exit_0() {
    let dir = temp_dir("equal");
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    let out = dir.join("out.json");
    std::fs::write(&a, result_json(100_000.0, 10, "6.8.0")).unwrap();
    std::fs::write(&b, result_json(100_000.0, 10, "6.8.0")).unwrap();
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
        md.contains("| measurement | a | b | change | 95% CI | p | verdict |"),
        "{md}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_file_is_a_clear_error() {
    let dir = temp_dir("missing");
    let a = dir.join("a.json");
    std::fs::write(&a, result_json(100_000.0, 3, "6.8.0")).unwrap();
    let missing = dir.join("nope.json");
    let o = rigor(&[&a, &missing], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert_ne!(o.status.code(), Some(3));
    assert!(stderr.contains("nope.json: no such file"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_file_is_a_usage_error() {
    let dir = temp_dir("one");
    let a = dir.join("a.json");
    std::fs::write(&a, result_json(100_000.0, 3, "6.8.0")).unwrap();
    let o = rigor(&[&a], &[]);
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}
