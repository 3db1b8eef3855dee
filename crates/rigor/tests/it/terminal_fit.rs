//! The terminal report of real runs fits the terminal: no line wider than `COLUMNS`; a
//! one-scenario, three-variant load run in at most 100 lines at 100 columns and the bundled
//! default config (three scenarios, a matrix of variants) in at most 120; the environment in
//! one line (`--verbose`: the table), the key figures as a line per row with the rest counted
//! in one closing line (`--all-measurements` shows them), each warning kind once per row, and
//! one live line per iteration on stderr.

use crate::common;
use common::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

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
        .position(|w| w[0] == "warnings" && w[1].starts_with('-'))
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
    // Two iterations on a machine busy enough to warn about every one: the comparisons' notes
    // and the noise warnings take more lines than a quiet run's; every measurement of every
    // row, the timelines and the machine once took over 150.
    // The warnings' section grows with how busy the machine is (busy, pressure, foreign CPU, a
    // starved client, noisy rows): each kind is said at most once per row (below), and its
    // lines are not counted here.
    let lines = stdout.lines().count() - warnings_section(&stdout);
    assert!(
        lines <= 100,
        "{lines} lines besides the warnings:\n{stdout}"
    );
    // The key figures, a line per variant; the rest counted in the closing line.
    for variant in ["one", "two", "three"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("| {variant} "))),
            "{stdout}"
        );
    }
    assert!(!stdout.contains("Threads at End"), "{stdout}");
    assert!(!stdout.contains("| timeline"), "{stdout}");
    let closing = stdout
        .lines()
        .position(|l| l.starts_with("not shown: "))
        .unwrap_or_else(|| panic!("no closing line:\n{stdout}"));
    let said = stdout
        .lines()
        .skip(closing)
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(said.contains("(--all-measurements)"), "{said}");
    assert!(said.contains("the timelines (--verbose)"), "{said}");
    // The machine in one line, not the table.
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("machine: "))
            .count(),
        1,
        "{stdout}"
    );
    assert!(!stdout.contains("| environment"), "{stdout}");
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
    assert!(stdout.contains("Threads at End"), "{stdout}");
    assert!(stdout.contains("| timeline"), "{stdout}");
    assert!(!stdout.contains("not shown: "), "{stdout}");
    assert!(stdout.contains("| environment"), "{stdout}");
    assert!(
        !stdout.lines().any(|l| l.starts_with("machine: ")),
        "{stdout}"
    );
}

/// The release pingpong testbed the bundled config runs, built once.
fn pingpong() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "-q", "-p", "pingpong"])
        .current_dir(workspace())
        .status()
        .expect("cargo build pingpong");
    assert!(status.success(), "building pingpong failed");
    workspace().join("target/release/pingpong")
}

/// The bundled rigor.toml as it is (three scenarios, a matrix of two variants), shortened to
/// run in a test: the testbeds built here, the loads 1 s, pingpong's exchanges fewer.
fn bundled_default() -> String {
    let hello = hello_server();
    let pingpong = pingpong();
    let bundled = std::fs::read_to_string(workspace().join("rigor.toml")).unwrap();
    let mut out = String::new();
    for line in bundled.lines() {
        if line.starts_with("build = ") {
            continue;
        }
        let line = line
            .replace("target/release/hello-server", &hello.display().to_string())
            .replace("target/release/pingpong", &pingpong.display().to_string())
            .replace("duration = \"5s\"", "duration = \"1s\"")
            .replace("warmup = \"2s\"", "warmup = \"300ms\"")
            .replace("--messages 20000", "--messages 2000");
        out.push_str(&line);
        out.push('\n');
    }
    for (was, is) in [("duration = \"1s\"", 2), ("--messages 2000", 1)] {
        assert_eq!(
            out.matches(was).count(),
            is,
            "the bundled config changed:\n{out}"
        );
    }
    out
}

