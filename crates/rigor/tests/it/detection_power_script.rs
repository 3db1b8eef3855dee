//! `scripts/detection-power`: a smoke run (`--quick`) of real trials whose table is checked
//! against the result files it kept, and Ctrl-C in the middle of a trial leaving no process.

use crate::common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Whether python3 can run; the tests skip with a printed reason when it cannot.
fn have_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The script with the rigor under test and the testbed reached through a link inside `dir`,
/// so every process it starts names `dir` on its command line.
fn script(dir: &Path, args: &[&str]) -> Command {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let server = bin.join("hello-server");
    if !server.exists() {
        std::os::unix::fs::symlink(hello_server(), &server).unwrap();
    }
    let mut cmd = Command::new("python3");
    cmd.arg(workspace().join("scripts/detection-power"))
        .args(["--rigor", env!("CARGO_BIN_EXE_rigor")])
        .arg("--server")
        .arg(&server)
        .args(args)
        .env("NO_COLOR", "1")
        .current_dir(dir);
    cmd
}

/// Live processes (zombies aside) whose command line mentions `needle`.
fn leftovers(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if cmd.contains(needle) && !zombie && pid != std::process::id() {
            out.push(format!("{pid}: {cmd}"));
        }
    }
    out
}

/// `h/t (p%)` → (h, t), checking the percentage agrees.
fn count_cell(cell: &str) -> (usize, usize) {
    let (frac, p) = cell
        .split_once(" (")
        .unwrap_or_else(|| panic!("count cell `{cell}`"));
    let (h, t) = frac.split_once('/').unwrap();
    let (h, t): (usize, usize) = (h.parse().unwrap(), t.parse().unwrap());
    let p: f64 = p.trim_end_matches("%)").parse().unwrap();
    assert!((p - 100.0 * h as f64 / t as f64).abs() <= 0.5, "{cell}");
    (h, t)
}

