//! The integration tests of this crate, one binary: each module was a test file of its own;
//! one binary links the crate once instead of once per file.

mod common;
mod engine;
mod h2_servers;
mod http2;
mod io_paths;
mod limits;
mod mixes;
mod protocol;
mod sources;
mod timing;
mod tls;
