//! The command line: clap's structs, and the only place clap types exist. Each command's file
//! holds its flags and the wiring from them to the work: flags → `options` → the work → report.

pub mod agent;
pub mod bench;
pub mod bisect;
pub mod compare;
mod compare_profiles;
pub mod compare_publish;
pub mod help;
pub mod history;
pub mod init;
mod init_detect;
mod init_templates;
pub mod load;
pub mod run;
pub mod view;

use clap::{Parser, Subcommand};

/// Where the documentation is, under every `--help` page: the flags say what they do, the
/// references built into rigor say everything else (no repository needed).
pub const DOCS: &str = "\
References (built in, printed offline):
  rigor help cli       every command and flag, exit codes
  rigor help config    every rigor.toml table and key
  rigor help results   the result JSON and every measurement id
  rigor help warnings  every warning kind, its meaning and advice
Start a rigor.toml for the current folder with `rigor init`.";

#[derive(Parser, Debug)]
#[command(
    name = "rigor",
    version,
    about = "Application benchmarking you can trust: fresh processes, honest load, statistics that say whether a change is real.",
    propagate_version = true,
    disable_help_subcommand = true,
    after_help = DOCS
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Drive HTTP load at a URL with the built-in engine (like wrk, wrk2 and oha).
    #[command(after_help = DOCS)]
    Load(load::LoadArgs),
    /// Build, start fresh, load and measure the scenarios of a rigor.toml.
    #[command(after_help = DOCS)]
    Run(Box<run::RunArgs>),
    /// Compare commands without a config: each a fresh process per iteration, interleaved,
    /// measured and judged against the first (with --url, servers under the built-in load).
    #[command(after_help = DOCS)]
    Bench(bench::BenchArgs),
    /// Compare saved results (rigor run --json) with confidence intervals and verdicts.
    #[command(after_help = DOCS)]
    Compare(compare::CompareArgs),
    /// The history of stored runs: each series' run medians over time and its change points.
    #[command(after_help = DOCS)]
    History(history::HistoryArgs),
    /// Find the commit that changed a measurement: binary search between a good and a bad
    /// revision, each commit built in its own worktree and measured interleaved with both ends.
    #[command(after_help = DOCS)]
    Bisect(bisect::BisectArgs),
    /// Serve the load-agent protocol on stdin/stdout (started by rigor on a load host over
    /// ssh or another stdio transport).
    #[command(after_help = DOCS)]
    Agent(agent::AgentArgs),
    /// Write a commented rigor.toml for the project in the current folder (Cargo, Go, .NET,
    /// Node, Python or a Dockerfile): its release build, start command, readiness and load.
    #[command(after_help = DOCS)]
    Init(init::InitArgs),
    /// Print the help of a command, or a whole reference: cli, config, results, warnings.
    Help(help::HelpArgs),
}
