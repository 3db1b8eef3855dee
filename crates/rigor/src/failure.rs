//! One failure type for every command: what went wrong and which exit code it means. Commands
//! return it instead of printing, so `main` prints each failure exactly once.

use crate::exit::Exit;
use std::fmt;

/// Why a command could not do its work.
#[derive(Debug)]
pub enum Failure {
    /// The command line or the config is invalid (exit 2); nothing was run. The text may hold
    /// several lines, one problem each.
    Usage(String),
    /// Something failed while working (exit 1).
    Failed(anyhow::Error),
}

impl Failure {
    /// A usage failure from anything printable.
    pub fn usage(text: impl fmt::Display) -> Self {
        Failure::Usage(text.to_string())
    }

    /// The exit code this failure ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            Failure::Usage(_) => Exit::Usage,
            Failure::Failed(_) => Exit::Failed,
        }
    }

    /// The message for people: the error and its causes, each cause added only when the text
    /// so far does not already say it (errors that format their source would otherwise print
    /// it twice).
    pub fn text(&self) -> String {
        match self {
            Failure::Usage(text) => text.clone(),
            Failure::Failed(e) => {
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
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Failed(e)
    }
}

/// A saved result that could not be read fails the command (exit 1), as any failure does.
impl From<crate::analysis::error::LoadError> for Failure {
    fn from(e: crate::analysis::error::LoadError) -> Self {
        Failure::Failed(e.into())
    }
}

/// Saved results that cannot be compared fail the command (exit 1).
impl From<crate::analysis::error::CompareError> for Failure {
    fn from(e: crate::analysis::error::CompareError) -> Self {
        Failure::Failed(e.into())
    }
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
        let text = Failure::from(e).text();
        assert_eq!(
            text.matches("Name or service not known").count(),
            1,
            "{text}"
        );
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(Failure::from(e).text(), "outer: inner");
    }

    #[test]
    fn usage_failures_exit_2_and_others_1() {
        assert_eq!(Failure::usage("bad flag").exit(), Exit::Usage);
        assert_eq!(Failure::from(anyhow::anyhow!("x")).exit(), Exit::Failed);
    }
}
