//! The integration tests of this crate, one binary.

mod record;
