//! The history store: every `rigor run` appended to a database (an embedded SQLite file by
//! default, or a team's PostgreSQL), so `rigor history` can show how each figure moved over
//! time and where it stepped. Both stores hold the same versioned schema ([`schema`]); a run is
//! flattened into rows by [`record`] and read back into series by [`series`].
//!
//! A crate of its own because the store is a file format of its own, with the two database
//! drivers behind it: the compiler keeps it to the saved results and their analysis (no
//! configuration, no reports, no command line), and what it needs of the process (signals,
//! how rigor makes its folders) is handed in as [`Hooks`].

pub mod changes;
mod checked;
pub mod error;
pub mod import;
mod owner;
pub mod postgres;
pub mod record;
pub mod schema;
pub mod series;
pub mod sql;
pub mod sqlite;
pub mod time;

pub use error::HistoryError;
use record::{Source, Stored};
use sql::Sql;
use std::path::{Path, PathBuf};

/// The environment variable that names the store when `--store` does not.
pub const STORE_ENV: &str = "RIGOR_STORE";

/// Where the default store lives, relative to the config file's folder.
pub const DEFAULT_STORE: &str = ".rigor/history.db";

/// Which store to use: a SQLite file or a PostgreSQL URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    Sqlite(PathBuf),
    Postgres(String),
}

impl StoreSpec {
    /// `postgres://…` (or `postgresql://…`) is a server; anything else a file path.
    pub fn parse(text: &str) -> StoreSpec {
        let t = text.trim();
        if t.starts_with("postgres://") || t.starts_with("postgresql://") {
            StoreSpec::Postgres(t.to_string())
        } else {
            StoreSpec::Sqlite(PathBuf::from(text))
        }
    }

    /// The default store of the config at `config`: `.rigor/history.db` beside it.
    pub fn beside(config: &Path) -> StoreSpec {
        let dir = config.parent().unwrap_or(Path::new(""));
        StoreSpec::Sqlite(dir.join(DEFAULT_STORE))
    }

    /// The store a command uses: `--store` wins over `RIGOR_STORE`, which wins over the default
    /// beside the config.
    pub fn choose(flag: Option<&str>, config: &Path) -> StoreSpec {
        let env = std::env::var(STORE_ENV).ok();
        match flag.or(env.as_deref().filter(|e| !e.trim().is_empty())) {
            Some(text) => StoreSpec::parse(text),
            None => StoreSpec::beside(config),
        }
    }

    /// Why this store can never take a run, known before anything is measured: a URL the
    /// driver cannot read, or a folder where a database file should be. A run that found out
    /// only as it stored would have measured for nothing. (A server that is down may be up by
    /// the time the run ends: that is found when storing.)
    pub fn unusable(&self) -> Option<String> {
        match self {
            StoreSpec::Sqlite(path) => path
                .is_dir()
                .then(|| format!("the history store {} is a directory, not a database file (--store, {STORE_ENV}; --no-store stores nothing)", path.display())),
            StoreSpec::Postgres(url) => url.parse::<::postgres::Config>().err().map(|e| {
                format!(
                    "the history store {}: not a PostgreSQL URL: {e} (--store, {STORE_ENV}; \
                     --no-store stores nothing)",
                    self.name()
                )
            }),
        }
    }

    /// The store for people: its path, or its URL without the password.
    pub fn name(&self) -> String {
        match self {
            StoreSpec::Sqlite(p) => p.display().to_string(),
            StoreSpec::Postgres(url) => postgres::redact(url),
        }
    }
}

/// What the process around the store lends it: the store knows neither how the process
/// handles signals nor how it makes its own folders, and the binary that opens it does.
#[derive(Debug, Clone, Copy)]
pub struct Hooks {
    /// How many interrupting signals (Ctrl-C) the process has had so far: a statement a
    /// PostgreSQL server is working on is cancelled when the count grows.
    pub signals: fn() -> usize,
    /// Makes the folder (and its parents) a new SQLite file goes into.
    pub create_dir: fn(&Path) -> std::io::Result<()>,
}

impl Hooks {
    /// A process that counts no signals and makes folders plainly (tests, other tools).
    pub const PLAIN: Hooks = Hooks {
        signals: no_signals,
        create_dir: plain_dir,
    };
}

fn no_signals() -> usize {
    0
}

fn plain_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// An open store of either kind.
pub enum Store {
    Sqlite(sqlite::SqliteStore),
    Postgres(postgres::PgStore),
}

