//! `rigor run`: its flags. `options::run` checks them; the work itself lives in `exec/`.

use clap::Args;
use std::path::PathBuf;

/// Flags of `rigor run` (a stable contract: scripts depend on their names).
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Config file.
    #[arg(short = 'f', long = "file", default_value = "rigor.toml")]
    pub file: PathBuf,
    /// Scenario(s) to run (comma-separated); default: every scenario, in declared order.
    #[arg(short = 's', long = "scenario", value_delimiter = ',')]
    pub scenarios: Vec<String>,
    /// Profile: where and how roles run.
    #[arg(short = 'p', long = "profile", default_value = "local")]
    pub profile: String,
    /// Iterations per row (default: the scenario's `iterations`, else 3).
    #[arg(short = 'i', long = "iterations")]
    pub iterations: Option<usize>,
    /// Exclude the LOW lowest and HIGH highest iterations of each row (by --exclude-order).
    #[arg(long = "exclude", value_name = "LOW:HIGH")]
    pub exclude: Option<String>,
    /// Measurement that orders iterations for --exclude.
    /// Default: the primary measurement.
    #[arg(long = "exclude-order", value_name = "MEASUREMENT")]
    pub exclude_order: Option<String>,
    /// Override a variable (highest precedence), e.g. --var port=6000.
    #[arg(long = "var", value_name = "K=V")]
    pub vars: Vec<String>,
    /// Variants to compare (comma-separated; the first is the baseline). Default: all declared.
    #[arg(long = "variants", value_delimiter = ',')]
    pub variants: Option<Vec<String>>,
    /// Run each row with the built-in engine and with this load tool (wrk, wrk2, bombardier,
    /// h2load, oha; options may follow: "h2load --h1"), interleaved as two variants, and say
    /// where they disagree
    #[arg(long = "cross-check", value_name = "TOOL")]
    pub cross_check: Option<String>,
    /// Seed of the shuffled interleaving of variants (recorded in the result to replay it).
    #[arg(long = "seed")]
    pub seed: Option<u64>,
    /// Keep adding iteration pairs until the primary measurement is conclusive or MAX per side.
    #[arg(long = "until-conclusive", value_name = "MAX")]
    pub until_conclusive: Option<usize>,
    /// Run variants even when their iterations (after --exclude) can never reach a verdict;
    /// by default such a run is refused before anything is built, naming the -i that can.
    #[arg(long = "allow-inconclusive")]
    pub allow_inconclusive: bool,
    /// The measurement verdicts and --until-conclusive focus on. Default: load.rps; for command
    /// jobs, their one extract rule's figure, else app.elapsed.
    #[arg(long = "primary", value_name = "MEASUREMENT")]
    pub primary: Option<String>,
    /// Practical threshold below which a change is "no change" (default 2%); ID=PCT sets one
    /// measurement's own, over its `[measurements.ID] threshold` (repeat the flag), e.g.
    /// --threshold app.rss=1%.
    #[arg(long = "threshold", value_name = "PCT|ID=PCT",
          value_parser = crate::threshold::parse_threshold_arg)]
    pub threshold: Vec<crate::threshold::ThresholdArg>,
    /// A pass/fail bound on a row's median, like `[[limits]]` in rigor.toml (repeat the
    /// flag): 'load.latency.p99<50ms', 'load.rps>=10000'. A limit not met exits 6.
    #[arg(long = "limit", value_name = "ID<VALUE|ID>VALUE")]
    pub limits: Vec<String>,
    /// Measurements checked by --fail-on-regression (comma-separated; default: the primary).
    #[arg(long = "measurements", value_delimiter = ',')]
    pub measurements: Option<Vec<String>>,
    /// Exit 3 when a selected measurement regressed.
    #[arg(long = "fail-on-regression")]
    pub fail_on_regression: bool,
    /// Sampling interval of the application probe.
    #[arg(long = "sample-interval", default_value = "250ms")]
    pub sample_interval: String,
    /// Folder for logs and, unless given elsewhere, results.
    #[arg(long = "out-dir", default_value = "rigor-results")]
    pub out_dir: PathBuf,
    /// The result as JSON (schema rigor.run.v1); default: OUT_DIR/<time>/result.json.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The report as GitHub markdown (tables ready for a PR comment).
    #[arg(long = "markdown", value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// One line per iteration, a column per measurement.
    #[arg(long = "csv", value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// A standalone HTML page of the report.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Free text recorded in the result (what this run is about).
    #[arg(long = "description")]
    pub description: Option<String>,
    /// Drop the kernel's page cache (after sync) before each iteration, so every iteration
    /// reads its files cold and is charged for them (needs root; recorded per iteration).
    #[arg(long = "drop-caches")]
    pub drop_caches: bool,
    /// Take a CPU profile of the application (perf record, cpu-clock) during every measured
    /// window: a flame graph per row, a differential one and `profile_diff` per comparison.
    /// Stacks are walked by frame pointer, or with --cpu-profile=dwarf by DWARF unwinding.
    #[arg(long = "cpu-profile", value_name = "WALK", num_args = 0..=1, require_equals = true,
          default_missing_value = "fp", value_parser = ["fp", "dwarf"])]
    pub cpu_profile: Option<String>,
    /// Samples per second of the CPU profile (per CPU), 1 to 10000 [default: 99]; needs
    /// --cpu-profile or a `cpu_profile` in the config.
    #[arg(long = "cpu-profile-hz", value_name = "HZ")]
    pub cpu_profile_hz: Option<u32>,
    /// Turn warnings into a failure (exit 4): every kind, or with --strict=KIND,… only those
    /// (e.g. --strict=proxy,debug_build, so a busy machine's noise warnings do not fail).
    #[arg(long = "strict", value_name = "KIND", num_args = 0..=1, require_equals = true,
          value_delimiter = ',', default_missing_value = "all")]
    pub strict: Option<Vec<String>>,
    /// Run every iteration of a row even when its application failed to start (by default the
    /// row stops after the first failure to start, which would repeat every time).
    #[arg(long = "keep-going")]
    pub keep_going: bool,
    /// Keep iterations the rest of the machine interfered with far beyond the run's baseline
    /// (warned about only); by default they are excluded and re-run in the same slot.
    #[arg(long = "keep-noisy")]
    pub keep_noisy: bool,
    /// Where the run is stored for `rigor history`: a SQLite file or
    /// postgres://user:pass@host:port/db. Default: env RIGOR_STORE, else .rigor/history.db
    /// beside the config.
    #[arg(long = "store", value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Store nothing in the history.
    #[arg(long = "no-store", conflicts_with = "store")]
    pub no_store: bool,
    #[command(flatten)]
    pub view: super::view::ViewArgs,
}
