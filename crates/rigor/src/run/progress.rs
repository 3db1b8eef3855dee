//! The live display: phase, row, iteration and live RPS on a terminal; plain lines elsewhere.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// One bar for the whole run; messages printed through it do not tear the bar.
pub struct Progress {
    bar: ProgressBar,
    tty: bool,
}

impl Progress {
    pub fn new(total_iterations: u64) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = ProgressBar::with_draw_target(
            Some(total_iterations),
            if tty {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{pos}/{len}] {elapsed_precise} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        if tty {
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Progress { bar, tty }
    }

    /// Adds iterations to the total (for --until-conclusive).
    pub fn grow(&self, by: u64) {
        self.bar.inc_length(by);
    }

    /// What is happening now (`row 2/3 · iteration 1/3 · measuring · 123,456 rps`).
    pub fn status(&self, text: String) {
        self.bar.set_message(text);
    }

    /// A line that stays: printed above the bar on a terminal, to stderr otherwise.
    pub fn note(&self, text: &str) {
        if self.tty {
            self.bar.println(text);
        } else {
            super::console::err(text);
        }
    }

    /// One iteration finished.
    pub fn advance(&self) {
        self.bar.inc(1);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
