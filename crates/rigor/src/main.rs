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
mod exit;
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
        Ok(exit) => exit.into(),
        Err(e) => {
            run::console::err(&format!("error: {}", error_text(&e)));
            exit::Exit::Failed.into()
        }
    }
}

/// The error and its causes, each cause added only when the text so far does not already say
/// it (errors that format their source would otherwise print it twice).
fn error_text(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::other("Name or service not known");
        let e = anyhow::Error::new(rigor_load::LoadError::Resolve {
            url: "http://x.invalid/".into(),
            host: "x.invalid".into(),
            source: io,
        });
        let text = error_text(&e);
        assert_eq!(
            text.matches("Name or service not known").count(),
            1,
            "{text}"
        );
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_text(&e), "outer: inner");
    }
}
