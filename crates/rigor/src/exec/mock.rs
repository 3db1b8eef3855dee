//! A scripted [`Executor`] for tests: builds and iterations return what the test says, on
//! in-memory values, without a process, a port or a file. What ran, and in which order, is kept
//! for the test to check.

use super::build::Built;
use super::executor::Executor;
use super::iteration_context::IterationContext;
use crate::config::AppJob;
use crate::result::{Iteration, RowKey, Warning, WarningKind};
use std::path::Path;

/// The iteration a test scripts for a row's iteration `index`.
pub type Script = Box<dyn FnMut(&RowKey, usize) -> Iteration>;

/// One iteration the mock ran: its row, index, position in the run's order and log file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ran {
    pub key: RowKey,
    pub index: usize,
    pub sequence: usize,
    pub log: std::path::PathBuf,
}

/// Runs nothing: returns scripted iterations and fails the builds it is told to fail.
pub struct MockExecutor {
    script: Script,
    /// Build commands whose build fails.
    failing_builds: Vec<String>,
    /// Build commands in the order they were built (`-` for a job without one).
    pub built: Vec<String>,
    pub ran: Vec<Ran>,
}

impl MockExecutor {
    /// Every iteration comes from `script`; every build succeeds.
    pub fn new(script: impl FnMut(&RowKey, usize) -> Iteration + 'static) -> Self {
        MockExecutor {
            script: Box::new(script),
            failing_builds: Vec::new(),
            built: Vec::new(),
            ran: Vec::new(),
        }
    }

    /// The build with this command fails.
    pub fn failing_build(mut self, command: &str) -> Self {
        self.failing_builds.push(command.to_string());
        self
    }

    /// The rows' variants in the order their iterations ran.
    pub fn variant_order(&self) -> Vec<String> {
        self.ran
            .iter()
            .map(|r| r.key.variant.clone().unwrap_or_default())
            .collect()
    }
}

impl Executor for MockExecutor {
    fn build(&mut self, app: &AppJob, _log: &Path, _snapshots: &Path) -> anyhow::Result<Built> {
        let command = app.build.clone().unwrap_or_else(|| "-".into());
        self.built.push(command.clone());
        if self.failing_builds.contains(&command) {
            anyhow::bail!("build of `{}` failed: {command}", app.name);
        }
        Ok(Built::default())
    }

    fn iteration(&mut self, ctx: &IterationContext) -> Iteration {
        let mut it = (self.script)(ctx.key, ctx.index);
        it.index = ctx.index;
        it.sequence = ctx.sequence;
        self.ran.push(Ran {
            key: ctx.key.clone(),
            index: ctx.index,
            sequence: ctx.sequence,
            log: ctx.log.clone(),
        });
        it
    }
}

/// An iteration whose application started (in 100 ms) and measured `values`.
pub fn measured(values: &[(&str, f64)]) -> Iteration {
    let mut it = Iteration::new(0, 0);
    it.measurements.insert("app.start_time".into(), 100.0);
    for (id, v) in values {
        it.measurements.insert(id.to_string(), *v);
    }
    it
}

/// An iteration whose application never started.
pub fn failed_to_start(why: &str) -> Iteration {
    let mut it = Iteration::new(0, 0);
    it.error = Some(why.to_string());
    it
}

/// An iteration whose application started and then failed (under load, say).
pub fn failed_after_start(why: &str) -> Iteration {
    let mut it = measured(&[]);
    it.error = Some(why.to_string());
    it
}

/// `it` with a warning of `kind`.
pub fn warned(mut it: Iteration, kind: &str) -> Iteration {
    it.warnings.push(Warning::new(
        WarningKind::from_code(kind),
        "scripted warning",
        "none: a test said so",
    ));
    it
}
