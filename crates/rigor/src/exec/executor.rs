//! The seam between deciding what runs and running it. The runner decides which build, which
//! row and which iteration come next and records what happened; an [`Executor`] does the work
//! that touches processes. [`LocalExecutor`] runs everything from this machine (an application
//! with a host of its own through that host's agent); a test's scripted executor plugs in at the
//! same place.

use super::build::{self, Built};
use super::iteration;
use super::iteration_context::IterationContext;
use super::progress::Progress;
use crate::config::AppJob;
use crate::result::Iteration;
use std::path::Path;

/// Runs builds and iterations.
pub trait Executor {
    /// Runs one distinct build of `app`: its output goes to `log`, copies of what it produced
    /// go under `snapshots`. The error is the message for people.
    fn build(&mut self, app: &AppJob, log: &Path, snapshots: &Path) -> anyhow::Result<Built>;

    /// After the last build, before the first iteration: whatever the builds left behind is
    /// cleaned up, and anything worth saying is said through `progress`.
    fn builds_done(&mut self, _progress: &Progress) {}

    /// Runs one iteration; a fault ends it with `error` set, never with a panic.
    fn iteration(&mut self, ctx: &IterationContext) -> Iteration;
}

/// Builds and iterations on this machine, in fresh processes.
pub struct LocalExecutor;

impl Executor for LocalExecutor {
    fn build(&mut self, app: &AppJob, log: &Path, snapshots: &Path) -> anyhow::Result<Built> {
        match &app.host {
            Some(host) => super::app_remote::build(app, host, log, snapshots),
            None => build::build(app, log, snapshots),
        }
    }

    fn builds_done(&mut self, progress: &Progress) {
        let (left, _) = super::reaper::sweep(std::time::Duration::from_millis(300));
        if !left.is_empty() {
            progress.note(&format!(
                "note: the build left processes running; killed {}",
                super::procs::names(&left)
            ));
        }
    }

    fn iteration(&mut self, ctx: &IterationContext) -> Iteration {
        iteration::run_iteration(ctx)
    }
}
