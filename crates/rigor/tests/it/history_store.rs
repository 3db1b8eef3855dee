//! The SQLite history store end to end: real `rigor run`s on the testbed store what their
//! `--json` result says (read back with SQLite's own client), two concurrent writers both land,
//! `--no-store` stores nothing, imports match and skip twins, and every broken store is an error
//! naming it that loses no result file.

use crate::common;
use crate::history_support;
use common::*;
use history_support::*;
use std::os::unix::process::CommandExt;
use std::path::Path;

/// Runs the testbed twice (`-i 2`, 1 s of load) with `extra` flags; the run's output and result.
fn short_run(dir: &Path, extra: &[&str]) -> (std::process::Output, Option<serde_json::Value>) {
    let toml = config(free_port(), "", "/json", "");
    run(dir, &toml, &[&["-i", "2"], extra].concat())
}

#[test]
fn a_run_stores_what_its_result_says_beside_the_config() {
    let dir = temp_dir("history-run");
    let (out, json) = short_run(&dir, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = json.expect("result");
    let db = dir.join(".rigor/history.db");
    assert!(t.contains("history: run 1 stored in"), "{t}");
    let runs = sqlite_runs(&db);
    assert_eq!(runs.len(), 1, "{runs:?}");
    let (id, started_at, scenario, status, source) = &runs[0];
    assert_eq!(started_at, json["started_at"].as_str().unwrap());
    assert_eq!(scenario, "s");
    assert_eq!(status, "complete");
    assert_eq!(source, "run");
    let expected = iterations_of(&json);
    assert_eq!(expected.len(), 2);
    assert!(expected.iter().all(|it| it.5.contains_key("load.rps")));
    assert_same_iterations(&sqlite_iterations(&db, *id), &expected);
    // The store is in WAL mode and says its schema version.
    let c = rusqlite::Connection::open(&db).unwrap();
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let version: i64 = c
        .query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 1);
    // The job folder's git commit, when the test runs inside a checkout.
    if let Some(git) = json["environment"]["jobs"]["app"]["git"].as_object() {
        let commits = sqlite_commits(&db, *id);
        assert_eq!(commits.len(), 1, "{commits:?}");
        assert_eq!(commits[0].1, git["commit"].as_str().unwrap());
        assert_eq!(commits[0].2 != 0, git["dirty"].as_bool().unwrap());
    }
    // Importing the run's own result finds it already there.
    let out = rigor(&dir, &["history", "import", "result.json"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("skipped result.json: already in"), "{t}");
    assert_eq!(sqlite_runs(&db).len(), 1);
}

#[test]
fn two_concurrent_runs_on_one_store_both_land_intact() {
    let shared = temp_dir("history-concurrent");
    let db = shared.join("shared.db");
    let store = db.to_str().unwrap().to_string();
    let dirs = [shared.join("a"), shared.join("b")];
    let handles: Vec<_> = dirs
        .iter()
        .map(|d| {
            std::fs::create_dir_all(d).unwrap();
            let (d, store) = (d.clone(), store.clone());
            std::thread::spawn(move || short_run(&d, &["--store", &store]))
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
    let runs = sqlite_runs(&db);
    assert_eq!(runs.len(), 2, "{runs:?}");
    // Each result is one of the stored runs, figure for figure (two runs may start in the
    // same second, so they are told apart by their figures).
    let stored: Vec<Vec<StoredIteration>> =
        runs.iter().map(|r| sqlite_iterations(&db, r.0)).collect();
    for json in &results {
        let expected = iterations_of(json);
        let found = stored
            .iter()
            .find(|s| same_values(s, &expected))
            .unwrap_or_else(|| panic!("no stored run has the figures of {expected:?}"));
        assert_same_iterations(found, &expected);
        assert!(runs
            .iter()
            .any(|r| r.1 == json["started_at"].as_str().unwrap()));
    }
    assert!(!same_values(&stored[0], &stored[1]), "one run stored twice");
    // No default store was made: both went to --store.
    for d in &dirs {
        assert!(!d.join(".rigor").exists());
    }
}

fn same_values(a: &[StoredIteration], b: &[StoredIteration]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.5.get("load.rps")
                .zip(y.5.get("load.rps"))
                .is_some_and(|(p, q)| (p - q).abs() <= q.abs() * 1e-12)
        })
}

#[test]
fn two_concurrent_importers_migrate_a_new_store_once_and_both_land() {
    let dir = temp_dir("history-importers");
    let a = write_series(&dir, "alpha", 30, 30, 0.0, 1);
    let b = write_series(&dir, "beta", 30, 30, 0.0, 2);
    let db = dir.join("new.db");
    let spawn = |files: &[std::path::PathBuf]| {
        let mut args = vec!["history".to_string(), "import".to_string()];
        args.extend(files.iter().map(|p| p.display().to_string()));
        args.extend(["--store".to_string(), db.display().to_string()]);
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
    let runs = sqlite_runs(&db);
    assert_eq!(runs.len(), 60);
    assert_eq!(runs.iter().filter(|r| r.2 == "alpha").count(), 30);
    let c = rusqlite::Connection::open(&db).unwrap();
    let versions: i64 = c
        .query_row("SELECT COUNT(*) FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(versions, 1, "the schema was migrated twice");
    let measurements: i64 = c
        .query_row("SELECT COUNT(*) FROM measurements", [], |r| r.get(0))
        .unwrap();
    assert_eq!(measurements, 60 * 3 * 2);
}

#[test]
fn no_store_stores_nothing() {
    let dir = temp_dir("history-nostore");
    let (out, json) = short_run(&dir, &["--no-store"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(json.is_some());
    assert!(!dir.join(".rigor").exists());
    assert!(!text(&out).contains("history:"), "{}", text(&out));
}

#[test]
fn an_import_equals_the_stored_run_and_twice_is_skipped() {
    let dir = temp_dir("history-import");
    let (out, json) = short_run(&dir, &["--no-store"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json = json.unwrap();
    let db = dir.join("imported.db");
    let store = db.to_str().unwrap();
    let out = rigor(
        &dir,
        &["history", "import", "result.json", "--store", store],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("imported result.json as run 1"), "{t}");
    let runs = sqlite_runs(&db);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].4, "import");
    assert_same_iterations(&sqlite_iterations(&db, runs[0].0), &iterations_of(&json));
    let out = rigor(
        &dir,
        &["history", "import", "result.json", "--store", store],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("skipped result.json: already in"), "{t}");
    assert_eq!(sqlite_runs(&db).len(), 1);
    // A bad file is an error naming it; the good one beside it is still considered.
    std::fs::write(dir.join("bad.json"), "{not json").unwrap();
    let out = rigor(
        &dir,
        &[
            "history",
            "import",
            "bad.json",
            "result.json",
            "--store",
            store,
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("bad.json is not JSON"), "{t}");
    assert!(t.contains("skipped result.json"), "{t}");
}

#[test]
fn interrupted_runs_are_stored_with_their_status() {
    let dir = temp_dir("history-interrupted");
    let toml =
        config(free_port(), "", "/json", "").replace("duration = \"1s\"", "duration = \"4s\"");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let child = rigor_command(&dir, &[RUN, &["-i", "3"]].concat())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Into the first iteration's load, then Ctrl-C.
    std::thread::sleep(std::time::Duration::from_millis(3000));
    // SAFETY: kill only sends a signal, to the rigor this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let json = result(&dir);
    assert_eq!(json["status"], "interrupted", "{}", text(&out));
    let runs = sqlite_runs(&dir.join(".rigor/history.db"));
    assert_eq!(runs.len(), 1, "{}", text(&out));
    assert_eq!(runs[0].3, "interrupted");
}

#[test]
fn a_run_stopped_at_once_says_it_was_not_stored() {
    use std::io::{BufRead, BufReader};
    let dir = temp_dir("history-second-signal");
    let toml = config(free_port(), "", "/json", "");
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let mut child = rigor_command(&dir, &[RUN, &["-i", "20"]].concat())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(" iteration 1:") {
            break;
        }
    }
    // Ctrl-C twice: stop at once.
    for _ in 0..2 {
        // SAFETY: kill only sends a signal, to the rigor this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let t = format!("{seen}{}", rest.join("\n"));
    assert_eq!(status.code(), Some(1), "{t}");
    assert_eq!(result(&dir)["status"], "interrupted", "{t}");
    // Either the run made it into the store before rigor stopped, or rigor says it did not:
    // never a run missing from the history without a word.
    let db = dir.join(".rigor/history.db");
    // A store opened before the first iteration (to check it can be written) holds no tables
    // until a run is stored.
    let has_runs = |db: &std::path::Path| {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
            == 1
    };
    let stored = db.exists() && has_runs(&db) && !sqlite_runs(&db).is_empty();
    assert!(
        stored || t.contains("the run was not stored in the history"),
        "{t}"
    );
}

#[test]
fn a_store_from_a_newer_rigor_is_refused_naming_both_versions() {
    let dir = temp_dir("history-future");
    let db = dir.join("future.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL);
             INSERT INTO schema_version VALUES (1, 'then'), (99, 'later');",
        )
        .unwrap();
    }
    let store = db.to_str().unwrap();
    let out = rigor(&dir, &["history", "--store", store]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("schema version 99"), "{t}");
    assert!(t.contains("newer than the 1 this rigor"), "{t}");
    assert!(t.contains(store), "{t}");
    // A run still writes its result, says why it stored nothing, and exits 1.
    let (out, json) = short_run(&dir, &["--store", store]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(json.is_some(), "{t}");
    assert!(t.contains("cannot store the run in the history"), "{t}");
    assert!(t.contains("schema version 99"), "{t}");
}

#[test]
fn a_stamped_store_that_lost_its_schema_table_is_refused_in_one_sentence() {
    let dir = temp_dir("history-no-schema");
    let db = dir.join("lost.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        // rigor's application_id ("rigr"), rigor's tables, no schema_version.
        c.execute_batch(
            "PRAGMA application_id = 1919510386;
             CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at TEXT NOT NULL);",
        )
        .unwrap();
    }
    let store = db.to_str().unwrap();
    let out = rigor(&dir, &["history", "--store", store]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("not their schema_version table"), "{t}");
    assert!(t.contains(store), "{t}");
    assert!(!t.contains("CREATE TABLE"), "{t}");
    // Left as it was: nothing migrated into it.
    let c = rusqlite::Connection::open(&db).unwrap();
    let tables: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1);
}

/// Runs the testbed with `--store store` and asserts the hostile store's error: named, the
/// result written anyway, exit 1.
fn refused_store(dir: &Path, store: &str, says: &str) {
    let (out, json) = short_run(dir, &["--store", store]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(json.is_some_and(|j| j["status"] == "complete"), "{t}");
    let line = t
        .lines()
        .find(|l| l.contains("cannot store the run in the history"))
        .unwrap_or_else(|| panic!("no store error in {t}"));
    assert!(line.contains(store), "{line}");
    assert!(line.contains(says), "{line}");
    assert!(!t.contains("panicked"), "{t}");
}

/// Runs the testbed with `--store store` and asserts a store that could never work is refused
/// before anything runs (exit 2, no result), naming it.
fn refused_before_the_run(dir: &Path, store: &str, says: &str) -> String {
    let (out, json) = short_run(dir, &["--store", store]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(json.is_none(), "{t}");
    assert!(!t.contains("iteration 1"), "{t}");
    assert!(t.contains(says), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    t
}

#[test]
fn a_directory_as_the_store_is_refused_before_the_run() {
    let dir = temp_dir("history-dir");
    let store = dir.join("adir");
    std::fs::create_dir_all(&store).unwrap();
    let t = refused_before_the_run(&dir, store.to_str().unwrap(), "is a directory");
    assert!(t.contains(store.to_str().unwrap()), "{t}");
}

#[test]
fn a_url_that_is_not_postgres_is_refused_before_the_run_without_the_password() {
    let dir = temp_dir("history-bad-url");
    let t = refused_before_the_run(
        &dir,
        "postgres://rigor:hunter2@127.0.0.1:notaport/rigor",
        "not a PostgreSQL URL",
    );
    assert!(
        t.contains("postgres://rigor:***@127.0.0.1:notaport/rigor"),
        "{t}"
    );
    assert!(!t.contains("hunter2"), "{t}");
}

#[test]
fn a_file_that_is_not_a_database_is_an_error_naming_it() {
    let dir = temp_dir("history-notdb");
    let store = dir.join("notes.txt");
    std::fs::write(&store, "these are notes, not a database\n".repeat(200)).unwrap();
    refused_store(&dir, store.to_str().unwrap(), "not a database");
    // The file is left as it was.
    assert!(std::fs::read_to_string(&store)
        .unwrap()
        .starts_with("these are notes"));
}

#[test]
fn an_unreachable_postgres_is_an_error_naming_it_without_the_password() {
    let dir = temp_dir("history-unreachable");
    // A port nobody listens on: the connection is refused at once.
    let url = format!("postgres://rigor:hunter2@127.0.0.1:{}/rigor", free_port());
    let (out, json) = short_run(&dir, &["--store", &url]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(json.is_some(), "{t}");
    let shown = url.replace("hunter2", "***");
    assert!(t.contains(&format!("{shown}: cannot connect")), "{t}");
    assert!(!t.contains("hunter2"), "{t}");
}

#[test]
fn a_server_that_accepts_and_never_answers_is_an_error_in_seconds_not_a_hang() {
    let dir = temp_dir("history-silent-server");
    // Takes the TCP connection and says nothing, like a port that is not PostgreSQL.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        std::thread::sleep(std::time::Duration::from_secs(30));
        drop(conn);
    });
    let url = format!("postgres://rigor@127.0.0.1:{port}/rigor?connect_timeout=1&password=hunter2");
    let started = std::time::Instant::now();
    let out = rigor(&dir, &["history", "--store", &url]);
    let t = text(&out);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}: {t}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("no answer from the server"), "{t}");
    // A password given as a query parameter is hidden like one in the credentials.
    assert!(!t.contains("hunter2"), "{t}");
    assert!(t.contains("password=***"), "{t}");
    drop(held);
}

#[test]
fn a_read_only_store_is_an_error_naming_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("history-readonly");
    let db = dir.join("ro.db");
    // A real store with one run in it, then made read-only.
    let files = write_series(&dir, "s", 1, 1, 0.0, 3);
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
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    std::fs::write(dir.join("rigor.toml"), config(free_port(), "", "/json", "")).unwrap();
    let mut cmd = rigor_command(
        &dir,
        &[RUN, &["-i", "2", "--store", db.to_str().unwrap()]].concat(),
    );
    if is_root() {
        // Root writes any file: run as nobody, who may write the folder but not the store.
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        std::os::unix::fs::chown(dir.join("rigor.toml"), Some(65534), Some(65534)).unwrap();
        cmd.uid(65534).gid(65534);
    }
    // Refused before the first iteration: a store found unwritable only when storing would
    // have cost the whole run.
    let out = cmd.output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(!dir.join("result.json").exists(), "{t}");
    let line = t
        .lines()
        .find(|l| l.contains("cannot be written"))
        .unwrap_or_else(|| panic!("no store error in {t}"));
    assert!(line.contains(db.to_str().unwrap()), "{line}");
    assert!(
        line.contains("readonly") || line.contains("read-only"),
        "{line}"
    );
    assert_eq!(sqlite_runs(&db).len(), 1);
}

#[test]
fn a_database_that_is_not_rigors_is_refused_and_left_as_it_was() {
    let dir = temp_dir("history-foreign");
    let store = dir.join("app.db");
    {
        let c = rusqlite::Connection::open(&store).unwrap();
        c.execute_batch(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
             INSERT INTO customers (name) VALUES ('Ada');",
        )
        .unwrap();
    }
    let before = std::fs::read(&store).unwrap();
    let files = write_series(&dir, "s", 1, 1, 0.0, 7);
    let s = store.to_str().unwrap();
    let out = rigor(
        &dir,
        &[
            "history",
            "import",
            files[0].to_str().unwrap(),
            "--store",
            s,
        ],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("{s} is not a rigor history store")),
        "{t}"
    );
    assert!(t.contains("customers"), "{t}");
    refused_store(&dir, s, "is not a rigor history store");
    let out = rigor(&dir, &["history", "--store", s]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(
        std::fs::read(&store).unwrap(),
        before,
        "the user's database changed"
    );
    assert!(!dir.join("app.db-wal").exists());
    // An empty file is a new store: taken, and marked as rigor's.
    let empty = dir.join("empty.db");
    std::fs::write(&empty, "").unwrap();
    let e = empty.to_str().unwrap();
    let out = rigor(
        &dir,
        &[
            "history",
            "import",
            files[0].to_str().unwrap(),
            "--store",
            e,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let c = rusqlite::Connection::open(&empty).unwrap();
    let id: i32 = c
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(id, 0x7269_6772);
    assert_eq!(sqlite_runs(&empty).len(), 1);
}

#[test]
fn an_import_is_checked_as_strictly_as_rigors_own_results() {
    let dir = temp_dir("history-import-strict");
    let db = dir.join("h.db");
    let s = db.to_str().unwrap();
    let good = crafted("s", &hour(1), "abc", [100.0, 101.0, 102.0]);
    let mut bad_time = crafted("s", "not a time", "abc", [1.0, 2.0, 3.0]);
    bad_time["finished_at"] = serde_json::json!(hour(2));
    let mut bad_status = crafted("s", &hour(3), "abc", [1.0, 2.0, 3.0]);
    bad_status["status"] = serde_json::json!("splendid");
    let mut bad_excluded = crafted("s", &hour(4), "abc", [1.0, 2.0, 3.0]);
    bad_excluded["rows"][0]["iterations"][1]["excluded"] = serde_json::json!("because");
    let mut args = vec!["history".to_string(), "import".into()];
    for (name, doc) in [
        ("good", &good),
        ("time", &bad_time),
        ("status", &bad_status),
        ("excluded", &bad_excluded),
    ] {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, doc.to_string()).unwrap();
        args.push(path.display().to_string());
    }
    args.extend(["--store".into(), s.into()]);
    let out = rigor(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("time.json: `started_at`: `not a time` is not a date"),
        "{t}"
    );
    assert!(t.contains("status.json: `status` is \"splendid\""), "{t}");
    assert!(
        t.contains("excluded.json: `rows[0].iterations[1].excluded` is \"because\""),
        "{t}"
    );
    assert!(t.contains("3 of 4 files could not be imported"), "{t}");
    // Only the good run is stored, so it is the latest.
    let runs = sqlite_runs(&db);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].1, hour(1));
}

#[test]
fn an_import_past_the_size_limit_or_without_end_is_refused_and_the_rest_imported() {
    let dir = temp_dir("history-import-limit");
    let db = dir.join("h.db");
    let good = dir.join("good.json");
    let doc = crafted("s", &hour(1), "abc", [100.0, 101.0, 102.0]);
    std::fs::write(&good, doc.to_string()).unwrap();
    // Sparse: past the limit without taking the disk.
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(256 * 1024 * 1024 + 1)
        .unwrap();
    let args = [
        "history",
        "import",
        big.to_str().unwrap(),
        "/dev/zero",
        good.to_str().unwrap(),
        "--store",
        db.to_str().unwrap(),
    ];
    let out = rigor(&dir, &args);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    for name in [
        "big.json is larger than 256 MiB",
        "/dev/zero is larger than 256 MiB",
    ] {
        assert!(t.contains(name), "{t}");
    }
    assert!(t.contains("2 of 3 files could not be imported"), "{t}");
    let runs = sqlite_runs(&db);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].1, hour(1));
}

