//! External load tools as a load job's client: `tool = "wrk" | "wrk2" | "bombardier" | "h2load"
//! | "oha"`. Users trust these tools' numbers; rigor runs one as a child process in place of its
//! own engine, maps the load job's keys onto its flags ([`argv`]), and reads its output back into
//! the same `load.*` ids the engine reports (one parser per tool), leaving absent what the tool
//! does not report. Running it (pinning, CPU, stopping) is `exec::tool_child`'s job.

mod argv;
mod bombardier;
use rigor_model::tool::figures;
mod h2load;
pub mod merge;
mod oha;
pub use rigor_model::tool::report;
#[cfg(test)]
mod report_tests;
mod units;
mod wrk;
mod wrk2;

pub use argv::{check, Invocation, OVERRUN_GRACE};
pub use figures::{whole_count, ToolFigures};
pub use oha::aborted_at_deadline as oha_aborted;

/// A load tool rigor knows how to drive and read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Wrk,
    Wrk2,
    Bombardier,
    H2load,
    Oha,
}

impl Tool {
    /// Every tool, in the order the docs list them.
    pub const ALL: [Tool; 5] = [
        Tool::Wrk,
        Tool::Wrk2,
        Tool::Bombardier,
        Tool::H2load,
        Tool::Oha,
    ];

    /// The name written in `tool = "…"` and `--tool`.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Wrk => "wrk",
            Tool::Wrk2 => "wrk2",
            Tool::Bombardier => "bombardier",
            Tool::H2load => "h2load",
            Tool::Oha => "oha",
        }
    }

    /// The tool named `name`; the error lists the ones rigor knows.
    pub fn from_name(name: &str) -> Result<Tool, ToolError> {
        Tool::ALL
            .into_iter()
            .find(|t| t.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown load tool `{name}` (known: {})",
                    Tool::ALL.map(Tool::name).join(", ")
                )
                .into()
            })
    }

    /// The program looked for on `PATH`.
    pub fn program(self) -> &'static str {
        self.name()
    }

    /// The flag that makes the program print its version.
    pub fn version_flag(self) -> &'static str {
        match self {
            Tool::Wrk | Tool::Wrk2 => "-v",
            Tool::Bombardier | Tool::H2load | Tool::Oha => "--version",
        }
    }

    /// How to install it, for the error when it is missing.
    pub fn install_hint(self) -> &'static str {
        match self {
            Tool::Wrk => "Debian/Ubuntu: apt-get install wrk",
            Tool::Wrk2 => "build it from giltene/wrk2 and put the binary on PATH as `wrk2`",
            Tool::Bombardier => {
                "go install github.com/codesenberg/bombardier@latest; Debian's `bombardier` \
                 package is a game, not this tool"
            }
            Tool::H2load => "Debian/Ubuntu: apt-get install nghttp2-client",
            Tool::Oha => "cargo install oha",
        }
    }

    /// Why the program found under the tool's name is not the tool, judged by the first line
    /// it printed for its version flag: Debian's `bombardier` package is a terminal game (the
    /// GNU Bombing utility) that never exits on its own. `None` when it is the tool (or rigor
    /// cannot tell for this tool).
    pub fn impostor(self, version: Option<&str>) -> Option<String> {
        if self != Tool::Bombardier {
            return None;
        }
        let said = version.unwrap_or_default();
        if said.starts_with("bombardier version") {
            return None;
        }
        Some(format!(
            "`bombardier` on PATH is not the HTTP benchmarking tool: for --version it printed {} \
             instead of `bombardier version …` ({})",
            if said.is_empty() {
                "nothing in time".to_string()
            } else {
                format!("`{}`", said.chars().take(80).collect::<String>())
            },
            self.install_hint()
        ))
    }

    /// Whether `threads` is passed to the tool (bombardier sizes its own Go runtime).
    pub fn takes_threads(self) -> bool {
        self != Tool::Bombardier
    }

    /// Whether the tool warms up on its own (h2load's `--warm-up-time`); the others get a
    /// separate, unmeasured run first.
    pub fn warms_up_itself(self) -> bool {
        self == Tool::H2load
    }

    /// Reads the tool's output (stdout) into figures; the error says what is missing.
    pub fn parse(self, output: &str) -> Result<ToolFigures, ToolError> {
        match self {
            Tool::Wrk => wrk::parse(output, "wrk"),
            Tool::Wrk2 => wrk2::parse(output),
            Tool::Bombardier => bombardier::parse(output),
            Tool::H2load => h2load::parse(output),
            Tool::Oha => oha::parse(output),
        }
    }
}

/// `tool` and `args` of a load job: which tool drives the load, and the extra options the user
/// gives it (placed after rigor's own flags, before the URL).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub tool: Tool,
    pub args: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_name_lists_the_known_ones() {
        for t in Tool::ALL {
            assert_eq!(Tool::from_name(t.name()), Ok(t));
        }
        let e = Tool::from_name("ab").unwrap_err();
        assert_eq!(
            e,
            ("unknown load tool `ab` (known: wrk, wrk2, bombardier, h2load, oha)").into()
        );
    }

    #[test]
    fn a_program_that_is_not_bombardier_is_named_as_such() {
        let b = Tool::Bombardier;
        assert_eq!(
            b.impostor(Some("bombardier version v1.2.6 linux/amd64")),
            None
        );
        let e = b.impostor(None).unwrap();
        assert!(e.contains("printed nothing in time"), "{e}");
        assert!(e.contains("package is a game"), "{e}");
        assert!(b.impostor(Some("\u{1b}[?1049h")).is_some());
        assert_eq!(Tool::Wrk.impostor(None), None);
    }
}

/// Why a tool name or a tool's output was not understood: the message names the tool and what is
/// missing, as the user sees it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// The message alone, for the callers that still report errors as text.
impl From<ToolError> for String {
    fn from(e: ToolError) -> String {
        e.0
    }
}
