//! The report flags `rigor run` and `rigor compare` share: which pivot to show and whether to
//! draw sparklines.

use crate::report::View;
use clap::Args;

/// `--pivot`, `--pivot-by`, `--no-chart`, `--verbose`, `--all-measurements`.
#[derive(Debug, Clone, Default, Args)]
pub struct ViewArgs {
    /// Pivot table of this measurement: a line per swept value, a column per variant (per file
    /// for rigor compare). Default: a command job's one self-reported figure.
    #[arg(long = "pivot", value_name = "MEASUREMENT")]
    pub pivot: Option<String>,
    /// The variable whose values are the pivot's lines. Default: the one with the most values.
    #[arg(long = "pivot-by", value_name = "VARIABLE")]
    pub pivot_by: Option<String>,
    /// No sparklines (sweep trends, timelines) in the terminal and Markdown reports.
    #[arg(long = "no-chart")]
    pub no_chart: bool,
    /// The whole environment table on the terminal (a summary line otherwise; JSON, Markdown and
    /// HTML always hold the whole table).
    #[arg(long = "verbose")]
    pub verbose: bool,
    /// Show measurements that are zero on every side or cannot apply to the run (TLS errors on
    /// http://, HTTP/2 stream errors on HTTP/1.1); they are left out otherwise.
    #[arg(long = "all-measurements")]
    pub all_measurements: bool,
}

impl ViewArgs {
    /// The report view these flags ask for; an empty `--pivot` or `--pivot-by` is an error.
    pub fn view(&self) -> Result<View, String> {
        for (flag, value) in [("--pivot", &self.pivot), ("--pivot-by", &self.pivot_by)] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return Err(format!("{flag}: an empty name"));
            }
        }
        Ok(View {
            pivot: self.pivot.as_ref().map(|s| s.trim().to_string()),
            pivot_by: self.pivot_by.as_ref().map(|s| s.trim().to_string()),
            charts: !self.no_chart,
            verbose: self.verbose,
            all_measurements: self.all_measurements,
            ..View::default()
        })
    }
}
