//! `rigor bench`: its flags. The work (a run of `rigor run` made from them) lives in `bench/`.

use clap::Args;
use std::path::PathBuf;

/// Flags of `rigor bench` (a stable contract: scripts depend on their names).
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// Commands to compare, each run by `sh -c` in this folder; the first is the baseline.
    #[arg(required = true, value_name = "COMMAND")]
    pub commands: Vec<String>,
    /// Name of a command in the tables and verdicts, in the order of the commands (repeatable;
    /// default A, B, C…).
    #[arg(short = 'n', long = "name", value_name = "NAME")]
    pub names: Vec<String>,
    /// Iterations per command, each a fresh process [default: 10; 6 with --url].
    #[arg(short = 'i', long = "iterations")]
    pub iterations: Option<usize>,
    /// Keep adding rounds until the primary measurement is conclusive, up to MAX per command
    /// [default MAX: 100]; written `--until-conclusive` or `--until-conclusive=MAX`.
    #[arg(long = "until-conclusive", value_name = "MAX", num_args = 0..=1,
          require_equals = true, default_missing_value = "100")]
    pub until_conclusive: Option<usize>,
    /// Run even when the iterations can never reach a verdict (fewer than 4 per command);
    /// without it such a bench is refused before anything runs, as `rigor run` refuses it.
    #[arg(long = "allow-inconclusive")]
    pub allow_inconclusive: bool,
    /// Run each command N times before measuring, unrecorded (warms the page cache).
    #[arg(long = "warmup", value_name = "N", default_value_t = 0)]
    pub warmup: usize,
    /// Treat the commands as servers listening at URL: start each fresh, wait until the URL's
    /// port accepts connections, drive the built-in load at it, compare requests/s and latency.
    #[arg(long = "url", value_name = "URL")]
    pub url: Option<String>,
    /// With --url: open connections in total.
    #[arg(
        short = 'c',
        long = "connections",
        default_value_t = 16,
        requires = "url"
    )]
    pub connections: usize,
    /// With --url: measured duration of the load on each start.
    #[arg(short = 'd', long = "duration", default_value = "2s", requires = "url")]
    pub duration: String,
    /// The measurement verdicts and --until-conclusive focus on. Default: app.elapsed, with
    /// --url load.rps.
    #[arg(long = "primary", value_name = "MEASUREMENT")]
    pub primary: Option<String>,
    /// Practical threshold below which a change is "no change".
    #[arg(long = "threshold", default_value = "2%", value_name = "PCT",
          value_parser = crate::threshold::parse_threshold)]
    pub threshold: f64,
    /// Exit 3 when the primary measurement regressed.
    #[arg(long = "fail-on-regression")]
    pub fail_on_regression: bool,
    /// Turn warnings into a failure (exit 4): every kind, or with --strict=KIND,… only those,
    /// as for `rigor run`.
    #[arg(long = "strict", value_name = "KIND", num_args = 0..=1, require_equals = true,
          value_delimiter = ',', default_missing_value = "all")]
    pub strict: Option<Vec<String>>,
    /// Seed of the shuffled interleaving (recorded in the result to replay it).
    #[arg(long = "seed")]
    pub seed: Option<u64>,
    /// Folder for logs, the generated config (bench.toml) and, unless given elsewhere, results.
    #[arg(long = "out-dir", default_value = "rigor-results")]
    pub out_dir: PathBuf,
    /// The result as JSON (schema rigor.run.v1); default: OUT_DIR/<time>/result.json.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The report as GitHub markdown.
    #[arg(long = "markdown", value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// A standalone HTML page of the report.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Append the run to this history store (a SQLite file or postgres:// URL); by default a
    /// bench is not stored.
    #[arg(long = "store", value_name = "PATH|URL")]
    pub store: Option<String>,
}
