//! The command line: clap's structs, and the only place clap types exist.

pub mod run;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "rigor",
    version,
    about = "Application benchmarking you can trust: fresh processes, honest load, statistics that say whether a change is real.",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Drive HTTP load at a URL with the built-in engine (like wrk, wrk2 and oha).
    Load(crate::cmd_load::LoadArgs),
    /// Build, start fresh, load and measure the scenarios of a rigor.toml.
    Run(Box<run::RunArgs>),
    /// Compare saved results (rigor run --json) with confidence intervals and verdicts.
    Compare(crate::cmd_compare::CompareArgs),
}
