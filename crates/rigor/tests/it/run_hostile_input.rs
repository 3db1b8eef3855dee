//! Hostile input to the real binary: overflowing numbers, impossible machine settings and bad
//! configs are usage errors (exit 2) with a message naming file, line and key — never a panic —
//! and nothing is built or started.

use crate::common;
use common::*;
use std::path::Path;
use std::process::Output;

/// A config whose build and start leave marker files, so a test can see they never ran.
const BASE: &str = r#"[variables]
port = 1

[jobs.app]
build = "touch built-marker"
command = "touch started-marker; sleep 5"
ready = { stdout = "never" }

[jobs.load]
url = "http://127.0.0.1:{{port}}/"
duration = "1s"
warmup = "0s"

[scenarios.s]
application = "app"
load = "load"
"#;

/// Asserts a usage error: exit 2, no panic text, nothing built, started or written.
fn usage_error(dir: &Path, out: &Output) -> String {
    let t = text(out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    for bad in ["panicked", "backtrace", "RUST_BACKTRACE", "untagged enum"] {
        assert!(!t.contains(bad), "`{bad}` in: {t}");
    }
    for marker in ["built-marker", "started-marker", "out", "result.json"] {
        assert!(!dir.join(marker).exists(), "{marker} exists: {t}");
    }
    t
}

fn run_config(name: &str, toml: &str, args: &[&str]) -> String {
    let dir = temp_dir(name);
    let (out, _) = run(&dir, toml, args);
    usage_error(&dir, &out)
}

#[test]
fn overflowing_durations_and_counts_on_the_command_line_are_usage_errors() {
    let dir = temp_dir("hostile-flags");
    std::fs::write(dir.join("rigor.toml"), BASE).unwrap();
    let huge = "99999999999999999999999h";
    let url = "http://127.0.0.1:1/";
    let day = "longer than the limit of 24h";
    let rows = "more than the limit of 10000 iterations per row";
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec!["run", "--sample-interval", huge],
            "--sample-interval",
            day,
        ),
        (
            vec!["run", "-i", "18446744073709551615"],
            "-i/--iterations",
            rows,
        ),
        (
            vec!["run", "--until-conclusive", "18446744073709551615"],
            "--until-conclusive",
            rows,
        ),
        (vec!["load", url, "-d", huge], "--duration", day),
        (vec!["load", url, "-w", "18446744074s"], "--warmup", day),
        (vec!["load", url, "--timeout", huge], "--timeout", day),
        (
            vec!["load", url, "--cpus", "0-99999999999"],
            "99999999999",
            "past the largest CPU number",
        ),
    ];
    for (args, named, limit) in cases {
        let out = rigor(&dir, &args);
        let t = usage_error(&dir, &out);
        assert!(t.contains(named), "{args:?}: {t}");
        assert!(
            t.contains(limit),
            "{args:?} should say what the limit is: {t}"
        );
    }
}

#[test]
fn duplicate_selections_are_usage_errors() {
    let toml = BASE.to_string() + "[scenarios.s.variants.v]\n[scenarios.s.variants.w]\n";
    let t = run_config("hostile-dup", &toml, &["-s", "s,s", "--variants", "v,v"]);
    assert!(t.contains("-s/--scenario: `s` is selected twice"), "{t}");
    assert!(t.contains("--variants: `v` is selected twice"), "{t}");
}

#[test]
fn every_config_problem_is_listed_with_file_line_and_key_before_the_build() {
    let toml = BASE
        .replace("port = 1", "port = 1\nn = \"{{n}}\"")
        .replace(
            "command = \"touch",
            "dir = \"no-such-folder\"\ncommand = \"echo {{n}}; touch",
        )
        .replace(
            "duration = \"1s\"",
            "duration = \"0s\"\ntimeout = \"99999999999999999999999h\"\nmethod = \"G T\"\n\
             headers = { \"X Y\" = \"1\" }\nconnections = 18446744073709551615",
        )
        + "[profiles.local]\napplication = { cpus = \"5000\" }\nload = { cpus = \"1023\" }\n";
    let t = run_config("hostile-config", &toml, &[]);
    for (at, what) in [
        ("rigor.toml:7: jobs.app.dir", "does not exist"),
        ("rigor.toml:8: jobs.app.command", "`n` refers to itself"),
        ("rigor.toml:13: jobs.load.duration", "more than zero"),
        ("rigor.toml:14: jobs.load.timeout", "limit of 24h"),
        ("rigor.toml:15: jobs.load.method", "`G T`"),
        ("rigor.toml:16: jobs.load.headers", "`X Y`"),
        ("rigor.toml:17: jobs.load.connections", "open-file limit"),
        ("rigor.toml:24: profiles.local.application", "CPU 5000"),
        (
            "rigor.toml:25: profiles.local.load",
            "CPU 1023 is not online or not allowed",
        ),
    ] {
        assert!(
            t.lines().any(|l| l.contains(at) && l.contains(what)),
            "`{at}` … `{what}` missing in:\n{t}"
        );
    }
    assert!(
        t.contains("9 problems; nothing was built or started"),
        "{t}"
    );
}

