//! Whose SQLite file a store is: rigor writes its tables only into a database it made (marked
//! by its `application_id` in the file's header) or an empty one, never into a user's own
//! database given as `--store` by mistake.

use super::error::HistoryError;
use rusqlite::Connection;

/// The `application_id` rigor stamps in the header of every SQLite store: "rigr" in ASCII.
pub const APPLICATION_ID: i32 = 0x7269_6772;

/// The tables a rigor store holds (every migration's, and the version table).
const RIGOR_TABLES: &[&str] = &[
    "schema_version",
    "runs",
    "run_commits",
    "run_rows",
    "iterations",
    "measurements",
];

/// What an opened SQLite file is to rigor.
#[derive(Debug, PartialEq, Eq)]
pub enum Owner {
    /// Stamped with rigor's `application_id`.
    Rigor,
    /// Unstamped, but holding only rigor's tables with their version table: a store made
    /// before rigor stamped its files. Stamped when next written.
    RigorUnstamped,
    /// No table at all: a new store.
    Empty,
}

/// Whose file the database behind `conn` is; an error naming the store when it is not rigor's
/// (another `application_id`, tables rigor did not make, or rigor's tables without their
/// version table). Reads only: nothing is written to a file that is not rigor's.
pub fn check(conn: &Connection, name: &str) -> Result<Owner, HistoryError> {
    let id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| HistoryError::database(e).in_store(name))?;
    if id != 0 && id != APPLICATION_ID {
        return Err(HistoryError::Unusable(format!(
            "{name} is not a rigor history store: its SQLite application_id is {id:#x} (another \
             program's database); rigor writes only into its own store or an empty database \
             (give --store a new file)"
        )));
    }
    let mut stmt = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             ORDER BY name",
        )
        .map_err(|e| HistoryError::database(e).in_store(name))?;
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| HistoryError::database(e).in_store(name))?;
    if tables.is_empty() {
        return Ok(if id == APPLICATION_ID {
            Owner::Rigor
        } else {
            Owner::Empty
        });
    }
    let foreign: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|t| !RIGOR_TABLES.contains(t))
        .collect();
    // A stamped store is rigor's whatever else a user keeps in it.
    if !foreign.is_empty() && id != APPLICATION_ID {
        let shown: Vec<&str> = foreign.iter().take(5).copied().collect();
        let more = match foreign.len() - shown.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        return Err(HistoryError::Unusable(format!(
            "{name} is not a rigor history store: it holds tables rigor did not make ({}{more}); \
             rigor writes only into its own store or an empty database (give --store a new file)",
            shown.join(", ")
        )));
    }
    let rigors: Vec<&str> = tables
        .iter()
        .map(String::as_str)
        .filter(|t| RIGOR_TABLES.contains(t))
        .collect();
    if !rigors.is_empty() && !rigors.contains(&"schema_version") {
        return Err(HistoryError::Unusable(format!(
            "{name} holds rigor's tables ({}) but not their schema_version table, so which \
             schema they follow is unknown (a damaged or hand-made store); rigor leaves it as it \
             is: restore it from a backup, or give --store a new file and `rigor history \
             import` the result files",
            rigors.join(", ")
        )));
    }
    Ok(if id == APPLICATION_ID {
        Owner::Rigor
    } else {
        Owner::RigorUnstamped
    })
}

/// Stamps rigor's `application_id` in the file's header.
pub fn stamp(conn: &Connection, name: &str) -> Result<(), HistoryError> {
    conn.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(|e| HistoryError::database(e).in_store(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(sql: &str) -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(sql).unwrap();
        c
    }

    #[test]
    fn only_an_empty_database_or_rigors_own_is_taken() {
        assert_eq!(check(&db(""), "s.db").ok(), Some(Owner::Empty));
        let old = "CREATE TABLE schema_version (version INTEGER); CREATE TABLE runs (id INTEGER);";
        assert_eq!(check(&db(old), "s.db").ok(), Some(Owner::RigorUnstamped));
        let stamped = db(old);
        stamp(&stamped, "s.db").unwrap();
        assert_eq!(check(&stamped, "s.db").ok(), Some(Owner::Rigor));
        // Stamped, but its version table lost: which schema the tables follow is unknown.
        let lost = db("CREATE TABLE runs (id INTEGER);");
        stamp(&lost, "s.db").unwrap();
        let e = check(&lost, "s.db").unwrap_err().to_string();
        assert!(e.contains("not their schema_version table"), "{e}");
        let e = check(&db("CREATE TABLE customers (id INTEGER);"), "theirs.db")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("theirs.db is not a rigor history store") && e.contains("customers"),
            "{e}"
        );
        let e = check(&db("PRAGMA application_id = 42;"), "theirs.db")
            .unwrap_err()
            .to_string();
        assert!(e.contains("application_id is 0x2a"), "{e}");
        let e = check(&db("CREATE TABLE runs (id INTEGER);"), "s.db")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not their schema_version table"), "{e}");
    }
}