impl Store {
    /// Opens the store, migrating its schema. `create`: a SQLite file that does not exist yet is
    /// made (a reader passes false and says the store is empty instead).
    pub fn open(spec: &StoreSpec, create: bool, hooks: Hooks) -> Result<Store, HistoryError> {
        match spec {
            StoreSpec::Sqlite(path) => {
                sqlite::SqliteStore::open(path, create, hooks.create_dir).map(Store::Sqlite)
            }
            StoreSpec::Postgres(url) => {
                postgres::PgStore::open(url, hooks.signals).map(Store::Postgres)
            }
        }
    }

    /// Runs `work` in one write transaction.
    pub fn write<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, HistoryError>,
    ) -> Result<T, HistoryError> {
        match self {
            Store::Sqlite(s) => s.write(work),
            Store::Postgres(s) => s.write(work),
        }
    }

    /// Runs `work` in one read transaction.
    pub fn read<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, HistoryError>,
    ) -> Result<T, HistoryError> {
        match self {
            Store::Sqlite(s) => s.read(work),
            Store::Postgres(s) => s.read(work),
        }
    }

    /// Writes one run in one transaction.
    pub fn add(
        &mut self,
        result: &rigor_model::result::RunResult,
        source: Source,
    ) -> Result<Stored, HistoryError> {
        self.write(|tx| record::insert(tx, result, source))
    }
}

/// Stores a finished (or interrupted) run as `rigor run` ends; the error names the store.
pub fn store_run(
    spec: &StoreSpec,
    result: &rigor_model::result::RunResult,
    hooks: Hooks,
) -> Result<Stored, HistoryError> {
    let name = spec.name();
    let mut store = Store::open(spec, true, hooks).map_err(|e| e.in_store(&name))?;
    store
        .add(result, Source::Run)
        .map_err(|e| e.in_store(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_servers_and_everything_else_a_file() {
        assert_eq!(
            StoreSpec::parse("postgres://u:p@h/db"),
            StoreSpec::Postgres("postgres://u:p@h/db".into())
        );
        assert_eq!(
            StoreSpec::parse("postgresql://h/db"),
            StoreSpec::Postgres("postgresql://h/db".into())
        );
        assert_eq!(
            StoreSpec::parse("runs.db"),
            StoreSpec::Sqlite("runs.db".into())
        );
        assert_eq!(
            StoreSpec::beside(Path::new("bench/rigor.toml")),
            StoreSpec::Sqlite("bench/.rigor/history.db".into())
        );
        assert_eq!(
            StoreSpec::beside(Path::new("rigor.toml")),
            StoreSpec::Sqlite(".rigor/history.db".into())
        );
        assert_eq!(
            StoreSpec::Postgres("postgres://u:secret@h/db".into()).name(),
            "postgres://u:***@h/db"
        );
    }

    #[test]
    fn stores_that_can_never_work_are_known_before_a_run() {
        let e = StoreSpec::parse("postgres://rigor:hunter2@db:notaport/rigor")
            .unusable()
            .unwrap();
        assert!(e.contains("not a PostgreSQL URL"), "{e}");
        assert!(!e.contains("hunter2"), "{e}");
        let dir = std::env::temp_dir();
        let e = StoreSpec::Sqlite(dir.clone()).unusable().unwrap();
        assert!(e.contains("is a directory"), "{e}");
        assert_eq!(
            StoreSpec::parse("postgres://u:p@h:5432/db").unusable(),
            None
        );
        assert_eq!(StoreSpec::Sqlite(dir.join("no-such.db")).unusable(), None);
    }

    #[test]
    fn a_run_is_written_once_and_read_back_whole() {
        let dir = std::env::temp_dir().join(format!("rigor-history-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let spec = StoreSpec::Sqlite(dir.join("h.db"));
        let result = rigor_analysis::matching::tests::result(None, &[100.0, 101.0, 99.0], "6.1");
        let first = store_run(&spec, &result, Hooks::PLAIN).unwrap();
        assert!(matches!(first, Stored::Added(_)), "{first:?}");
        let again = store_run(&spec, &result, Hooks::PLAIN).unwrap();
        let Stored::Added(id) = first else {
            unreachable!()
        };
        assert_eq!(again, Stored::AlreadyThere(id));
        let mut store = Store::open(&spec, false, Hooks::PLAIN).unwrap();
        let iterations: usize = result.rows.iter().map(|r| r.iterations.len()).sum();
        let counted = store
            .read(|tx| tx.query("SELECT COUNT(*) FROM iterations", &[]))
            .unwrap();
        assert_eq!(sql::first_int(&counted), Some(iterations as i64));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
