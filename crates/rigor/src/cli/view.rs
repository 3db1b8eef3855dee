//! The report flags `rigor run` and `rigor compare` share: which pivot to show, whether to
//! draw sparklines and which figures the headline shows.

use crate::report::View;
use clap::Args;

/// `--pivot`, `--pivot-by`, `--no-chart`, `--key`, `--verbose`, `--all-measurements`.
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
    /// Key figures of the headline, one line per compared pair at the top and bottom
    /// (comma-separated measurement ids). Default: the primary, then requests/s, p99, RSS and
    /// app CPU for a load job, or a command's own figures and its elapsed time.
    #[arg(long = "key", value_delimiter = ',', value_name = "ID,…")]
    pub key: Option<Vec<String>>,
    /// The whole environment table and the rows' timelines on the terminal (a summary line and
    /// no timelines otherwise; JSON, Markdown and HTML always hold both).
    #[arg(long = "verbose")]
    pub verbose: bool,
    /// Every measurement on the terminal: a line per measurement and a column per row, every
    /// comparison and note, and those zero on every side or that cannot apply (TLS errors on
    /// http://). Otherwise the key figures, a line per row, and a line counting the rest.
    #[arg(long = "all-measurements")]
    pub all_measurements: bool,
}

impl ViewArgs {
    /// The report view these flags ask for; an empty `--pivot` or `--pivot-by` is an error.
    pub fn view(&self) -> anyhow::Result<View> {
        for (flag, value) in [("--pivot", &self.pivot), ("--pivot-by", &self.pivot_by)] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                anyhow::bail!("{flag}: an empty name");
            }
        }
        let key: Vec<String> = self
            .key
            .iter()
            .flatten()
            .map(|k| k.trim().to_string())
            .collect();
        for (i, id) in key.iter().enumerate() {
            if id.is_empty() {
                anyhow::bail!("--key: an empty measurement id in the list");
            }
            if key[..i].contains(id) {
                anyhow::bail!("--key: `{id}` is named twice");
            }
        }
        Ok(View {
            pivot: self.pivot.as_ref().map(|s| s.trim().to_string()),
            pivot_by: self.pivot_by.as_ref().map(|s| s.trim().to_string()),
            charts: !self.no_chart,
            key,
            verbose: self.verbose,
            all_measurements: self.all_measurements,
            ..View::default()
        })
    }
}
