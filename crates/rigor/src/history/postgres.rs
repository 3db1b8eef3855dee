//! The shared store: the same schema in a PostgreSQL database, so a team's runs land in one
//! place. Migrations run under a transaction-scoped advisory lock (two rigors meeting a new
//! database migrate it once); every run is written in one transaction.

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

/// An open PostgreSQL store, migrated to the current schema.
pub struct PgStore {
    client: Client,
    name: String,
}

/// The URL for people: the password replaced by `***`, so an error message or a log never
/// shows it.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_string();
    };
    match rest[..at].split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
        None => url.to_string(),
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user:pass@host:port/db`, no TLS) and brings the schema up
    /// to date.
    pub fn open(url: &str) -> Result<PgStore, String> {
        let name = redact(url);
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| format!("{name}: not a PostgreSQL URL: {e}"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let client = config
            .connect(NoTls)
            .map_err(|e| format!("{name}: cannot connect: {e}"))?;
        let mut store = PgStore { client, name };
        let name = store.name.clone();
        store
            .write(|tx| {
                tx.execute(
                    "SELECT pg_advisory_xact_lock(?)",
                    &[Value::Int(Some(MIGRATION_LOCK))],
                )?;
                super::schema::migrate(tx, &name)
            })
            .map_err(|e| {
                if e.contains(&name) {
                    e
                } else {
                    format!("{name}: {e}")
                }
            })?;
        Ok(store)
    }

    /// Runs `work` in one transaction, committed when it succeeds.
    pub fn write<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, String>,
    ) -> Result<T, String> {
        let tx = self.client.transaction().map_err(|e| e.to_string())?;
        let mut pg = PgTx { tx };
        let out = work(&mut pg)?;
        pg.tx.commit().map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// Runs `work` in a read-only transaction: one consistent snapshot.
    pub fn read<T>(
        &mut self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, String>,
    ) -> Result<T, String> {
        let tx = self
            .client
            .build_transaction()
            .read_only(true)
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .start()
            .map_err(|e| e.to_string())?;
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

/// Errors of the server with their detail: the driver's own text is often just "db error".
fn described(e: postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

fn column(row: &postgres::Row, i: usize) -> Result<Value, String> {
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
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, String> {
        let boxes = boxed(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxes.iter().map(|b| &**b).collect();
        let sql = numbered(sql);
        self.tx.execute(sql.as_str(), &refs).map_err(described)
    }

    fn batch(&mut self, sql: &str) -> Result<(), String> {
        self.tx.batch_execute(sql).map_err(described)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let boxes = boxed(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxes.iter().map(|b| &**b).collect();
        let sql = numbered(sql);
        let rows = self.tx.query(sql.as_str(), &refs).map_err(described)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| column(row, i))
                    .collect::<Result<Vec<Value>, String>>()
            })
            .collect()
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

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
}
