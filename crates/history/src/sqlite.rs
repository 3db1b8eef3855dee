//! The embedded store: one SQLite file in WAL mode (readers never block the writer), a busy
//! timeout so a second rigor waits for the first one's transaction instead of failing, and every
//! write in an IMMEDIATE transaction (the write lock taken up front, so two writers queue rather
//! than deadlock on upgrading a read lock).

use super::error::HistoryError;
use super::sql::{Dialect, Sql, Value};
use rusqlite::types::{Value as Lite, ValueRef};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another's transaction before giving up: longer than any one
/// run's write takes.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// An open SQLite store, migrated to the current schema.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating when `create`) the store at `path` and brings its schema up to date;
    /// `create_dir` makes the folder of a new file (see [`crate::Hooks`]).
    pub fn open(
        path: &Path,
        create: bool,
        create_dir: fn(&Path) -> std::io::Result<()>,
    ) -> Result<SqliteStore, HistoryError> {
        let name = path.display().to_string();
        if path.is_dir() {
            return Err(HistoryError::Unusable(format!(
                "{name} is a directory, not a database file"
            )));
        }
        read_only_filesystem(path, &name)?;
        // SQLite would open a file it may not write read-only and fail later with a vaguer
        // message when the run is written.
        if create && path.exists() {
            nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).map_err(|e| {
                HistoryError::Unusable(format!("{name} is read-only for this user ({e})"))
            })?;
        }
        if create {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                create_dir(parent).map_err(|e| {
                    HistoryError::Unusable(format!("cannot create {}: {e}", parent.display()))
                })?;
            }
        }
        let access = if create {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE
        };
        let flags = access | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| db(&name, e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| db(&name, e))?;
        // Before anything is written (the journal mode too): a database that is not rigor's is
        // left exactly as it was.
        let owner = super::owner::check(&conn, &name)?;
        if owner != super::owner::Owner::Rigor && (create || owner == super::owner::Owner::Empty) {
            super::owner::stamp(&conn, &name)?;
        }
        // The mode is a property of the file: set once, it stays. The pragma answers with the
        // mode, so it is a query.
        let mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| db(&name, e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(HistoryError::Unusable(format!(
                "{name}: cannot use write-ahead logging (mode {mode})"
            )));
        }
        let mut store = SqliteStore {
            conn,
            path: path.to_path_buf(),
        };
        // A store at the current version needs no write (so a reader may read a file it cannot
        // write); an older one is migrated, a newer one refused.
        let found = store.read(|tx| super::schema::version(tx)).unwrap_or(0);
        if found > super::schema::CURRENT {
            return Err(HistoryError::Unusable(super::schema::too_new(&name, found)));
        }
        if found < super::schema::CURRENT {
            store
                .write(|tx| super::schema::migrate(tx, &name))
                .map_err(|e| e.in_store(&name))?;
        }
        // Marked as rigor's once it is rigor's schema (a store rigor is only reading stays
        // untouched until it is next written).
        if owner != super::owner::Owner::Rigor && (create || owner == super::owner::Owner::Empty) {
            super::owner::stamp(&store.conn, &name)?;
        }
        Ok(store)
    }

    /// Runs `work` in one IMMEDIATE transaction, committed when it succeeds.
    pub fn write<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, HistoryError>,
    ) -> Result<T, HistoryError> {
        let name = self.path.display().to_string();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| db(&name, e))?;
        let mut lite = LiteTx { tx };
        let out = work(&mut lite)?;
        lite.tx.commit().map_err(|e| db(&name, e))?;
        Ok(out)
    }

    /// Runs `work` in a read transaction: a consistent view while a writer goes on.
    pub fn read<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, HistoryError>,
    ) -> Result<T, HistoryError> {
        let name = self.path.display().to_string();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(|e| db(&name, e))?;
        let mut lite = LiteTx { tx };
        work(&mut lite)
    }
}

/// A store on a read-only filesystem can be neither written nor, in write-ahead-log mode (which
/// needs its `-shm` file beside it), read: said as such rather than as SQLite's "unable to open
/// database file".
fn read_only_filesystem(path: &Path, name: &str) -> Result<(), HistoryError> {
    let at = if path.exists() {
        path
    } else {
        match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) if p.exists() => p,
            Some(_) => return Ok(()),
            None => Path::new("."),
        }
    };
    let ro = nix::sys::statvfs::statvfs(at)
        .is_ok_and(|s| s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY));
    if ro {
        return Err(HistoryError::Unusable(format!(
            "{name} is on a read-only filesystem: rigor can neither store runs there nor read \
             the store (SQLite's write-ahead log needs its -shm file beside it); copy it to a \
             writable place, or give --store another file"
        )));
    }
    Ok(())
}

/// A driver's error said of the store `name`.
fn db(name: &str, e: rusqlite::Error) -> HistoryError {
    HistoryError::database(e).in_store(name)
}

/// A SQLite transaction behind the shared [`Sql`] trait.
struct LiteTx<'c> {
    tx: rusqlite::Transaction<'c>,
}

fn to_lite(params: &[Value]) -> Vec<Lite> {
    params
        .iter()
        .map(|p| match p {
            Value::Int(Some(v)) => Lite::Integer(*v),
            Value::Real(Some(v)) => Lite::Real(*v),
            Value::Text(Some(v)) => Lite::Text(v.clone()),
            _ => Lite::Null,
        })
        .collect()
}

fn from_lite(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Text(None),
        ValueRef::Integer(i) => Value::Int(Some(i)),
        ValueRef::Real(r) => Value::Real(Some(r)),
        ValueRef::Text(t) => Value::Text(Some(String::from_utf8_lossy(t).into_owned())),
        ValueRef::Blob(b) => Value::Text(Some(String::from_utf8_lossy(b).into_owned())),
    }
}

impl Sql for LiteTx<'_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, HistoryError> {
        self.tx
            .execute(sql, rusqlite::params_from_iter(to_lite(params)))
            .map(|n| n as u64)
            .map_err(HistoryError::database)
    }

    fn batch(&mut self, sql: &str) -> Result<(), HistoryError> {
        self.tx.execute_batch(sql).map_err(HistoryError::database)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, HistoryError> {
        let mut stmt = self.tx.prepare(sql).map_err(HistoryError::database)?;
        let columns = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(to_lite(params)))
            .map_err(HistoryError::database)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(HistoryError::database)? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(from_lite(row.get_ref(i).map_err(HistoryError::database)?));
            }
            out.push(values);
        }
        Ok(out)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
}
