//! The terminal report of a real three-variant load run fits the terminal: no line wider than
//! `COLUMNS`, the run in at most 150 lines at 100 columns, the environment in one line
//! (`--verbose`: the table), measurements zero on every side left out (`--all-measurements`
//! shows them), each warning kind once per row, and one live line per iteration on stderr.

mod common;
use common::*;
use std::collections::HashSet;
use std::path::Path;

/// The testbed's plaintext scenario with three variants (the second and third slowed).
fn three_variants(port: u16) -> String {
    config(port, "", "/plaintext", "")
        + "[scenarios.s.variants.one]\n\
           [scenarios.s.variants.two]\nenv = { HELLO_DELAY_US = \"100\" }\n\
           [scenarios.s.variants.three]\nenv = { HELLO_DELAY_US = \"300\" }\n"
}

/// Runs the scenario in `dir` with `COLUMNS=columns` and `args`; returns stdout and stderr.
fn run_at(dir: &Path, columns: usize, args: &[&str]) -> (String, String) {
    let out = rigor_command(
        dir,
        &[RUN, &["-i", "2", "--allow-inconclusive"], args].concat(),
    )
    .env("COLUMNS", columns.to_string())
    .output()
    .expect("run rigor");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    (stdout, stderr)
}

/// The lines of the report's `warnings` section: from its heading to the machine's line.
fn warnings_section(report: &str) -> usize {
    let lines: Vec<&str> = report.lines().collect();
    let Some(start) = lines
        .windows(2)
        .position(|w| w[0] == "warnings" && w[1].starts_with('─'))
    else {
        return 0;
    };
    lines[start..]
        .iter()
        .take_while(|l| !l.starts_with("machine: "))
        .count()
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn a_three_variant_run_fits_a_hundred_columns_and_says_each_warning_once() {
    let dir = temp_dir("terminal-fit");
    std::fs::write(dir.join("rigor.toml"), three_variants(free_port())).unwrap();

    let (stdout, stderr) = run_at(&dir, 100, &[]);
    assert!(
        widest(&stdout) <= 100,
        "{} wide:\n{stdout}",
        widest(&stdout)
    );
    // The tables, the comparisons and their notes once took over 170 lines. The warnings'
    // section grows with how busy the machine is (busy, pressure, foreign CPU, a starved
    // client, noisy rows): each kind is said at most once per row (below), and its lines are
    // not counted here.
    let lines = stdout.lines().count() - warnings_section(&stdout);
    assert!(
        lines <= 150,
        "{lines} lines besides the warnings:\n{stdout}"
    );
    // The machine in one line, not the table.
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("machine: "))
            .count(),
        1,
        "{stdout}"
    );
    assert!(!stdout.contains("│ environment"), "{stdout}");
    // TLS errors were measured (zero on a plain http:// run) and are left out of the report.
    let json = result(&dir);
    let tls: Vec<f64> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["iterations"].as_array().unwrap())
        .filter_map(|it| m(it, "load.errors.tls"))
        .collect();
    assert!(!tls.is_empty() && tls.iter().all(|v| *v == 0.0), "{tls:?}");
    assert!(!stdout.contains("TLS errors"), "{stdout}");
    assert!(stdout.contains("Requests/sec"), "{stdout}");
    // Each warning kind at most once per row: `label · iterations …: [kind]`.
    let mut said = HashSet::new();
    for item in stdout.lines().filter(|l| l.starts_with("• ")) {
        let (Some(label), Some(kind)) = (
            item.split([':', '·']).next(),
            item.split('[').nth(1).and_then(|k| k.split(']').next()),
        ) else {
            continue;
        };
        assert!(
            said.insert((label.trim().to_string(), kind.to_string())),
            "{kind} twice for {label}:\n{stdout}"
        );
    }
    // One live line per iteration: warnings are named on it, never on lines of their own.
    assert!(
        !stderr.lines().any(|l| l.starts_with("  warning:")),
        "{stderr}"
    );
    let iteration_lines = stderr
        .lines()
        .filter(|l| l.contains(" iteration ") && !l.starts_with("error"))
        .count();
    assert_eq!(iteration_lines, 6, "{stderr}");

    // Narrower, with everything asked for: still no line wider, and now the zero rows and the
    // whole environment.
    let (stdout, _) = run_at(&dir, 60, &["--verbose", "--all-measurements"]);
    assert!(widest(&stdout) <= 60, "{} wide:\n{stdout}", widest(&stdout));
    assert!(stdout.contains("TLS errors"), "{stdout}");
    assert!(stdout.contains("│ environment"), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.starts_with("machine: ")),
        "{stdout}"
    );
}
