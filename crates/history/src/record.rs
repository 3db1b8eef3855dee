//! A run result flattened into the store's rows: the run's metadata, the commit of each job
//! folder, and every row's iterations with their measurements. Written in one transaction, so a
//! reader sees a run whole or not at all.

use super::error::HistoryError;
use super::sql::{first_int, Sql, Value};
use rigor_model::result::{Iteration, Row, RunResult};
use sha2::{Digest, Sha256};

/// What storing a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// A new run, with its id in the store.
    Added(i64),
    /// The same run (same start, scenario and content) was already there, with this id.
    AlreadyThere(i64),
}

/// Where a stored run came from, kept in `runs.source`.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// Stored by `rigor run` as it finished.
    Run,
    /// Loaded by `rigor history import`.
    Import,
}

impl Source {
    fn code(self) -> &'static str {
        match self {
            Source::Run => "run",
            Source::Import => "import",
        }
    }
}

/// The content hash that, with the start time and scenario, identifies a run: the SHA-256 of
/// its canonical JSON, so the result a run stored and its saved `--json` file hash alike.
pub fn content_hash(result: &RunResult) -> String {
    let text = serde_json::to_string(result).unwrap_or_default();
    format!("sha256:{:x}", Sha256::digest(text.as_bytes()))
}

/// Writes `result` inside `tx` (the caller commits); a run already in the store is left as it is.
pub fn insert(
    tx: &mut dyn Sql,
    result: &RunResult,
    source: Source,
) -> Result<Stored, HistoryError> {
    let hash = content_hash(result);
    let same = tx.query(
        "SELECT id FROM runs WHERE started_at = ? AND scenario = ? AND content_hash = ?",
        &[
            Value::text(&result.started_at),
            Value::text(&result.scenario),
            Value::text(&hash),
        ],
    )?;
    if let Some(id) = first_int(&same) {
        return Ok(Stored::AlreadyThere(id));
    }
    // A twin written by another rigor since the check (PostgreSQL lets both transactions read
    // before either writes) is the unique index's to catch.
    let Some(run) = insert_run(tx, result, &hash, source)? else {
        let same = tx.query(
            "SELECT id FROM runs WHERE started_at = ? AND scenario = ? AND content_hash = ?",
            &[
                Value::text(&result.started_at),
                Value::text(&result.scenario),
                Value::text(&hash),
            ],
        )?;
        return Ok(Stored::AlreadyThere(first_int(&same).unwrap_or(0)));
    };
    insert_commits(tx, run, &result.environment)?;
    for (position, row) in result.rows.iter().enumerate() {
        insert_row(tx, run, position, row, &result.scenario)?;
    }
    Ok(Stored::Added(run))
}

/// The `runs` row; returns its id, `None` when the same run is already there.
fn insert_run(
    tx: &mut dyn Sql,
    result: &RunResult,
    hash: &str,
    source: Source,
) -> Result<Option<i64>, HistoryError> {
    let environment = serde_json::to_string(&result.environment).unwrap_or_default();
    let status = serde_json::to_value(&result.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let rows = tx.query(
        "INSERT INTO runs (started_at, finished_at, scenario, profile, description, status, \
         seed, rigor_version, environment, content_hash, source, stored_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        &[
            Value::text(&result.started_at),
            Value::opt_text(result.finished_at.as_deref()),
            Value::text(&result.scenario),
            Value::text(&result.profile),
            Value::opt_text(result.description.as_deref()),
            Value::text(status),
            Value::Text(result.seed.map(|s| s.to_string())),
            Value::text(&result.rigor_version),
            Value::text(environment),
            Value::text(hash),
            Value::text(source.code()),
            Value::text(super::time::now_rfc3339()),
        ],
    )?;
    Ok(first_int(&rows))
}

/// One commit of a job folder, as the result's `environment.jobs.NAME.git` records it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobCommit {
    pub job: String,
    pub dir: Option<String>,
    pub commit: String,
    pub dirty: bool,
    pub branch: Option<String>,
}

