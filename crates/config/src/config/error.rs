//! The error of a single value of `rigor.toml` or of a flag sharing its checks.

/// Why one value (a header, a CPU list, a variable, a host, a selector, a ref) was refused: the
/// message is what the problem list or the flag's error says after naming the file, line and key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValueError(pub String);

impl From<String> for ValueError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ValueError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// The message alone, for the callers that still report errors as text.
impl From<ValueError> for String {
    fn from(e: ValueError) -> String {
        e.0
    }
}
