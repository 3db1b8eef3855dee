//! What an iteration's parts share: its context, and the application as the load phase
//! watches it (here or on its host).

use super::build::Built;
use super::progress::Progress;
use crate::config::RowPlan;
use rigor_probe::Mark;
use std::path::PathBuf;
use std::time::Duration;

/// What the iteration needs besides its row.
pub struct IterationContext<'a> {
    /// Which row this is an iteration of, for executors that need to name it (the local one
    /// runs from `row` alone).
    #[cfg_attr(not(test), allow(dead_code))]
    pub key: &'a crate::result::RowKey,
    pub row: &'a RowPlan,
    pub built: &'a Built,
    pub index: usize,
    pub sequence: usize,
    pub log: PathBuf,
    pub sample_interval: Duration,
    /// Drop the page cache before the app starts (`--drop-caches`).
    pub drop_caches: bool,
    /// How to take this iteration's CPU profile, when the run takes them.
    pub cpu_profile: Option<rigor_profile::Settings>,
    pub progress: &'a Progress,
    pub label: String,
}

impl IterationContext<'_> {
    /// Shows `phase` of this iteration on the progress line.
    pub fn status(&self, phase: &str) {
        self.progress.status(format!(
            "{} · iteration {} · {phase}",
            self.label,
            self.index + 1
        ))
    }
}

/// The application as the load phase watches it: a process here, or one on its host that
/// the agent there runs.
pub(super) trait Watched {
    /// How it exited, once it has on its own.
    fn exited(&mut self) -> Option<String>;
    /// Marks a window edge where it is sampled.
    fn mark(&mut self, mark: Mark);
    /// The end of its log, for error messages.
    fn log_tail(&self) -> String;
    /// When it was started, on this machine's monotonic clock (the series' zero).
    fn spawned_at(&self) -> std::time::Instant;
}
