//! What the history tests share: results crafted as `rigor run --json` writes them, the stored
//! runs read back with the database's own client (independent of rigor's query code), and a
//! fresh PostgreSQL database per test.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// One iteration as the store holds it: (row position, index, sequence, excluded, error,
/// measurements).
pub type StoredIteration = (
    i64,
    i64,
    i64,
    Option<String>,
    Option<String>,
    BTreeMap<String, f64>,
);

/// The iterations of a result JSON in the store's shape, for comparing with what was stored.
pub fn iterations_of(result: &Value) -> Vec<StoredIteration> {
    let mut out = Vec::new();
    for (position, row) in result["rows"].as_array().unwrap().iter().enumerate() {
        for it in row["iterations"].as_array().unwrap() {
            let measurements = it["measurements"]
                .as_object()
                .unwrap()
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .collect();
            out.push((
                position as i64,
                it["index"].as_i64().unwrap(),
                it["sequence"].as_i64().unwrap_or(0),
                it["excluded"].as_str().map(str::to_string),
                it["error"].as_str().map(str::to_string),
                measurements,
            ));
        }
    }
    out.sort_by_key(|a| (a.0, a.1, a.2));
    out
}

/// Asserts two lists of iterations hold the same figures (to the last few bits: a figure read
/// back from JSON may differ from the one in memory in its last binary digit).
pub fn assert_same_iterations(stored: &[StoredIteration], expected: &[StoredIteration]) {
    assert_eq!(stored.len(), expected.len(), "{stored:?}\n{expected:?}");
    for (s, e) in stored.iter().zip(expected) {
        assert_eq!((s.0, s.1, s.2, &s.3, &s.4), (e.0, e.1, e.2, &e.3, &e.4));
        assert_eq!(
            s.5.keys().collect::<Vec<_>>(),
            e.5.keys().collect::<Vec<_>>(),
            "measurement ids of iteration {}",
            s.1
        );
        for (id, v) in &s.5 {
            let want = e.5[id];
            assert!(
                (v - want).abs() <= want.abs() * 1e-12,
                "{id} of iteration {}: stored {v}, result {want}",
                s.1
            );
        }
    }
}

