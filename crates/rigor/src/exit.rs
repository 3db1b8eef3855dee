//! rigor's exit codes: a stable contract scripts and CI gates branch on, so they are one type
//! rather than integers scattered through the commands.

use crate::analysis::gate::Gate;
use std::process::ExitCode;

/// How a rigor command ended, as its process exit code says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Everything ran and nothing gated the result.
    Success,
    /// Something failed: a build, an application, an iteration, writing a result.
    Failed,
    /// The command line or the config is invalid; nothing was run.
    Usage,
    /// `--fail-on-regression`: a gated measurement regressed.
    Regression,
    /// `--strict`: warnings (of the kinds it names) were raised.
    Strict,
    /// The statistics could not decide: `rigor bisect` found no culprit it can stand behind, or
    /// `--fail-on-inconclusive` met an inconclusive verdict.
    Inconclusive,
    /// A `[[limits]]` / `--limit` bound on an absolute value was not met.
    Limit,
    /// Ctrl-C (or SIGTERM) stopped `rigor load` before its window ended.
    Interrupted,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Regression => 3,
            Exit::Strict => 4,
            Exit::Inconclusive => 5,
            Exit::Limit => 6,
            Exit::Interrupted => 130,
        }
    }
}

/// The code of each gate decision (exit 3 a regression, 4 `--strict`, 5 inconclusive, 6 a limit).
impl From<Gate> for Exit {
    fn from(gate: Gate) -> Exit {
        match gate {
            Gate::Success => Exit::Success,
            Gate::Failed => Exit::Failed,
            Gate::Regression => Exit::Regression,
            Gate::Strict => Exit::Strict,
            Gate::Limit => Exit::Limit,
            Gate::Inconclusive => Exit::Inconclusive,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

#[cfg(test)]
mod tests {
    use super::Exit;

    #[test]
    fn codes_are_the_documented_ones() {
        let all = [
            (Exit::Success, 0),
            (Exit::Failed, 1),
            (Exit::Usage, 2),
            (Exit::Regression, 3),
            (Exit::Strict, 4),
            (Exit::Inconclusive, 5),
            (Exit::Limit, 6),
            (Exit::Interrupted, 130),
        ];
        for (e, code) in all {
            assert_eq!(e.code(), code, "{e:?}");
        }
    }
}
