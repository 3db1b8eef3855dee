//! rigor's configuration layer, a library the binary drives: `rigor.toml` read and resolved into
//! rows of jobs ([`config`]), the external load tools' flags and output parsers ([`tools`]), the
//! figures a command job reports about itself ([`selfreport`]), runtime metrics scraped from the
//! application ([`metrics`]), practical thresholds ([`threshold`]) and the git worktrees of `ref`
//! variants ([`git`]). It is a crate of its own so the compiler keeps it apart from the command
//! line, the databases and the reports: it depends on the model and the analysis crates only, and
//! what reads it (options, exec, bisect) cannot be imported back.

pub mod config;
pub mod git;
pub mod metrics;
pub mod paths;
pub mod requests;
pub mod selfreport;
pub mod threshold;
pub mod tools;
