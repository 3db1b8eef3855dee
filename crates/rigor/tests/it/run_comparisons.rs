//! `rigor run` with several scenarios, each with its own variants: every scenario's comparison
//! is made and shown, iterations are numbered alike everywhere, and a plan that can never reach
//! a verdict says so before anything runs.

use crate::common;
use common::*;

fn two_scenarios(port: u16) -> String {
    config(port, "", "/plaintext", "")
        .replace("duration = \"1s\"", "duration = \"300ms\"")
        .replace("warmup = \"300ms\"", "warmup = \"0s\"")
        + r#"
[scenarios.s.variants.base]
[scenarios.s.variants.other]
env = { SAME = "1" }

[scenarios.t]
application = "app"
load = "load"
[scenarios.t.variants.old]
[scenarios.t.variants.new]
env = { SAME = "2" }

[measurements."load.rps"]
label = "Throughput"
"#
}

#[test]
fn every_scenario_is_compared_numbered_from_one_and_warned_up_front() {
    let dir = temp_dir("run-two-scenarios");
    let port = free_port();
    let (out, json) = run(
        &dir,
        &two_scenarios(port),
        &[
            "-i",
            "3",
            "--exclude",
            "1:0",
            "--allow-inconclusive",
            "--csv",
            "result.csv",
            "--markdown",
            "result.md",
            "--description",
            "<script>alert(1)</script>\n# not a heading",
        ],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let json = json.unwrap();

    // Both scenarios' variants are compared, each against its own first variant, and every
    // comparison says which scenario it belongs to.
    let mut pairs: Vec<(String, String, String)> = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["measurement"] == "load.rps")
        .map(|c| {
            (
                c["scenario"].as_str().unwrap().to_string(),
                c["baseline"].as_str().unwrap().to_string(),
                c["candidate"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    pairs.sort();
    let own = |s: &str, b: &str, c: &str| (s.to_string(), b.to_string(), c.to_string());
    assert_eq!(
        pairs,
        vec![own("s", "base", "other"), own("t", "old", "new")],
        "{}",
        json["comparisons"]
    );
    // The report shows both comparisons, each under its scenario (on the terminal a line
    // naming it heads its part of the table).
    let comparison = &stdout[stdout.find("\ncomparison\n").expect("comparison section")..];
    for scenario in ["s", "t"] {
        assert!(
            comparison.contains(&format!("| {scenario} ")),
            "{comparison}"
        );
    }

    // rigor.toml's [measurements.ID] declarations label the tables and travel in the result,
    // so `rigor compare` judges the ids the way this run did.
    assert_eq!(json["measurements"]["load.rps"]["label"], "Throughput");
    assert!(stdout.contains("Throughput (1/s)"), "{stdout}");

    // -i 3 with --exclude 1:0 keeps 2 per variant: said before the first iteration runs and
    // before the first table, with advice that counts the exclusion (-i 5 keeps 4).
    let said = stderr
        .find("leaves 2 per variant")
        .unwrap_or_else(|| panic!("no up-front warning: {stderr}"));
    let first_iteration = stderr.find(" iteration 1:").expect("iteration line");
    assert!(said < first_iteration, "{stderr}");
    assert!(
        stderr.contains("run at least -i 5 (4 kept per variant)"),
        "{stderr}"
    );
    let in_report = stdout.find("leaves 2 per variant").expect("in the report");
    // (The headline above it names the figure too; the first table labels it with its unit.)
    assert!(
        in_report < stdout.find("Throughput (1/s)").unwrap(),
        "{stdout}"
    );

    // One numbering for people: progress lines, the CSV and the report count 1..3; the JSON
    // keeps its 0-based `index`.
    for n in 1..=3 {
        assert!(stderr.contains(&format!(" iteration {n}:")), "{stderr}");
    }
    assert!(!stderr.contains(" iteration 0:"), "{stderr}");
    let csv = std::fs::read_to_string(dir.join("result.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "iteration").unwrap();
    let mut numbers: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers, vec![1, 2, 3], "{csv}");
    let mut indices: Vec<u64> = iterations(&json)
        .iter()
        .map(|it| it["index"].as_u64().unwrap())
        .collect();
    indices.sort();
    assert_eq!(indices, vec![0, 1, 2]);

    // The description is text in the Markdown report, never HTML or a heading of its own.
    let md = std::fs::read_to_string(dir.join("result.md")).unwrap();
    assert!(
        md.contains("\\<script>alert(1)\\</script><br>\\# not a heading"),
        "{md}"
    );
    assert!(!md.contains("\n# not a heading"), "{md}");
}

#[test]
fn exclusions_that_would_keep_nothing_are_refused_before_the_first_iteration() {
    let dir = temp_dir("run-exclude-all");
    let port = free_port();
    let (t, json) = run_exit(
        &dir,
        &config(port, "", "/plaintext", ""),
        &["-i", "4", "--exclude", "2:2"],
        2,
    );
    assert!(
        t.contains("--exclude 2:2") && t.contains("nothing would be kept"),
        "{t}"
    );
    assert!(json.is_none(), "nothing ran, nothing is written: {t}");
    // One kept iteration is enough to run.
    run_exit(
        &dir,
        &config(port, "", "/plaintext", ""),
        &["-i", "3", "--exclude", "1:1"],
        0,
    );
}

#[test]
fn gating_on_a_measurement_without_a_direction_is_refused_up_front() {
    let dir = temp_dir("run-gate-undeclared");
    let port = free_port();
    let (t, json) = run_exit(
        &dir,
        &config(port, "", "/plaintext", ""),
        &["-i", "2", "--fail-on-regression", "--measurements", "cmd.x"],
        2,
    );
    // `rigor run` watches only ids it knows, all of which have a direction: any other is refused.
    assert!(t.contains("unknown measurement `cmd.x`"), "{t}");
    assert!(json.is_none(), "nothing ran, nothing is written: {t}");
}