#[test]
fn a_matrix_of_ten_million_rows_is_refused_with_its_count() {
    let values = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
    let keys: Vec<String> = "abcdefg"
        .chars()
        .map(|k| format!("{k} = {values}"))
        .collect();
    let toml = BASE.to_string() + &format!("matrix = {{ {} }}\n", keys.join(", "));
    let start = std::time::Instant::now();
    let t = run_config("hostile-matrix", &toml, &[]);
    assert!(start.elapsed().as_secs() < 10, "planning took too long");
    assert!(
        t.contains("rigor.toml:17: scenarios.s.matrix: 10000000 rows"),
        "{t}"
    );
}

#[test]
fn a_list_value_says_what_was_expected() {
    let toml = BASE.replace("duration = \"1s\"", "connections = [1, 2]");
    let t = run_config("hostile-list", &toml, &[]);
    assert!(
        t.contains("rigor.toml:11:") && t.contains("a single number") && t.contains("matrix"),
        "{t}"
    );
}

#[test]
fn an_endless_or_unreadable_config_is_refused() {
    let dir = temp_dir("hostile-file");
    for (file, says) in [("/dev/zero", "larger than"), (".", "cannot read")] {
        let out = rigor(&dir, &["run", "-f", file]);
        let t = usage_error(&dir, &out);
        assert!(t.contains(says), "{file}: {t}");
    }
}

#[test]
fn wrong_types_unknown_keys_and_row_problems_are_listed_in_one_run_in_line_order() {
    // A wrong type, an unknown key, a bad declaration and a bad load value: once each,
    // in the order of the file, from one run.
    let toml = BASE.replace("duration = \"1s\"", "duration = \"0s\"\nconections = 8")
        + "iterations = 0\n[measurements.\"cmd.x\"]\ndirection = \"up\"\nunit = 5\n";
    let t = run_config("one-pass", &toml, &[]);
    let at: Vec<&str> = t
        .lines()
        .filter_map(|l| l.strip_prefix("error: rigor.toml:"))
        .filter_map(|l| l.split(':').next())
        .collect();
    assert_eq!(at, ["11", "12", "18", "20", "21"], "{t}");
    for what in [
        "jobs.load.duration: `0s` must be more than zero",
        "jobs.load.conections: unknown field",
        "scenarios.s.iterations: must be at least 1",
        "measurements.\"cmd.x\".direction: direction must be",
        "measurements.\"cmd.x\".unit: invalid type: integer `5`",
        "5 problems; nothing was built or started",
    ] {
        assert!(t.contains(what), "{what} missing in {t}");
    }
}

#[test]
fn thresholds_outside_0_to_100_percent_are_usage_errors_naming_flag_and_value() {
    let dir = temp_dir("hostile-threshold");
    std::fs::write(dir.join("rigor.toml"), BASE).unwrap();
    let pct = "expected a percentage above 0% and below 100%";
    for value in ["101%", "100", "0%", "-5%", "NaN", "abc%"] {
        // `--threshold=VALUE`: a negative value is the flag's, not a flag of its own.
        let flag = format!("--threshold={value}");
        let per_id = format!("--threshold=load.rps={value}");
        for args in [
            vec!["run", &flag],
            vec!["run", &per_id],
            vec!["bench", &flag, "--", "true"],
            vec!["compare", "a.json", "b.json", &flag],
        ] {
            let out = rigor(&dir, &args);
            let t = usage_error(&dir, &out);
            assert!(
                t.contains("--threshold") && t.contains(&format!("`{value}`")) && t.contains(pct),
                "{args:?}: {t}"
            );
        }
    }
    // The config's own key is named with its value.
    let toml = BASE.to_string() + "\n[measurements.\"load.rps\"]\nthreshold = \"101%\"\n";
    let t = run_config("hostile-threshold-key", &toml, &[]);
    assert!(
        t.contains("[measurements.\"load.rps\"]")
            || t.contains("measurements.\"load.rps\".threshold")
            || t.contains("measurements.load.rps"),
        "{t}"
    );
    assert!(
        t.contains("threshold") && t.contains("`101%`") && t.contains(pct),
        "{t}"
    );
}

#[test]
fn an_empty_strict_list_is_a_usage_error_naming_the_kinds() {
    let dir = temp_dir("hostile-strict");
    std::fs::write(dir.join("rigor.toml"), BASE).unwrap();
    for args in [
        vec!["run", "--strict="],
        vec!["run", "--strict=,"],
        vec!["bench", "--strict=", "--", "true"],
    ] {
        let out = rigor(&dir, &args);
        let t = usage_error(&dir, &out);
        assert!(
            t.contains("names no warning kind; give plain --strict for every kind")
                && t.contains("kinds among all, bad_responses, busy_machine"),
            "{args:?}: {t}"
        );
    }
}
