//! The fault and resource knobs, one file each, kept out of the hot path's files.

pub(crate) mod error_rate;
pub(crate) mod hold;
pub mod process;
pub mod read_file;
pub mod shutdown;
pub(crate) mod stall;
