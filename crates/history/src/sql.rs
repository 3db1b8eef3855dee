//! The little SQL both stores speak: typed values (a NULL keeps its column's type, which
//! PostgreSQL insists on) and one trait over a transaction, so the schema, the writing of a run
//! and the reading of series are written once for SQLite and PostgreSQL alike.

use super::error::HistoryError;

/// A parameter or a column value. Each variant carries an `Option` so a NULL still says which
/// type of column it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
}

impl Value {
    /// A text value from anything string-like.
    pub fn text(s: impl Into<String>) -> Value {
        Value::Text(Some(s.into()))
    }

    /// An optional text value.
    pub fn opt_text(s: Option<&str>) -> Value {
        Value::Text(s.map(str::to_string))
    }

    /// The value as an integer (a real is truncated, text is none).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            Value::Real(v) => v.map(|v| v as i64),
            Value::Text(_) => None,
        }
    }

    /// The value as a real.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) => v.map(|v| v as f64),
            Value::Real(v) => *v,
            Value::Text(_) => None,
        }
    }

    /// The value as text (numbers are not converted: a text column is text).
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(v) => v.as_deref(),
            _ => None,
        }
    }
}

/// One open transaction of either store. SQL is written with `?` placeholders; the PostgreSQL
/// side numbers them (`$1`, `$2`…).
pub trait Sql {
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, HistoryError>;
    /// Runs several statements without parameters (schema migrations).
    fn batch(&mut self, sql: &str) -> Result<(), HistoryError>;
    /// Runs a query; every row as its column values in order.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, HistoryError>;
    /// Which SQL dialect this is, for the few statements that differ.
    fn dialect(&self) -> Dialect;
}

/// The two SQL dialects of the stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// DDL with the dialect's types put in for `{id}` (an auto-numbered primary key), `{int}`
    /// (a 64-bit integer) and `{real}` (a double), so both stores have the same tables and
    /// columns with the same meaning.
    pub fn ddl(self, sql: &str) -> String {
        let (id, int, real) = match self {
            Dialect::Sqlite => ("INTEGER PRIMARY KEY", "INTEGER", "REAL"),
            Dialect::Postgres => ("BIGSERIAL PRIMARY KEY", "BIGINT", "DOUBLE PRECISION"),
        };
        sql.replace("{id}", id)
            .replace("{int}", int)
            .replace("{real}", real)
    }
}

/// `?` placeholders numbered `$1`, `$2`… for PostgreSQL. The statements of this module hold no
/// `?` inside string literals, so every `?` is a placeholder.
pub fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

/// The first column of the first row as an integer, when there is one.
pub fn first_int(rows: &[Vec<Value>]) -> Option<i64> {
    rows.first()?.first()?.as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_in_order() {
        assert_eq!(
            numbered("INSERT INTO t (a, b) VALUES (?, ?) RETURNING id"),
            "INSERT INTO t (a, b) VALUES ($1, $2) RETURNING id"
        );
        assert_eq!(numbered("SELECT 1"), "SELECT 1");
    }

    #[test]
    fn both_dialects_get_their_own_types() {
        let sql = "CREATE TABLE t (id {id}, n {int}, v {real})";
        assert_eq!(
            Dialect::Sqlite.ddl(sql),
            "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, v REAL)"
        );
        assert_eq!(
            Dialect::Postgres.ddl(sql),
            "CREATE TABLE t (id BIGSERIAL PRIMARY KEY, n BIGINT, v DOUBLE PRECISION)"
        );
    }
}
