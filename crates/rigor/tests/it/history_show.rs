//! `rigor history` on crafted histories: a 5% step at run 30 of 60 is one change point near 30
//! (in the text, the JSON and the page), a flat noisy series has none, `--since` cuts the
//! window, and names that match nothing are errors listing what exists.

use crate::common;
use crate::history_support;
use common::*;
use history_support::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A store in `dir` holding the series `step` (5% up from run 30 of 60) and `flat` (60 runs,
/// no step); returns its path and the crafted files.
fn store_with_series(dir: &Path) -> (PathBuf, Vec<PathBuf>) {
    let mut files = write_series(dir, "step", 60, 30, 0.05, 11);
    files.extend(write_series(dir, "flat", 60, 60, 0.0, 12));
    let db = dir.join("history.db");
    let mut args = vec!["history".to_string(), "import".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["--store".into(), db.display().to_string()]);
    let out = rigor(dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    (db, files)
}

/// `rigor history --store DB` plus `args`, asserting the exit code; its output.
fn history(dir: &Path, db: &Path, args: &[&str], code: i32) -> String {
    let out = rigor(
        dir,
        &[&["history", "--store", db.to_str().unwrap()], args].concat(),
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(code), "{t}");
    t
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The median of a crafted file's three `load.rps` figures, computed here.
fn crafted_median(file: &Path) -> f64 {
    let doc = read_json(file);
    let mut v: Vec<f64> = doc["rows"][0]["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|it| it["measurements"]["load.rps"].as_f64().unwrap())
        .collect();
    v.sort_by(f64::total_cmp);
    v[1]
}

#[test]
fn a_five_percent_step_is_one_change_point_and_a_flat_series_none() {
    let dir = temp_dir("history-step");
    let (db, files) = store_with_series(&dir);
    let t = history(&dir, &db, &["--json", "h.json", "--html", "h.html"], 0);
    let doc = read_json(&dir.join("h.json"));
    assert_eq!(doc["schema"], "rigor.history.v1");
    let series = doc["series"].as_array().unwrap();
    // One series per scenario: load.rps, the default of rows that drove load.
    assert_eq!(series.len(), 2, "{doc}");
    let step = series.iter().find(|s| s["scenario"] == "step").unwrap();
    let flat = series.iter().find(|s| s["scenario"] == "flat").unwrap();
    for s in [step, flat] {
        assert_eq!(s["measurement"], "load.rps");
        assert_eq!(s["variables"]["connections"], "8");
        assert_eq!(s["variant"], Value::Null);
        assert_eq!(s["points"].as_array().unwrap().len(), 60);
    }
    // Every point is the median of its run's iterations, with the run's commit.
    let points = step["points"].as_array().unwrap();
    for (i, p) in points.iter().enumerate() {
        let want = crafted_median(&files[i]);
        assert!(
            (p["median"].as_f64().unwrap() - want).abs() < 1e-9,
            "{p} vs {want}"
        );
        assert_eq!(p["n"], 3);
        assert_eq!(p["commit"], format!("{:040x}", i + 1));
        assert_eq!(p["dirty"], false);
        assert_eq!(p["started_at"], hour(i));
    }
    let cps = step["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{cps:?}");
    let cp = &cps[0];
    let index = cp["index"].as_u64().unwrap() as usize;
    assert!((28..=32).contains(&index), "{cp}");
    assert_eq!(cp["run"], points[index]["run"]);
    assert_eq!(cp["commit"], points[index]["commit"]);
    assert_eq!(cp["started_at"], points[index]["started_at"]);
    let change = cp["change_pct"].as_f64().unwrap();
    assert!((4.0..6.0).contains(&change), "{cp}");
    assert!(
        (cp["before"].as_f64().unwrap() - 10_000.0).abs() < 100.0,
        "{cp}"
    );
    assert!(
        (cp["after"].as_f64().unwrap() - 10_500.0).abs() < 105.0,
        "{cp}"
    );
    assert!(cp["p_value"].as_f64().unwrap() <= 0.05, "{cp}");
    assert_eq!(flat["change_points"].as_array().unwrap().len(), 0, "{flat}");
    // The text says the same: one change point, with its run and commit.
    let lines: Vec<&str> = t.lines().filter(|l| l.contains("change at run")).collect();
    assert_eq!(lines.len(), 1, "{t}");
    let run = cp["run"].as_i64().unwrap();
    let short = &cp["commit"].as_str().unwrap()[..12];
    assert!(
        lines[0].contains(&format!("change at run {run} (")) && lines[0].contains(short),
        "{t}"
    );
    assert!(lines[0].contains(&format!("+{change:.1}%")), "{t}");
    assert_eq!(t.matches("no change point").count(), 1, "{t}");
    assert!(t.contains("step connections=8 · load.rps"), "{t}");
    assert!(t.contains("▁") && t.contains("█"), "{t}");
    // The page marks the one change point.
    let page = std::fs::read_to_string(dir.join("h.html")).unwrap();
    assert_eq!(page.matches("class=\"change\"").count(), 1);
    assert_eq!(page.matches("<svg").count(), 2);
}

#[test]
fn scenario_measurement_and_since_select_what_is_shown() {
    let dir = temp_dir("history-select");
    let (db, _) = store_with_series(&dir);
    let points = |json: &Value| json["series"][0]["points"].as_array().unwrap().len();
    history(
        &dir,
        &db,
        &["-s", "step", "--since", "2026-11-02", "--json", "a.json"],
        0,
    );
    let a = read_json(&dir.join("a.json"));
    assert_eq!(a["series"].as_array().unwrap().len(), 1);
    assert_eq!(points(&a), 36);
    history(
        &dir,
        &db,
        &[
            "-s",
            "step",
            "--since",
            "2026-11-02T13:00:00+01:00",
            "--json",
            "b.json",
        ],
        0,
    );
    assert_eq!(points(&read_json(&dir.join("b.json"))), 24);
    // Another measurement: the constant app.rss has no change point.
    history(
        &dir,
        &db,
        &["-s", "flat", "-m", "app.rss", "--json", "c.json"],
        0,
    );
    let c = read_json(&dir.join("c.json"));
    assert_eq!(c["series"][0]["measurement"], "app.rss");
    assert_eq!(c["series"][0]["unit"], "MiB");
    assert_eq!(c["series"][0]["change_points"].as_array().unwrap().len(), 0);
    // Nothing after the last run: said, exit 0, an empty document.
    let t = history(&dir, &db, &["--since", "2027-01-01", "--json", "d.json"], 0);
    assert!(t.contains("no run matches --since"), "{t}");
    assert_eq!(
        read_json(&dir.join("d.json"))["series"],
        serde_json::json!([])
    );
}

#[test]
fn names_that_match_nothing_are_errors_listing_what_exists() {
    let dir = temp_dir("history-unknown");
    let (db, _) = store_with_series(&dir);
    let t = history(&dir, &db, &["-s", "nope"], 2);
    assert!(t.contains("no stored run has scenario `nope`"), "{t}");
    assert!(t.contains("the store has: flat, step"), "{t}");
    let t = history(&dir, &db, &["-s", "step", "-m", "load.nope"], 2);
    assert!(t.contains("`load.nope`"), "{t}");
    assert!(t.contains("scenario `step` has: app.rss, load.rps"), "{t}");
    // A typo beside a name that exists is refused too, not dropped in silence.
    let t = history(&dir, &db, &["-s", "step", "-m", "load.rps,load.nope"], 2);
    assert!(t.contains("no stored run measured `load.nope`"), "{t}");
    assert!(!t.contains("change at run"), "{t}");
    let t = history(&dir, &db, &["--since", "last tuesday"], 2);
    assert!(t.contains("--since: `last tuesday` is not a date"), "{t}");
}

#[test]
fn an_empty_or_missing_store_says_so() {
    let dir = temp_dir("history-empty");
    let out = rigor(&dir, &["history", "--json", "e.json"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("no history yet: .rigor/history.db does not exist"),
        "{t}"
    );
    assert_eq!(
        read_json(&dir.join("e.json"))["series"],
        serde_json::json!([])
    );
    assert!(!dir.join(".rigor").exists(), "reading made a store");
    // A store with its schema but no run.
    let files = write_series(&dir, "s", 1, 1, 0.0, 5);
    std::fs::write(&files[0], "{}").unwrap();
    let db = dir.join("empty.db");
    let out = rigor(
        &dir,
        &[
            "history",
            "import",
            files[0].to_str().unwrap(),
            "--store",
            db.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = history(&dir, &db, &[], 0);
    assert!(t.contains("holds no runs yet"), "{t}");
}

#[test]
fn the_store_flag_wins_over_the_environment() {
    let dir = temp_dir("history-env");
    let files = write_series(&dir, "s", 2, 2, 0.0, 6);
    let import = |file: &Path, flag: Option<&str>| {
        let mut args = vec!["history", "import", file.to_str().unwrap()];
        args.extend(flag.map(|f| ["--store", f]).into_iter().flatten());
        let out = rigor_command(&dir, &args)
            .env("RIGOR_STORE", dir.join("env.db"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    };
    import(&files[0], None);
    import(&files[1], Some("flag.db"));
    assert_eq!(sqlite_runs(&dir.join("env.db")).len(), 1);
    assert_eq!(sqlite_runs(&dir.join("flag.db")).len(), 1);
    assert!(!dir.join(".rigor").exists());
}

#[test]
fn a_history_lost_to_a_full_disk_is_an_error() {
    let dir = temp_dir("history-full");
    let (db, _) = store_with_series(&dir);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = rigor_command(&dir, &["history", "--store", db.to_str().unwrap()])
        .stdout(full)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("not written to standard output") && t.contains("No space left"),
        "{t}"
    );
    // A reader that stops early (`| head`) is not an error.
    let mut child = rigor_command(&dir, &["history", "--store", db.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_history_longer_than_the_exact_analysis_finds_its_step_on_its_run() {
    // 700 runs (past the 500 analysed run by run) with a 5% step at run 433: the change point
    // is that run, and the medians either side are those of the runs between, computed here.
    let dir = temp_dir("history-long");
    let files = write_series(&dir, "long", 700, 433, 0.05, 21);
    let db = dir.join("history.db");
    let mut args = vec!["history".to_string(), "import".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["--store".into(), db.display().to_string()]);
    let out = rigor(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    history(&dir, &db, &["--json", "h.json"], 0);
    let doc = read_json(&dir.join("h.json"));
    let series = &doc["series"][0];
    assert_eq!(series["points"].as_array().unwrap().len(), 700);
    let cps = series["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{cps:?}");
    assert_eq!(cps[0]["index"], 433, "{}", cps[0]);
    assert_eq!(cps[0]["commit"], format!("{:040x}", 434));
    let median_of = |files: &[PathBuf]| {
        let mut m: Vec<f64> = files.iter().map(|f| crafted_median(f)).collect();
        m.sort_by(f64::total_cmp);
        let k = m.len() / 2;
        if m.len().is_multiple_of(2) {
            (m[k - 1] + m[k]) / 2.0
        } else {
            m[k]
        }
    };
    let (before, after) = (median_of(&files[..433]), median_of(&files[433..]));
    assert!(
        (cps[0]["before"].as_f64().unwrap() - before).abs() < 1e-9,
        "{}",
        cps[0]
    );
    assert!(
        (cps[0]["after"].as_f64().unwrap() - after).abs() < 1e-9,
        "{}",
        cps[0]
    );
    assert!(cps[0]["p_value"].as_f64().unwrap() <= 0.05, "{}", cps[0]);
}
