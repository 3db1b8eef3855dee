//! The shared store: the same schema in a PostgreSQL database, so a team's runs land in one
//! place. Migrations run under a transaction-scoped advisory lock (two rigors meeting a new
//! database migrate it once); every run is written in one transaction.

use super::error::HistoryError;
use super::sql::{numbered, Dialect, Sql, Value};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};
use std::time::Duration;

/// The advisory lock key rigor's migrations take: any fixed number other tools are unlikely
/// to use (the ASCII of `rigorhst`).
const MIGRATION_LOCK: i64 = 0x7269_676f_7268_7374;

/// How long connecting may take when the URL does not say (`connect_timeout=`): an unreachable
/// server is an error in seconds, not a hang.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the server may take to answer the startup (authentication included) once the TCP
/// connection is made.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a statement waits for a lock another session holds before it fails.
const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one statement may run: far more than storing or reading a run takes.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(120);

/// While a transaction runs, a signal that arrives meanwhile (Ctrl-C) cancels the statement
/// the server is working on, so the user need not wait for a lock or a slow query. Signals
/// before it began (an interrupted run being stored) do not count. The process counts its
/// signals (`signals`); the store only watches the count.
struct CancelOnSignal {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl CancelOnSignal {
    fn start(token: postgres::CancelToken, signals: fn() -> usize) -> CancelOnSignal {
        use std::sync::atomic::Ordering;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = signals();
        let flag = done.clone();
        // Without the thread, the lock and statement timeouts still bound the wait.
        let _ = std::thread::Builder::new()
            .name("rigor-store-cancel".into())
            .spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    if signals() > seen {
                        let _ = token.cancel_query(NoTls);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        CancelOnSignal { done }
    }
}

impl Drop for CancelOnSignal {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// An open PostgreSQL store, migrated to the current schema.
pub struct PgStore {
    client: Client,
    name: String,
    /// How many signals the process has had, for [`CancelOnSignal`].
    signals: fn() -> usize,
}

/// The URL for people: every password replaced by `***`, so an error message or a log never
/// shows it. The credentials are cut where the driver cuts them (up to the first `@`, the
/// password after the user's first `:`, so a password holding a `/` is still hidden), and a
/// `password=` query parameter is hidden too.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let rest = match rest.split_once('@') {
        Some((creds, host)) => match creds.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => rest.to_string(),
        },
        None => rest.to_string(),
    };
    let Some((before, query)) = rest.split_once('?') else {
        return format!("{scheme}://{rest}");
    };
    let query = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&");
    format!("{scheme}://{before}?{query}")
}

