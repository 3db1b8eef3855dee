//! The live display: phase, row, iteration and live RPS on a terminal; plain lines elsewhere.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// What an iteration's live line says of its warnings: their kinds, each once, on the same
/// line (` · warnings: foreign_cpu, steal`), so an iteration takes one line of stderr however
/// busy the machine; the report says each in full, once per row.
pub fn warning_kinds(warnings: &[crate::result::Warning]) -> String {
    let mut kinds: Vec<String> = Vec::new();
    for w in warnings {
        let k = w.kind.to_string();
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    match kinds.len() {
        0 => String::new(),
        1 => format!(" · warning: {}", kinds[0]),
        _ => format!(" · warnings: {}", kinds.join(", ")),
    }
}

/// One bar for the whole run; messages printed through it do not tear the bar.
pub struct Progress {
    bar: ProgressBar,
    tty: bool,
}

impl Progress {
    /// A bar on stderr when it is a terminal, plain lines otherwise.
    pub fn new(total_iterations: u64) -> Self {
        Self::with(total_iterations, std::io::stderr().is_terminal())
    }

    /// Shows nothing and prints nothing: for runs driven by tests.
    #[cfg(test)]
    pub fn silent(total_iterations: u64) -> Self {
        Progress {
            bar: ProgressBar::with_draw_target(
                Some(total_iterations),
                ProgressDrawTarget::hidden(),
            ),
            tty: true,
        }
    }

    fn with(total_iterations: u64, tty: bool) -> Self {
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
            crate::console::err(text);
        }
    }

    /// One iteration finished.
    pub fn advance(&self) {
        self.bar.inc(1);
    }

    /// The iterations finished or skipped so far, and the total.
    #[cfg(test)]
    pub fn position(&self) -> (u64, Option<u64>) {
        (self.bar.position(), self.bar.length())
    }

    /// The run's iterations are over: the bar goes away.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::warning_kinds;
    use crate::result::{Warning, WarningKind};

    #[test]
    fn an_iterations_warnings_are_named_once_on_its_line() {
        assert_eq!(warning_kinds(&[]), "");
        let ws = [
            Warning::of(WarningKind::ForeignCpu, "61% of the machine"),
            Warning::of(WarningKind::CpuPressure, "waited 90%"),
            Warning::of(WarningKind::ForeignCpu, "again"),
        ];
        let line = warning_kinds(&ws);
        assert_eq!(line, " · warnings: foreign_cpu, cpu_pressure");
        assert!(!line.contains('\n'));
        assert_eq!(warning_kinds(&ws[1..2]), " · warning: cpu_pressure");
    }
}
