//! The store's schema, versioned: numbered migrations applied in order, each recorded as a row
//! of `schema_version`, so an older store is brought up to date and a store written by a newer
//! rigor is refused rather than misread.

use super::error::HistoryError;
use super::sql::{first_int, Sql, Value};

/// The migrations, in order: the schema version after migration `i` is `i + 1`. A migration is
/// never edited once released; a change to the schema is a new one at the end.
const MIGRATIONS: &[&str] = &[
    // 1: runs, the commits of their job folders, their rows, iterations and measurements.
    "CREATE TABLE runs (
        id {id},
        started_at TEXT NOT NULL,
        finished_at TEXT,
        scenario TEXT NOT NULL,
        profile TEXT NOT NULL,
        description TEXT,
        status TEXT NOT NULL,
        seed TEXT,
        rigor_version TEXT NOT NULL,
        environment TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        source TEXT NOT NULL,
        stored_at TEXT NOT NULL
    );
    CREATE UNIQUE INDEX runs_identity ON runs (started_at, scenario, content_hash);
    CREATE TABLE run_commits (
        run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        job TEXT NOT NULL,
        dir TEXT,
        commit_hash TEXT NOT NULL,
        dirty {int} NOT NULL,
        branch TEXT,
        PRIMARY KEY (run_id, job)
    );
    CREATE TABLE run_rows (
        id {id},
        run_id {int} NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        position {int} NOT NULL,
        scenario TEXT NOT NULL,
        variables TEXT NOT NULL,
        variant TEXT,
        build_error TEXT
    );
    CREATE INDEX run_rows_run ON run_rows (run_id);
    CREATE TABLE iterations (
        id {id},
        row_id {int} NOT NULL REFERENCES run_rows (id) ON DELETE CASCADE,
        idx {int} NOT NULL,
        sequence {int} NOT NULL,
        excluded TEXT,
        error TEXT
    );
    CREATE INDEX iterations_row ON iterations (row_id);
    CREATE TABLE measurements (
        iteration_id {int} NOT NULL REFERENCES iterations (id) ON DELETE CASCADE,
        measurement TEXT NOT NULL,
        value {real} NOT NULL,
        PRIMARY KEY (iteration_id, measurement)
    );
    CREATE INDEX measurements_id ON measurements (measurement);",
];

/// The schema version this rigor writes and understands.
pub const CURRENT: i64 = MIGRATIONS.len() as i64;

/// The version table itself: one row per applied migration.
const VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS schema_version (version {int} NOT NULL, applied_at TEXT NOT NULL)";

/// Brings the store inside `tx` up to [`CURRENT`], within the caller's transaction (which holds
/// the store's write lock, so two rigors opening a new store migrate it once). `store` names the
/// store in the error when it was written by a newer rigor.
pub fn migrate(tx: &mut dyn Sql, store: &str) -> Result<(), HistoryError> {
    let dialect = tx.dialect();
    tx.batch(&dialect.ddl(VERSION_TABLE))?;
    let found = version(tx)?;
    if found > CURRENT {
        return Err(HistoryError::Unusable(too_new(store, found)));
    }
    for (i, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let to = i as i64 + 1;
        let ddl = dialect.ddl(migration);
        tx.batch(&ddl).map_err(|e| {
            HistoryError::Database(format!(
                "migrating {store} to schema version {to}: {}",
                without_sql(&e.to_string(), &ddl)
            ))
        })?;
        tx.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
            &[
                Value::Int(Some(to)),
                Value::text(super::time::now_rfc3339()),
            ],
        )?;
    }
    Ok(())
}

/// A database error without the migration's SQL the driver may quote in it (a page of
/// statements inside one line): the reason alone names what is wrong.
fn without_sql(error: &str, ddl: &str) -> String {
    let head: String = ddl.trim_start().chars().take(24).collect();
    match error.find(&head) {
        Some(i) => error[..i].trim_end().trim_end_matches(" in").to_string(),
        None => error.to_string(),
    }
}

/// The store's schema version (0 for a new store).
pub fn version(tx: &mut dyn Sql) -> Result<i64, HistoryError> {
    let rows = tx.query("SELECT MAX(version) FROM schema_version", &[])?;
    Ok(first_int(&rows).unwrap_or(0))
}

/// The refusal of a store a newer rigor wrote: its tables may mean what this rigor cannot know.
pub fn too_new(store: &str, found: i64) -> String {
    format!(
        "{store} has schema version {found}, newer than the {CURRENT} this rigor {} \
         understands; use a newer rigor (or another --store)",
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_migration_error_keeps_its_reason_not_the_sql() {
        let ddl = "\n    CREATE TABLE runs (\n id INTEGER\n);";
        let e = "table runs already exists in CREATE TABLE runs (\n id INTEGER\n); at offset 13";
        assert_eq!(without_sql(e, ddl), "table runs already exists");
        assert_eq!(without_sql("disk I/O error", ddl), "disk I/O error");
    }
}