#[test]
#[ignore = "needs root"]
fn a_store_on_a_read_only_filesystem_says_so() {
    require_root();
    let dir = temp_dir("history-ro-mount");
    let mnt = dir.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let mount = |args: &[&str]| {
        let ok = std::process::Command::new("mount")
            .args(args)
            .arg(&mnt)
            .status()
            .unwrap();
        assert!(ok.success(), "mount {args:?}");
    };
    mount(&["-t", "tmpfs", "-o", "size=4m", "tmpfs"]);
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let files = write_series(&dir, "s", 1, 1, 0.0, 9);
    let db = mnt.join("h.db");
    let s = db.to_str().unwrap();
    let import = |store: &str| {
        rigor(
            &dir,
            &[
                "history",
                "import",
                files[0].to_str().unwrap(),
                "--store",
                store,
            ],
        )
    };
    assert_eq!(import(s).status.code(), Some(0));
    mount(&["-o", "remount,ro"]);
    let fresh = mnt.join("new.db");
    for out in [
        import(s),
        rigor(&dir, &["history", "--store", s]),
        import(fresh.to_str().unwrap()),
    ] {
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{t}");
        assert!(t.contains("is on a read-only filesystem"), "{t}");
        assert!(!t.contains("unable to open database file"), "{t}");
    }
}
