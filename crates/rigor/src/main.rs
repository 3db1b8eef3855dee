//! rigor: build an application, start it fresh, wait until ready, drive HTTP load, measure the
//! application and the load side by side, repeat, and say with statistics what changed.

mod cli;
mod clock;
mod cmd_compare;
mod cmd_load;
mod comparison;
mod config;
mod declarations;
mod duration;
mod exit;
mod guards;
mod interrupt;
mod measurements;
mod options;
mod report;
mod result;
mod run;
mod summarize;

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

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