/// The verdict on load.rps in a result or comparison file.
fn rps_verdict(path: &Path) -> String {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let c = doc["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == "load.rps")
        .unwrap_or_else(|| panic!("{}: no load.rps comparison", path.display()));
    c["verdict"].as_str().unwrap().to_string()
}

/// Whether the table would count `verdict` for `effect`.
fn counts(effect: u32, verdict: &str) -> bool {
    if effect == 0 {
        verdict == "regression" || verdict == "improvement"
    } else {
        verdict == "regression"
    }
}

/// The median within-round ratio (candidate / baseline − 1, in %) of the kept rounds of every
/// trial of `effect`, computed from the kept results, and how many rounds it rests on.
fn true_change(out: &Path, effect: u32, trials: usize) -> (f64, usize) {
    let mut ratios = Vec::new();
    for t in 1..=trials {
        let path = out.join(format!("trial{t:02}-effect{effect}/run.json"));
        let run: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let kept = |variant: &str| -> Vec<(u64, f64)> {
            let row = run["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["variant"] == variant)
                .unwrap();
            row["iterations"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|it| it["excluded"] == false && it["error"].is_null())
                .map(|it| (it["index"].as_u64().unwrap(), m(it, "load.rps").unwrap()))
                .collect()
        };
        let candidate = format!("b{}", 500 * (100 + effect) / 100);
        let (a, b) = (kept("a"), kept(&candidate));
        for (i, va) in &a {
            if let Some((_, vb)) = b.iter().find(|(j, _)| j == i) {
                ratios.push(vb / va);
            }
        }
    }
    ratios.sort_by(|x, y| x.partial_cmp(y).unwrap());
    let n = ratios.len();
    let median = if n % 2 == 1 {
        ratios[n / 2]
    } else {
        (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0
    };
    (100.0 * (median - 1.0), n)
}

/// The markdown table's data lines, split into cells.
fn table_rows(stdout: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(
            "| change | measured true change | n per side | rigor | naive | rigor's noise floor \
             (median) |"
        ),
        "{stdout}"
    );
    assert_eq!(lines[1], "|---|---|---|---|---|---|", "{stdout}");
    lines[2..]
        .iter()
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn quick_run_table_matches_the_kept_results() {
    if !have_python() {
        return skip("python3 is not installed");
    }
    let dir = temp_dir("power-quick");
    let out_dir = dir.join("out");
    let out = script(&dir, &["--quick", "--out", out_dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", text(&out));
    let rows = table_rows(&stdout);
    // --quick: effects 0 and 5, n = 5 only, 2 trials each.
    assert_eq!(rows.len(), 2, "{stdout}");
    for (row, effect) in rows.iter().zip([0u32, 5]) {
        assert_eq!(row.len(), 6, "{row:?}");
        let label = if effect == 0 {
            "A/A (500 vs 500 µs)".to_string()
        } else {
            format!("−{effect}% (500 vs 525 µs)")
        };
        assert_eq!(row[0], label);
        assert_eq!(row[2], "5");
        let (rigor_hits, rigor_trials) = count_cell(&row[3]);
        let (naive_hits, naive_trials) = count_cell(&row[4]);
        assert_eq!((rigor_trials, naive_trials), (2, 2), "{row:?}");
        // The counts are what the kept files say: the run's own comparison (n is the whole
        // run) and the naive comparison of the two sides.
        let trial = |t: usize| out_dir.join(format!("trial{t:02}-effect{effect}"));
        let rigor_says = (1..=2)
            .filter(|&t| counts(effect, &rps_verdict(&trial(t).join("run.json"))))
            .count();
        let naive_says = (1..=2)
            .filter(|&t| {
                counts(
                    effect,
                    &rps_verdict(&trial(t).join("n5-naive-compare.json")),
                )
            })
            .count();
        assert_eq!(
            (rigor_hits, naive_hits),
            (rigor_says, naive_says),
            "{row:?}"
        );
        // The measured true change, recomputed from the runs.
        let (change, rounds) = true_change(&out_dir, effect, 2);
        assert_eq!(
            row[1],
            format!("{change:+.2}% ({rounds} rounds)"),
            "{row:?}"
        );
        assert!(rounds <= 10, "{row:?}");
    }
    // The naive sides hold every iteration of their variant, nothing excluded, no variant.
    let t1 = out_dir.join("trial01-effect5");
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(t1.join("run.json")).unwrap()).unwrap();
    for (file, variant) in [("n5-naive-a.json", "a"), ("n5-naive-b525.json", "b525")] {
        let side: Value =
            serde_json::from_str(&std::fs::read_to_string(t1.join(file)).unwrap()).unwrap();
        let rows = side["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "{file}");
        assert!(rows[0]["variant"].is_null(), "{file}");
        let original = run["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["variant"] == variant)
            .unwrap();
        let its = rows[0]["iterations"].as_array().unwrap();
        assert_eq!(its.len(), original["iterations"].as_array().unwrap().len());
        assert!(its.iter().all(|it| it["excluded"] == false), "{file}");
    }
    assert!(stdout.contains("Threshold 1%"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Waits for `child` up to `limit`; `None` when it is still running.
fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn ctrl_c_stops_the_script_and_leaves_no_process() {
    if !have_python() {
        return skip("python3 is not installed");
    }
    let dir = temp_dir("power-sigint");
    let out_dir: PathBuf = dir.join("out");
    let mut child = script(
        &dir,
        &[
            "--quick",
            "--duration",
            "2s",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Wait until the first trial's server answers (its log folder exists), then interrupt.
    let start = Instant::now();
    let logs = out_dir.join("trial01-effect0/logs");
    while !logs.exists() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(logs.exists(), "the first trial never started");
    std::thread::sleep(Duration::from_millis(1500));
    let needle = dir.display().to_string();
    assert!(
        leftovers(&needle)
            .iter()
            .any(|p| p.contains("hello-server")),
        "no server was running: {:?}",
        leftovers(&needle)
    );
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_for(&mut child, Duration::from_secs(40));
    let Some(status) = status else {
        let _ = child.kill();
        panic!("the script did not stop within 40 s of SIGINT");
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(130), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stopped by SIGINT"),
        "{}",
        text(&out)
    );
    let left = leftovers(&needle);
    assert!(left.is_empty(), "left running: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
