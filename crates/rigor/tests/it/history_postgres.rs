//! The history store on a real PostgreSQL server (`RIGOR_TEST_POSTGRES`, which `.ci/run`
//! starts): the same schema, a real run stored as its result says (read back with the server's
//! own client), two concurrent runs and two concurrent importers on one database, and
//! `rigor history` reading it. Each test works in a database of its own.

use crate::common;
use crate::history_support;
use common::*;
use history_support::*;
use std::path::Path;

fn short_run(dir: &Path, store: &str) -> (std::process::Output, Option<serde_json::Value>) {
    let toml = config(free_port(), "", "/json", "");
    run(dir, &toml, &["-i", "2", "--store", store])
}

#[test]
fn a_run_is_stored_in_postgres_as_its_result_says() {
    let Some(db) = PgDb::create("run") else {
        return;
    };
    let dir = temp_dir("history-pg-run");
    // The store named by the environment, as a team would set it once.
    std::fs::write(dir.join("rigor.toml"), config(free_port(), "", "/json", "")).unwrap();
    let out = rigor_command(&dir, &[RUN, &["-i", "2"]].concat())
        .env("RIGOR_STORE", &db.url)
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(!dir.join(".rigor").exists());
    let json = result(&dir);
    let runs = db.runs();
    assert_eq!(runs.len(), 1, "{t}");
    assert_eq!(runs[0].1, json["started_at"].as_str().unwrap());
    assert_eq!(runs[0].3, "complete");
    assert_same_iterations(&db.iterations(runs[0].0), &iterations_of(&json));
    let version: i64 = db
        .client()
        .query_one("SELECT MAX(version) FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 1);
    // The same tables and columns as the SQLite store.
    let mut columns: Vec<String> = db
        .client()
        .query(
            "SELECT table_name || '.' || column_name FROM information_schema.columns \
             WHERE table_schema = 'public' ORDER BY table_name, ordinal_position",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let lite = dir.join("same.db");
    let file = write_series(&dir, "s", 1, 1, 0.0, 1);
    let out = rigor(
        &dir,
        &[
            "history",
            "import",
            file[0].to_str().unwrap(),
            "--store",
            lite.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let c = rusqlite::Connection::open(&lite).unwrap();
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut lite_columns = Vec::new();
    for t in &tables {
        let mut s = c.prepare(&format!("PRAGMA table_info({t})")).unwrap();
        let names: Vec<String> = s
            .query_map([], |r| r.get(1))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        lite_columns.extend(names.into_iter().map(|n| format!("{t}.{n}")));
    }
    columns.sort();
    lite_columns.sort();
    assert_eq!(columns, lite_columns);
}

#[test]
fn two_concurrent_runs_on_one_postgres_both_land_intact() {
    let Some(db) = PgDb::create("concurrent") else {
        return;
    };
    let shared = temp_dir("history-pg-concurrent");
    let handles: Vec<_> = ["a", "b"]
        .iter()
        .map(|n| {
            let d = shared.join(n);
            std::fs::create_dir_all(&d).unwrap();
            let url = db.url.clone();
            std::thread::spawn(move || short_run(&d, &url))
        })
        .collect();
    let results: Vec<serde_json::Value> = handles
        .into_iter()
        .map(|h| {
            let (out, json) = h.join().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", text(&out));
            json.expect("result")
        })
        .collect();
    let runs = db.runs();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let stored: Vec<_> = runs.iter().map(|r| db.iterations(r.0)).collect();
    for json in &results {
        let expected = iterations_of(json);
        let found = stored
            .iter()
            .find(|s| {
                s.len() == expected.len()
                    && s.iter().zip(&expected).all(|(a, b)| {
                        (a.5["load.rps"] - b.5["load.rps"]).abs() <= b.5["load.rps"] * 1e-12
                    })
            })
            .unwrap_or_else(|| panic!("no stored run has the figures of {expected:?}"));
        assert_same_iterations(found, &expected);
    }
}

#[test]
fn two_concurrent_importers_migrate_postgres_once_and_both_land() {
    let Some(db) = PgDb::create("importers") else {
        return;
    };
    let dir = temp_dir("history-pg-importers");
    let a = write_series(&dir, "alpha", 30, 30, 0.0, 1);
    let b = write_series(&dir, "beta", 30, 30, 0.0, 2);
    let spawn = |files: &[std::path::PathBuf]| {
        let mut args = vec!["history".to_string(), "import".to_string()];
        args.extend(files.iter().map(|p| p.display().to_string()));
        args.extend(["--store".to_string(), db.url.clone()]);
        rigor_command(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (pa, pb) = (spawn(&a), spawn(&b));
    for p in [pa, pb] {
        let out = p.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let runs = db.runs();
    assert_eq!(runs.len(), 60);
    let mut c = db.client();
    let versions: i64 = c
        .query_one("SELECT COUNT(*) FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(versions, 1, "the schema was migrated twice");
    let measurements: i64 = c
        .query_one("SELECT COUNT(*) FROM measurements", &[])
        .unwrap()
        .get(0);
    assert_eq!(measurements, 60 * 3 * 2);
    // Importing one again is skipped.
    let out = rigor(
        &dir,
        &[
            "history",
            "import",
            a[0].to_str().unwrap(),
            "--store",
            &db.url,
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("skipped"), "{t}");
    assert!(!t.contains(":rigor@"), "the password is shown: {t}");
    assert_eq!(db.runs().len(), 60);
}

#[test]
fn history_reads_the_change_point_back_from_postgres() {
    let Some(db) = PgDb::create("show") else {
        return;
    };
    let dir = temp_dir("history-pg-show");
    let files = write_series(&dir, "step", 60, 30, 0.05, 11);
    let mut args = vec!["history".to_string(), "import".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["--store".into(), db.url.clone()]);
    let out = rigor(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = rigor(&dir, &["history", "--store", &db.url, "--json", "h.json"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("h.json")).unwrap()).unwrap();
    let cps = doc["series"][0]["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{doc}");
    let index = cps[0]["index"].as_u64().unwrap();
    assert!((28..=32).contains(&index), "{cps:?}");
    assert_eq!(t.matches("change at run").count(), 1, "{t}");
}

#[test]
fn a_lock_held_by_another_session_ends_in_an_error_and_ctrl_c_ends_it_sooner() {
    let Some(db) = PgDb::create("locked") else {
        return;
    };
    let dir = temp_dir("history-pg-locked");
    let files = write_series(&dir, "s", 2, 2, 0.0, 3);
    let import = |file: &Path| {
        rigor(
            &dir,
            &[
                "history",
                "import",
                file.to_str().unwrap(),
                "--store",
                &db.url,
            ],
        )
    };
    let out = import(&files[0]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Another session takes the runs table and keeps it.
    let mut other = db.client();
    let mut tx = other.transaction().unwrap();
    tx.batch_execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let out = import(&files[1]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("lock timeout"), "{t}");
    // A run waiting to be stored gives way to Ctrl-C: the statement is cancelled, the result
    // file is kept.
    std::fs::write(dir.join("rigor.toml"), config(free_port(), "", "/json", "")).unwrap();
    let mut child = marks::spawn_rigor(&dir, &[RUN, &["-i", "1", "--store", &db.url]].concat());
    marks::wait_for(
        "the final result",
        std::time::Duration::from_secs(120),
        || try_result(&dir).is_some_and(|r| r["status"] == "complete"),
    );
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let status = marks::wait_exit(&mut child, std::time::Duration::from_secs(60));
    let t = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
    assert_eq!(status.code(), Some(1), "{t}");
    assert!(t.contains("cannot store the run in the history"), "{t}");
    assert!(t.contains("user request"), "{t}");
    tx.rollback().unwrap();
    assert_eq!(db.runs().len(), 1);
}
