//! What can go wrong with the history store, typed, so a caller can tell a database that
//! refused a statement from a store that cannot be used at all or a result that cannot be
//! stored, and each says itself in words that name what is wrong.

/// Why the history store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The database (SQLite or PostgreSQL) refused a statement, a transaction or a connection:
    /// its driver's words.
    #[error("{0}")]
    Database(String),
    /// The store cannot be used as it is (a directory, read-only, another program's database,
    /// written by a newer rigor, not a PostgreSQL URL, a server that does not answer).
    #[error("{0}")]
    Unusable(String),
    /// A result that cannot be stored as it is: a field rigor never writes so.
    #[error("{0}")]
    Invalid(String),
    /// A text that should be a date and is not.
    #[error("`{0}` is not a date: expected YYYY-MM-DD or RFC 3339 (2026-11-01T12:00:00Z)")]
    NotADate(String),
    /// Another error, said of the store named `store`.
    #[error("{store}: {source}")]
    In {
        store: String,
        #[source]
        source: Box<HistoryError>,
    },
}

impl HistoryError {
    /// A driver's error, in its own words.
    pub fn database(e: impl std::fmt::Display) -> HistoryError {
        HistoryError::Database(e.to_string())
    }

    /// The error said about the store `name`, naming it once: unchanged when it already names
    /// it.
    pub fn in_store(self, name: &str) -> HistoryError {
        if self.to_string().contains(name) {
            self
        } else {
            HistoryError::In {
                store: name.to_string(),
                source: Box::new(self),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_is_named_once() {
        let e = HistoryError::database("disk I/O error").in_store("h.db");
        assert_eq!(e.to_string(), "h.db: disk I/O error");
        assert!(matches!(e, HistoryError::In { .. }));
        let again = e.in_store("h.db");
        assert_eq!(again.to_string(), "h.db: disk I/O error");
        let named = HistoryError::Unusable("h.db is a directory".into()).in_store("h.db");
        assert!(matches!(named, HistoryError::Unusable(_)));
        assert_eq!(
            HistoryError::NotADate("soon".into()).to_string(),
            "`soon` is not a date: expected YYYY-MM-DD or RFC 3339 (2026-11-01T12:00:00Z)"
        );
    }
}