#[test]
fn the_bundled_default_run_fits_in_120_lines_of_100_columns() {
    let dir = temp_dir("terminal-fit-bundled");
    std::fs::write(dir.join("rigor.toml"), bundled_default()).unwrap();
    let port = free_port().to_string();
    let var = format!("port={port}");
    let out = rigor_command(&dir, &[RUN, &["--var", &var]].concat())
        .env("COLUMNS", "100")
        .output()
        .expect("run rigor");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        widest(&stdout) <= 100,
        "{} wide:\n{stdout}",
        widest(&stdout)
    );
    // As above, the warnings' lines depend on how busy the machine is and are not counted.
    let lines = stdout.lines().count() - warnings_section(&stdout);
    assert!(
        lines <= 120,
        "{lines} lines besides the warnings:\n{stdout}"
    );
    // Every scenario's key figures, the pivot and the headline are there; what is left out is
    // said in one line.
    let json = result(&dir);
    for scenario in ["plaintext", "json"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("| {scenario} "))),
            "{stdout}"
        );
    }
    assert!(stdout.contains("| window=1 baseline "), "{stdout}");
    assert!(stdout.contains("Msgs/sec (1/s) by clients"), "{stdout}");
    let pairs = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["measurement"] == "cmd.msgs_per_sec")
        .count();
    assert_eq!(pairs, 8, "{json}");
    assert!(
        stdout
            .lines()
            .filter(|l| l.starts_with("• slowed vs baseline (clients="))
            .count()
            == 2 * pairs,
        "{stdout}"
    );
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("not shown: "))
            .count(),
        1,
        "{stdout}"
    );
    compare_of_the_bundled_default_fits_in_45_lines(&dir, pairs);
}

/// `rigor compare` of the bundled default's result at 100 columns: the verdict lines, then one
/// table for the sweep (a line per compared row), each repeated note said once with its row
/// count and the iteration advice in one line, in at most 45 lines besides the warnings; the
/// Markdown report keeps every figure the terminal leaves out.
fn compare_of_the_bundled_default_fits_in_45_lines(dir: &Path, pairs: usize) {
    let markdown = dir.join("compare.md");
    let out = rigor_command(dir, &["compare", "result.json"])
        .args(["--markdown", &markdown.display().to_string()])
        .env("COLUMNS", "100")
        .output()
        .expect("run rigor compare");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out));
    assert!(
        widest(&stdout) <= 100,
        "{} wide:\n{stdout}",
        widest(&stdout)
    );
    let lines = stdout.lines().count() - warnings_section(&stdout);
    assert!(lines <= 45, "{lines} lines besides the warnings:\n{stdout}");
    // The answer first: a verdict line per compared sweep point.
    let verdicts = stdout
        .lines()
        .take_while(|l| l.starts_with("• ") || l.starts_with("  ") || l == &"rigor compare")
        .filter(|l| l.starts_with("• slowed vs baseline (clients="))
        .count();
    assert_eq!(verdicts, pairs, "{stdout}");
    // One table: its header once, a line per sweep point.
    assert_eq!(stdout.matches("| measurement").count(), 1, "{stdout}");
    for clients in ["1", "2", "4", "8"] {
        for window in ["1", "16"] {
            let point = format!("|   clients={clients} window={window} ");
            assert_eq!(stdout.matches(&point).count(), 1, "{point}:\n{stdout}");
        }
    }
    // Each note once: no bullet line said twice, the paired one naming its rows, and at most
    // one line of iteration advice.
    let notes: Vec<&str> = stdout.lines().filter(|l| l.starts_with("• ")).collect();
    let mut seen = HashSet::new();
    for n in &notes {
        assert!(seen.insert(*n), "said twice: {n}\n{stdout}");
    }
    let paired: Vec<&&str> = notes
        .iter()
        .filter(|l| l.contains("too few for the paired test"))
        .collect();
    assert!(paired.len() <= 2, "{stdout}");
    assert!(paired.iter().all(|l| l.contains(" rows: ")), "{stdout}");
    let advice = notes
        .iter()
        .filter(|l| l.contains("would likely settle") || l.contains("would need over"))
        .count();
    assert!(advice <= 1, "{stdout}");
    // What the terminal leaves out (a column, the pivot, the other comparisons) the Markdown
    // report holds: a p-value for every compared sweep point.
    let md = std::fs::read_to_string(&markdown).unwrap();
    assert!(md.contains("| p |"), "{md}");
    assert!(md.contains("Msgs/sec (1/s) by clients"), "{md}");
    let points = md
        .lines()
        .filter(|l| l.starts_with("| Msgs/sec (1/s) |"))
        .count();
    assert_eq!(points, pairs, "{md}");
}

/// `rigor bench`'s verdict lines, printed after the report, fit the terminal as the report
/// does: at 60 columns each command's line of key figures continues on indented lines.
#[test]
fn bench_verdicts_fit_the_terminal() {
    let dir = temp_dir("terminal-fit-bench");
    let out = rigor_command(&dir, &["bench", "-i", "4", "true", "true", "true"])
        .env("COLUMNS", "60")
        .output()
        .expect("run rigor");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(widest(&stdout) <= 60, "{} wide:\n{stdout}", widest(&stdout));
    // The verdict of each command is still there, its first line starting with the pair.
    for pair in ["B vs A: ", "C vs A: "] {
        assert!(stdout.lines().any(|l| l.starts_with(pair)), "{stdout}");
    }
}
