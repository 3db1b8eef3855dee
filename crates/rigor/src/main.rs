//! rigor: build an application, start it fresh, wait until ready, drive HTTP load, measure the
//! application and the load side by side, repeat, and say with statistics what changed.

mod clock;
mod cmd_compare;
mod cmd_load;
mod cmd_run;
mod comparison;
mod config;
mod declarations;
mod duration;
mod guards;
mod interrupt;
mod measurements;
mod report;
mod result;
mod run;
mod summarize;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "rigor",
    version,
    about = "Application benchmarking you can trust: fresh processes, honest load, statistics that say whether a change is real.",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Drive HTTP load at a URL with the built-in engine (like wrk, wrk2 and oha).
    Load(cmd_load::LoadArgs),
    /// Build, start fresh, load and measure the scenarios of a rigor.toml.
    Run(Box<cmd_run::RunArgs>),
    /// Compare saved results (rigor run --json) with confidence intervals and verdicts.
    Compare(cmd_compare::CompareArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Command::Load(a) => cmd_load::execute(a),
        Command::Run(a) => run::execute(a),
        Command::Compare(a) => cmd_compare::execute(a),
    };
    match outcome {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