/// Connects, giving up after the connect timeout. The driver's own timeout covers only the
/// TCP connection: a server that accepts it and never answers the startup (a port that is not
/// PostgreSQL, a stalled proxy) would hang rigor for ever. The connection is made on a thread
/// of its own, left behind when it does not answer in time: the TCP timeout plus
/// [`STARTUP_TIMEOUT`], so a slow TCP connection is still said as such by the driver.
fn connect_within(config: postgres::Config) -> Result<Client, HistoryError> {
    let limit = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT)
        + STARTUP_TIMEOUT;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("rigor-postgres-connect".into())
        .spawn(move || {
            let _ = tx.send(config.connect(NoTls));
        })
        .map_err(|e| HistoryError::Database(format!("cannot start a thread: {e}")))?;
    match rx.recv_timeout(limit) {
        Ok(connected) => connected.map_err(|e| HistoryError::Database(with_causes(&e))),
        Err(_) => Err(HistoryError::Unusable(format!(
            "no answer from the server within {} s (is it PostgreSQL on that port?)",
            limit.as_secs_f64()
        ))),
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user:pass@host:port/db`, no TLS) and brings the schema up
    /// to date. `signals` counts the process's interrupting signals (see [`crate::Hooks`]).
    pub fn open(url: &str, signals: fn() -> usize) -> Result<PgStore, HistoryError> {
        let name = redact(url);
        let mut config: postgres::Config = url.parse().map_err(|e| {
            HistoryError::Unusable(format!("{name}: not a PostgreSQL URL: {}", with_causes(&e)))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let mut client = connect_within(config)
            .map_err(|e| HistoryError::Unusable(format!("{name}: cannot connect: {e}")))?;
        // Another session holding a lock on rigor's tables must not hold up the end of a run
        // for as long as it likes.
        client
            .batch_execute(&format!(
                "SET lock_timeout = '{}s'; SET statement_timeout = '{}s'",
                LOCK_TIMEOUT.as_secs(),
                STATEMENT_TIMEOUT.as_secs()
            ))
            .map_err(|e| described(e).in_store(&name))?;
        let mut store = PgStore {
            client,
            name,
            signals,
        };
        let name = store.name.clone();
        store
            .write(|tx| {
                tx.execute(
                    "SELECT pg_advisory_xact_lock(?)",
                    &[Value::Int(Some(MIGRATION_LOCK))],
                )?;
                super::schema::migrate(tx, &name)
            })
            .map_err(|e| e.in_store(&name))?;
        Ok(store)
    }

    /// Runs `work` in one transaction, committed when it succeeds.
    pub fn write<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, HistoryError>,
    ) -> Result<T, HistoryError> {
        let _watch = CancelOnSignal::start(self.client.cancel_token(), self.signals);
        let tx = self.client.transaction().map_err(HistoryError::database)?;
        let mut pg = PgTx { tx };
        let out = work(&mut pg)?;
        pg.tx.commit().map_err(HistoryError::database)?;
        Ok(out)
    }

    /// Runs `work` in a read-only transaction: one consistent snapshot.
    pub fn read<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, HistoryError>,
    ) -> Result<T, HistoryError> {
        let _watch = CancelOnSignal::start(self.client.cancel_token(), self.signals);
        let tx = self
            .client
            .build_transaction()
            .read_only(true)
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .start()
            .map_err(HistoryError::database)?;
        let mut pg = PgTx { tx };
        work(&mut pg)
    }
}

/// A PostgreSQL transaction behind the shared [`Sql`] trait.
struct PgTx<'c> {
    tx: postgres::Transaction<'c>,
}

fn boxed(params: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    params
        .iter()
        .map(|p| -> Box<dyn ToSql + Sync> {
            match p {
                Value::Int(v) => Box::new(*v),
                Value::Real(v) => Box::new(*v),
                Value::Text(v) => Box::new(v.clone()),
            }
        })
        .collect()
}

/// The driver's error with the causes under it: on its own it says "error connecting to
/// server" or "invalid connection string" and keeps why (connection refused, which option is
/// wrong) in its source. The causes are the client's own words, never the URL.
fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text
}

/// Errors of the server with their detail: the driver's own text is often just "db error".
fn described(e: postgres::Error) -> HistoryError {
    HistoryError::Database(match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    })
}

fn column(row: &postgres::Row, i: usize) -> Result<Value, HistoryError> {
    let ty = row.columns()[i].type_().clone();
    let err = |e: postgres::Error| described(e);
    Ok(if ty == Type::INT8 {
        Value::Int(row.try_get::<_, Option<i64>>(i).map_err(err)?)
    } else if ty == Type::INT4 {
        Value::Int(
            row.try_get::<_, Option<i32>>(i)
                .map_err(err)?
                .map(i64::from),
        )
    } else if ty == Type::INT2 {
        Value::Int(
            row.try_get::<_, Option<i16>>(i)
                .map_err(err)?
                .map(i64::from),
        )
    } else if ty == Type::FLOAT8 {
        Value::Real(row.try_get::<_, Option<f64>>(i).map_err(err)?)
    } else if ty == Type::FLOAT4 {
        Value::Real(
            row.try_get::<_, Option<f32>>(i)
                .map_err(err)?
                .map(f64::from),
        )
    } else if ty == Type::BOOL {
        Value::Int(
            row.try_get::<_, Option<bool>>(i)
                .map_err(err)?
                .map(i64::from),
        )
    } else {
        Value::Text(row.try_get::<_, Option<String>>(i).map_err(err)?)
    })
}

impl Sql for PgTx<'_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, HistoryError> {
        let boxes = boxed(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxes.iter().map(|b| &**b).collect();
        let sql = numbered(sql);
        self.tx.execute(sql.as_str(), &refs).map_err(described)
    }

    fn batch(&mut self, sql: &str) -> Result<(), HistoryError> {
        self.tx.batch_execute(sql).map_err(described)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, HistoryError> {
        let boxes = boxed(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxes.iter().map(|b| &**b).collect();
        let sql = numbered(sql);
        let rows = self.tx.query(sql.as_str(), &refs).map_err(described)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| column(row, i))
                    .collect::<Result<Vec<Value>, HistoryError>>()
            })
            .collect()
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}

#[cfg(test)]
mod tests {
    use super::{redact, with_causes};

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(
            redact("postgres://rigor:s3cret@db:5432/rigor"),
            "postgres://rigor:***@db:5432/rigor"
        );
        assert_eq!(
            redact("postgres://rigor@db/rigor"),
            "postgres://rigor@db/rigor"
        );
        assert_eq!(redact("postgres://db/x@y"), "postgres://db/x@y");
    }

    #[test]
    fn errors_say_why_not_just_that_connecting_failed() {
        let e = "postgres://u:p@h:notaport/db"
            .parse::<postgres::Config>()
            .unwrap_err();
        let text = with_causes(&e);
        assert!(text.starts_with("invalid connection string: "), "{text}");
        assert!(text.contains("port"), "{text}");
        let e = "postgres://".parse::<postgres::Config>().unwrap();
        let Err(e) = e.connect(postgres::NoTls) else {
            panic!("connected to a URL without a host");
        };
        let text = with_causes(&e);
        assert!(text.contains("host"), "{text}");
    }

    #[test]
    fn passwords_the_driver_would_read_are_hidden_however_written() {
        // The driver takes everything up to the first `@` as credentials: a `/` in the password
        // does not end them.
        assert_eq!(
            redact("postgres://rigor:pa/ss@db:5432/rigor"),
            "postgres://rigor:***@db:5432/rigor"
        );
        assert_eq!(
            redact("postgres://rigor@db/rigor?password=s3cret&sslmode=disable"),
            "postgres://rigor@db/rigor?password=***&sslmode=disable"
        );
        assert_eq!(
            redact("postgresql://db/rigor?user=rigor&PASSWORD=s3cret"),
            "postgresql://db/rigor?user=rigor&PASSWORD=***"
        );
        assert_eq!(
            redact("postgres://db/rigor?connect_timeout=2"),
            "postgres://db/rigor?connect_timeout=2"
        );
        assert_eq!(
            redact("postgres://db/rigor?password=a@b"),
            "postgres://db/rigor?password=***"
        );
    }
}