/// The runs of a SQLite store: (id, started_at, scenario, status, source).
pub fn sqlite_runs(db: &Path) -> Vec<(i64, String, String, String, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT id, started_at, scenario, status, source FROM runs ORDER BY id")
        .unwrap();
    s.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

const ITERATIONS_SQL: &str = "SELECT w.position, i.idx, i.sequence, i.excluded, i.error, \
     m.measurement, m.value FROM run_rows w JOIN iterations i ON i.row_id = w.id \
     LEFT JOIN measurements m ON m.iteration_id = i.id WHERE w.run_id = $1 \
     ORDER BY w.position, i.idx, i.sequence, m.measurement";

/// Folds (position, idx, sequence, excluded, error, measurement, value) rows into iterations.
fn fold(
    rows: impl Iterator<
        Item = (
            i64,
            i64,
            i64,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<f64>,
        ),
    >,
) -> Vec<StoredIteration> {
    let mut out: Vec<StoredIteration> = Vec::new();
    for (p, i, s, x, e, m, v) in rows {
        if !matches!(out.last(), Some(l) if (l.0, l.1, l.2) == (p, i, s)) {
            out.push((p, i, s, x, e, BTreeMap::new()));
        }
        if let (Some(m), Some(v)) = (m, v) {
            out.last_mut().unwrap().5.insert(m, v);
        }
    }
    out
}

/// The iterations of run `run` in a SQLite store.
pub fn sqlite_iterations(db: &Path, run: i64) -> Vec<StoredIteration> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c.prepare(ITERATIONS_SQL).unwrap();
    let rows: Vec<_> = s
        .query_map([run], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    fold(rows.into_iter())
}

/// The commits stored for run `run`: (job, commit, dirty).
pub fn sqlite_commits(db: &Path, run: i64) -> Vec<(String, String, i64)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT job, commit_hash, dirty FROM run_commits WHERE run_id = ?1 ORDER BY job")
        .unwrap();
    s.query_map([run], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A fresh PostgreSQL database for one test, dropped at the end; `None` (after a counted skip)
/// without `RIGOR_TEST_POSTGRES` or a server answering it.
pub struct PgDb {
    admin: String,
    pub name: String,
    pub url: String,
}

impl PgDb {
    pub fn create(tag: &str) -> Option<PgDb> {
        let Ok(admin) = std::env::var("RIGOR_TEST_POSTGRES") else {
            testkit::skip("needs postgres (set RIGOR_TEST_POSTGRES, as .ci/run does)");
            return None;
        };
        let mut client = match postgres::Client::connect(&admin, postgres::NoTls) {
            Ok(c) => c,
            Err(e) => {
                testkit::skip(&format!("needs postgres ({admin} answered: {e})"));
                return None;
            }
        };
        let name = format!("rigor_test_{tag}_{}", std::process::id());
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .unwrap();
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
        let url = format!("{base}/{name}");
        Some(PgDb { admin, name, url })
    }

    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    /// The runs: (id, started_at, scenario, status, source).
    pub fn runs(&self) -> Vec<(i64, String, String, String, String)> {
        self.client()
            .query(
                "SELECT id, started_at, scenario, status, source FROM runs ORDER BY id",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
            .collect()
    }

    /// The iterations of run `run`.
    pub fn iterations(&self, run: i64) -> Vec<StoredIteration> {
        let rows = self.client().query(ITERATIONS_SQL, &[&run]).unwrap();
        fold(rows.iter().map(|r| {
            (
                r.get(0),
                r.get(1),
                r.get(2),
                r.get(3),
                r.get(4),
                r.get(5),
                r.get(6),
            )
        }))
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// `2026-11-01T00:00:00Z` plus `hours`.
pub fn hour(hours: usize) -> String {
    format!("2026-11-{:02}T{:02}:00:00Z", 1 + hours / 24, hours % 24)
}

/// A result as `rigor run --json` writes it: one row of `scenario` with three iterations whose
/// `load.rps` are `rps` (and a constant `app.rss`), started at `started_at`, at `commit`.
pub fn crafted(scenario: &str, started_at: &str, commit: &str, rps: [f64; 3]) -> Value {
    let iterations: Vec<Value> = rps
        .iter()
        .enumerate()
        .map(|(i, v)| {
            json!({
                "index": i, "sequence": i, "excluded": false, "error": null,
                "measurements": {"load.rps": v, "app.rss": 12.5},
                "warnings": [], "outside_window": {"requests": 0, "bytes": 0}
            })
        })
        .collect();
    json!({
        "schema": "rigor.run.v1", "rigor_version": "0.1.0", "scenario": scenario,
        "profile": "local", "description": null, "started_at": started_at,
        "finished_at": started_at, "status": "complete", "seed": 7,
        "environment": {"jobs": {"app": {"dir": "/src/app",
            "git": {"commit": commit, "dirty": false, "branch": "main"}}}},
        "warnings": [], "builds": [],
        "rows": [{"scenario": scenario, "variables": {"connections": "8"}, "variant": null,
                  "iterations": iterations, "summary": {}, "warnings": []}],
        "comparisons": []
    })
}

/// A uniform number in [-1, 1) from `state` (a small LCG: the same series every run).
pub fn noise(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    ((*state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// Writes `n` crafted results of `scenario` to `dir` (`NAME-i.json`): load.rps around 10,000
/// with ±1% noise per iteration, times `1 + step` from run `at` on; returns their paths.
pub fn write_series(
    dir: &Path,
    scenario: &str,
    n: usize,
    at: usize,
    step: f64,
    seed: u64,
) -> Vec<std::path::PathBuf> {
    let mut state = seed;
    (0..n)
        .map(|i| {
            let level = if i >= at {
                10_000.0 * (1.0 + step)
            } else {
                10_000.0
            };
            let rps = [0; 3].map(|_| level * (1.0 + 0.01 * noise(&mut state)));
            let commit = format!("{:040x}", i + 1);
            let doc = crafted(scenario, &hour(i), &commit, rps);
            let path = dir.join(format!("{scenario}-{i}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
            path
        })
        .collect()
}
