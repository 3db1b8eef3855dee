//! Errors that stop a run before it measures anything; errors during a run are counted instead.

use std::net::SocketAddr;

/// Why a run or a probe could not be done; every message names the URL or address.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("invalid URL `{url}`: {reason}")]
    InvalidUrl { url: String, reason: String },
    #[error("unsupported URL `{url}`: {reason}")]
    UnsupportedScheme { url: String, reason: String },
    #[error("cannot resolve host `{host}` of `{url}`: {source}")]
    Resolve {
        url: String,
        host: String,
        source: std::io::Error,
    },
    #[error("cannot connect to {addr} (from `{url}`): {source}")]
    Connect {
        url: String,
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// The TLS handshake failed: the certificate was refused, no protocol was agreed, or the
    /// server does not speak TLS.
    #[error("TLS handshake with `{url}` failed: {reason}")]
    Tls { url: String, reason: String },
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("invalid load settings: {0}")]
    InvalidSpec(String),
    #[error("I/O error talking to `{url}`: {source}")]
    Io { url: String, source: std::io::Error },
    #[error("`{url}` did not answer within {timeout_ms} ms")]
    Timeout { url: String, timeout_ms: u64 },
    #[error("`{url}` sent an invalid HTTP response: {reason}")]
    Protocol { url: String, reason: String },
    /// The connection was closed before a single byte of an answer: a front (a forwarder, a
    /// proxy) that accepts but cannot reach its server, or a server that drops the request.
    #[error("`{url}` closed the connection before answering")]
    Closed { url: String },
    #[error("{0}")]
    Resources(String),
    /// The run was cancelled before it could start measuring (e.g. Ctrl-C while connecting).
    #[error("interrupted before the load started")]
    Interrupted,
}
