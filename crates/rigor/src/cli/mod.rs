//! The command line: clap's structs, and the only place clap types exist. Each command's file
//! holds its flags and the wiring from them to the work: flags → `options` → the work → report.

pub mod agent;
pub mod bench;
pub mod bisect;
pub mod compare;
pub mod help;
pub mod history;
pub mod load;
pub mod run;
pub mod view;

use clap::{Parser, Subcommand};

/// Where the documentation is, under every `--help` page: the flags say what they do, the docs
/// say everything else.
pub const DOCS: &str = "\
Documentation (in the repository's docs/ folder):
  docs/cli.md      every command and flag, exit codes
  docs/config.md   every rigor.toml table and key (rigor help config)
  docs/results.md  the result JSON and every measurement id (rigor help results)
  docs/warnings.md every warning kind, its meaning and advice";

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
    /// Print the help of a command, or of a topic: config, results.
    Help(help::HelpArgs),
}
