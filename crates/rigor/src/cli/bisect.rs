//! `rigor bisect`: its flags. The search itself lives in `bisect/`.
//! Bisecting over commits needs `--good` and `--bad`; over values, `--var` and the values.

use clap::Args;
use std::path::PathBuf;

/// Flags of `rigor bisect` (a stable contract: scripts depend on their names).
#[derive(Args, Debug, Clone)]
pub struct BisectArgs {
    /// A revision where the measurement is as it should be (a hash, tag, branch, `HEAD~8`);
    /// with `--var`, a value (default: the first).
    #[arg(long = "good", value_name = "REV")]
    pub good: Option<String>,
    /// A later revision where it changed; `good` must be on its first-parent history. With
    /// `--var`, a later value (default: the last).
    #[arg(long = "bad", value_name = "REV")]
    pub bad: Option<String>,
    /// Bisect over values of this config variable instead of commits (`{{NAME}}` in build,
    /// command and env), with `--values` or `--values-from`.
    #[arg(long = "var", value_name = "NAME")]
    pub var: Option<String>,
    /// The values of `--var`, oldest first: `V1,V2,…`.
    #[arg(
        long = "values",
        value_name = "V1,V2,…",
        value_delimiter = ',',
        conflicts_with = "values_from"
    )]
    pub values: Option<Vec<String>>,
    /// The values of `--var` from a file, one a line, oldest first (blank lines and `#`
    /// comments skipped).
    #[arg(long = "values-from", value_name = "FILE")]
    pub values_from: Option<PathBuf>,
    /// The scenario to measure (one row: no matrix).
    #[arg(short = 's', long = "scenario")]
    pub scenario: String,
    /// The measurement that changed. Default: load.rps; a command scenario must name one.
    #[arg(short = 'm', long = "measurement", value_name = "ID")]
    pub measurement: Option<String>,
    /// Config file.
    #[arg(short = 'f', long = "file", default_value = "rigor.toml")]
    pub file: PathBuf,
    /// Iterations per commit and step; a step still undecided gets more rounds, up to 4× this.
    #[arg(short = 'i', long = "iterations", default_value_t = 6)]
    pub iterations: usize,
    /// Practical threshold: changes within ±this are "no change" (`2` or `2%`).
    #[arg(long = "threshold", default_value = "2%", value_name = "PCT",
          value_parser = crate::threshold::parse_threshold)]
    pub threshold: f64,
    /// Also write the bisection as JSON (`rigor.bisect.v1`).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Keep the worktrees rigor made for the commits (`.rigor/worktrees/SHA`, each built)
    /// after the bisection, instead of removing them.
    #[arg(long = "keep-worktrees")]
    pub keep_worktrees: bool,
    /// Folder for each step's result, logs and builds (in a `bisect-<time>` folder).
    #[arg(long = "out-dir", default_value = "rigor-results")]
    pub out_dir: PathBuf,
}
