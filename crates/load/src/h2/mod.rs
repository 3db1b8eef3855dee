//! HTTP/2 for the engine: h2 over TLS (chosen by ALPN) and cleartext h2c by prior knowledge.
//! Many concurrent streams share one connection; each connection's [`Session`] frames the
//! requests, reads the responses and keeps flow control going both ways, while the worker keeps
//! its usual accounting (every stream is one request in flight).

mod check;
mod frame;
mod hpack;
mod request;
mod session;
mod tally;

pub(crate) use check::check_h2c;
pub(crate) use frame::error_name;
pub(crate) use request::H2Request;
pub(crate) use session::{Event, Session};
pub use tally::H2Report;
pub(crate) use tally::{merge_reports, H2Tally};

/// The ALPN protocol id of HTTP/2 over TLS.
pub(crate) const ALPN_H2: &[u8] = b"h2";

#[cfg(test)]
mod tests;
