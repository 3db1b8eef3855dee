//! Variants in one run: interleaved in a seeded shuffled order, compared with honest verdicts.

use crate::common;
use common::*;
use serde_json::Value;

fn variants_config(port: u16, slow_env: &str) -> String {
    config(port, "", "/plaintext", "")
        + &format!(
            "[scenarios.s.variants.base]\n[scenarios.s.variants.other]\nenv = {{ {slow_env} }}\n"
        )
}

fn verdict(json: &Value, id: &str) -> String {
    json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == id)
        .unwrap_or_else(|| panic!("no comparison for {id}: {}", json["comparisons"]))["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

fn order(json: &Value) -> Vec<(String, u64)> {
    let mut all: Vec<(u64, String, u64)> = Vec::new();
    for row in json["rows"].as_array().unwrap() {
        for it in row["iterations"].as_array().unwrap() {
            all.push((
                it["sequence"].as_u64().unwrap(),
                row["variant"].as_str().unwrap().to_string(),
                it["index"].as_u64().unwrap(),
            ));
        }
    }
    all.sort();
    all.into_iter().map(|(_, v, i)| (v, i)).collect()
}

#[test]
fn a_delay_knob_is_a_regression_on_rps_and_latency() {
    let dir = temp_dir("variants-delay");
    let port = free_port();
    let toml = variants_config(port, "HELLO_DELAY_US = \"1000\"");
    let (out, json) = run(&dir, &toml, &["-i", "5", "--fail-on-regression"]);
    let t = text(&out);
    assert_eq!(
        out.status.code(),
        Some(3),
        "--fail-on-regression exits 3: {t}"
    );
    let json = json.unwrap();
    assert_eq!(verdict(&json, "load.rps"), "regression", "{t}");
    assert_eq!(verdict(&json, "load.latency.mean"), "regression", "{t}");
    let c = json["comparisons"][0].clone();
    assert_eq!(c["baseline"], "base");
    assert_eq!(c["candidate"], "other");
    assert!(t.contains("regression"), "{t}");
}

#[test]
fn identical_variants_are_neither_regression_nor_improvement() {
    let dir = temp_dir("variants-aa");
    let port = free_port();
    let toml = variants_config(port, "SAME = \"1\"");
    // A 5% practical threshold: this shared 2-core machine is noisy, and a false verdict here
    // would fail CI for nothing (the stats crate's A/A tests check the nominal rates).
    let (t, json) = run_exit(
        &dir,
        &toml,
        &["-i", "5", "--threshold", "5%", "--fail-on-regression"],
        0,
    );
    let json = json.unwrap();
    for id in ["load.rps", "load.latency.mean"] {
        let v = verdict(&json, id);
        assert!(v == "no change" || v == "inconclusive", "{id}: {v}\n{t}");
    }
}

#[test]
fn a_seed_replays_the_same_interleaved_order() {
    let dir = temp_dir("variants-seed");
    let port = free_port();
    let toml = variants_config(port, "SAME = \"1\"")
        .replace("duration = \"1s\"", "duration = \"200ms\"")
        .replace("warmup = \"300ms\"", "warmup = \"0s\"");
    let (_, j1) = run_exit(&dir, &toml, &["-i", "4", "--seed", "7"], 0);
    let (_, j2) = run(&dir, &toml, &["-i", "4", "--seed", "7"]);
    let (j1, j2) = (j1.unwrap(), j2.unwrap());
    assert_eq!(j1["seed"], 7);
    assert_eq!(order(&j1), order(&j2));
    assert_eq!(order(&j1).len(), 8);
    // Each round runs both variants once: interleaved, never a block of one variant.
    for round in order(&j1).chunks(2) {
        assert_ne!(round[0].0, round[1].0, "{:?}", order(&j1));
    }
}

#[test]
fn until_conclusive_adds_rounds_until_the_verdict_is_settled() {
    let dir = temp_dir("variants-until");
    let port = free_port();
    let toml = variants_config(port, "HELLO_DELAY_US = \"1000\"")
        .replace("duration = \"1s\"", "duration = \"500ms\"");
    let (_, json) = run_exit(&dir, &toml, &["-i", "2", "--until-conclusive", "8"], 0);
    let json = json.unwrap();
    let n = json["rows"][0]["iterations"].as_array().unwrap().len();
    assert!((4..=8).contains(&n), "iterations per side: {n}");
    assert_eq!(
        verdict(&json, "load.rps"),
        "regression",
        "{}",
        json["comparisons"]
    );
}