/// The commits of the job folders that are git checkouts, in job-name order.
pub fn job_commits(environment: &serde_json::Value) -> Vec<JobCommit> {
    let Some(jobs) = environment.get("jobs").and_then(|j| j.as_object()) else {
        return Vec::new();
    };
    let mut out: Vec<JobCommit> = jobs
        .iter()
        .filter_map(|(name, job)| {
            let git = job.get("git")?;
            Some(JobCommit {
                job: name.clone(),
                dir: job.get("dir").and_then(|d| d.as_str()).map(str::to_string),
                commit: git.get("commit")?.as_str()?.to_string(),
                dirty: git.get("dirty").and_then(|d| d.as_bool()).unwrap_or(false),
                branch: git
                    .get("branch")
                    .and_then(|b| b.as_str())
                    .map(str::to_string),
            })
        })
        .collect();
    out.sort_by(|a, b| a.job.cmp(&b.job));
    out
}

fn insert_commits(
    tx: &mut dyn Sql,
    run: i64,
    environment: &serde_json::Value,
) -> Result<(), HistoryError> {
    for c in job_commits(environment) {
        tx.execute(
            "INSERT INTO run_commits (run_id, job, dir, commit_hash, dirty, branch) \
             VALUES (?, ?, ?, ?, ?, ?)",
            &[
                Value::Int(Some(run)),
                Value::text(&c.job),
                Value::opt_text(c.dir.as_deref()),
                Value::text(&c.commit),
                Value::Int(Some(i64::from(c.dirty))),
                Value::opt_text(c.branch.as_deref()),
            ],
        )?;
    }
    Ok(())
}

/// A row's variables as the store keeps them: JSON of the sorted map, so equal rows of
/// different runs compare equal as text.
pub fn variables_json(row: &Row) -> String {
    serde_json::to_string(&row.variables).unwrap_or_else(|_| "{}".into())
}

fn insert_row(
    tx: &mut dyn Sql,
    run: i64,
    position: usize,
    row: &Row,
    run_scenario: &str,
) -> Result<(), HistoryError> {
    let key = row.key_in(run_scenario);
    let ids = tx.query(
        "INSERT INTO run_rows (run_id, position, scenario, variables, variant, build_error) \
         VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        &[
            Value::Int(Some(run)),
            Value::Int(Some(position as i64)),
            Value::text(&key.scenario),
            Value::text(variables_json(row)),
            Value::opt_text(row.variant.as_deref()),
            Value::opt_text(row.build_error.as_deref()),
        ],
    )?;
    let row_id = first_int(&ids)
        .ok_or_else(|| HistoryError::Database("the store returned no id for a row".into()))?;
    for it in &row.iterations {
        insert_iteration(tx, row_id, it)?;
    }
    Ok(())
}

fn insert_iteration(tx: &mut dyn Sql, row_id: i64, it: &Iteration) -> Result<(), HistoryError> {
    let ids = tx.query(
        "INSERT INTO iterations (row_id, idx, sequence, excluded, error) \
         VALUES (?, ?, ?, ?, ?) RETURNING id",
        &[
            Value::Int(Some(row_id)),
            Value::Int(Some(it.index as i64)),
            Value::Int(Some(it.sequence as i64)),
            Value::opt_text(it.excluded.code()),
            Value::opt_text(it.error.as_deref()),
        ],
    )?;
    let id = first_int(&ids).ok_or_else(|| {
        HistoryError::Database("the store returned no id for an iteration".into())
    })?;
    // A figure that is not a number is written as null in the JSON too: nothing to keep.
    for (measurement, value) in it.measurements.iter().filter(|(_, v)| v.is_finite()) {
        tx.execute(
            "INSERT INTO measurements (iteration_id, measurement, value) VALUES (?, ?, ?)",
            &[
                Value::Int(Some(id)),
                Value::text(measurement),
                Value::Real(Some(*value)),
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn commits_come_from_each_job_with_a_checkout() {
        let env = json!({"jobs": {
            "web": {"dir": "/src/web", "git": {"commit": "abc", "dirty": true, "branch": "main"}},
            "api": {"dir": "/src/api", "git": {"commit": "def", "dirty": false}},
            "plain": {"dir": "/tmp"}
        }});
        let c = job_commits(&env);
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].job.as_str(), c[0].commit.as_str(), c[0].dirty),
            ("api", "def", false)
        );
        assert_eq!(
            (c[1].job.as_str(), c[1].branch.as_deref()),
            ("web", Some("main"))
        );
        assert!(job_commits(&json!({})).is_empty());
    }
}
