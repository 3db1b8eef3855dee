//! rigor: build an application, start it fresh, wait until ready, drive HTTP load, measure the
//! application and the load side by side, repeat, and say with statistics what changed.
//!
//! One pipeline, each stage handing the next a checked value: `cli` (clap) → `options` →
//! `config` → `plan` → `exec` (behind the `Executor` trait) → `analysis` → `report`, with
//! `result` the record every stage fills and `failure`/`exit` how a command ends.

mod address_space;
mod bench;
mod bisect;
mod capacity_run;
mod cli;
mod clock;
mod console;
mod crosscheck;
#[cfg(test)]
mod docs_tests;
mod exec;
mod exit;
mod failure;
mod guards;
mod history;
mod interrupt;
mod live_rate;
mod load_output;
mod load_run;
mod load_tool;
mod options;
mod out_of_memory;
mod plan;
mod step_summary;

// The model and the config live in their own crates; their modules keep their `crate::` paths
// here meanwhile.
use rigor_analysis as analysis;
use rigor_config::{config, git, metrics, selfreport, threshold, tools};
use rigor_model::{declarations, duration, measurements, result, series};
use rigor_report as report;

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    rigor_config::git::set_hooks(rigor_config::git::Hooks {
        register_group: interrupt::register_group,
        unregister_group: interrupt::unregister_group,
    });
    let cli = Cli::parse();
    let works = matches!(
        cli.command,
        Command::Load(_) | Command::Run(_) | Command::Bench(_) | Command::Bisect(_)
    );
    if works {
        if let Err(e) = address_space::check() {
            console::err(&format!("error: {e}"));
            return exit::Exit::Failed.into();
        }
    }
    let outcome: Result<exit::Exit, failure::Failure> = match &cli.command {
        Command::Load(a) => cli::load::execute(a),
        Command::Run(a) => options::run::RunOptions::from_args(a).and_then(|o| exec::execute(&o)),
        Command::Bench(a) => bench::execute(a),
        Command::Compare(a) => cli::compare::execute(a),
        Command::Help(a) => cli::help::execute(a),
        Command::History(a) => cli::history::execute(a),
        Command::Bisect(a) => bisect::execute(a),
        Command::Agent(a) => cli::agent::execute(a),
        Command::Init(a) => cli::init::execute(a),
    };
    match outcome {
        Ok(exit) => exit.into(),
        Err(failure) => {
            console::err(&format!("error: {}", failure.text()));
            failure.exit().into()
        }
    }
}
