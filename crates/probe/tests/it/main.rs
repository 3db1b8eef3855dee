//! The integration tests of this crate, one binary: each module was a test file of its own;
//! one binary links the crate once instead of once per file.

mod cgroup;
mod common;
mod interference;
mod machine;
mod process;
