//! `rigor history`: the series of run medians kept in the history store, with their change
//! points, as text, JSON or an HTML page; and `rigor history import`, which loads saved results.

use crate::exit::Exit;
use crate::failure::Failure;
use crate::history::import::{self, Imported};
use crate::history::series::{self, Filter, HistorySeries, Nothing};
use crate::history::{HistoryError, Store, StoreSpec};
use crate::{console, report};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

/// Which store: `--store` (or `RIGOR_STORE`), else the default beside the config.
#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// The store: a SQLite file or postgres://user:pass@host:port/db. Default: env RIGOR_STORE,
    /// else .rigor/history.db beside the config.
    #[arg(long = "store", value_name = "PATH|URL")]
    pub store: Option<String>,
    /// Config file whose folder holds the default store.
    #[arg(short = 'f', long = "file", default_value = "rigor.toml")]
    pub file: PathBuf,
}

impl StoreArgs {
    fn spec(&self) -> StoreSpec {
        StoreSpec::choose(self.store.as_deref(), &self.file)
    }
}

/// Flags of `rigor history` (a stable contract: scripts depend on their names).
#[derive(Args, Debug, Clone)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    /// Only this scenario.
    #[arg(short = 's', long = "scenario")]
    pub scenario: Option<String>,
    /// Measurements to show (comma-separated). Default: load.rps for rows that drove load; else
    /// a command's own cmd.* figures; else app.elapsed; else every measurement.
    #[arg(
        short = 'm',
        long = "measurement",
        value_delimiter = ',',
        value_name = "ID"
    )]
    pub measurements: Vec<String>,
    /// Only runs that started at or after DATE (2026-11-01, or RFC 3339).
    #[arg(long = "since", value_name = "DATE")]
    pub since: Option<String>,
    /// Also write the series as JSON (rigor.history.v1).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write one self-contained HTML page plotting each series with its change points.
    #[arg(long = "html", value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// What `rigor history` does besides showing series.
#[derive(Subcommand, Debug, Clone)]
pub enum HistoryAction {
    /// Load saved results (rigor run --json) into the store; a run already there is skipped.
    Import(ImportArgs),
}

/// Flags of `rigor history import`.
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// Result files written by `rigor run --json`.
    #[arg(required = true, num_args = 1.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Runs `rigor history` or `rigor history import`: 0; 1 when the store cannot be read or a file
/// cannot be imported; 2 for bad flags or names that match nothing.
pub fn execute(args: &HistoryArgs) -> Result<Exit, Failure> {
    match &args.action {
        Some(HistoryAction::Import(a)) => execute_import(a),
        None => execute_show(args),
    }
}

fn failed(e: String) -> Failure {
    Failure::Failed(anyhow::anyhow!(e))
}

/// A store's error, naming the store once, as a run failure.
fn in_store(name: &str, e: HistoryError) -> Failure {
    failed(e.in_store(name).to_string())
}

fn execute_import(args: &ImportArgs) -> Result<Exit, Failure> {
    let spec = args.store.spec();
    let name = spec.name();
    let mut store =
        Store::open(&spec, true, crate::history::HOOKS).map_err(|e| in_store(&name, e))?;
    let mut bad = 0;
    for (path, outcome) in import::import(&mut store, &args.files) {
        let shown = path.display();
        match outcome {
            Imported::Added(id) => console::err(&format!("imported {shown} as run {id}")),
            Imported::AlreadyThere(id) => {
                console::err(&format!("skipped {shown}: already in {name} as run {id}"))
            }
            Imported::Failed(e) => {
                bad += 1;
                console::err(&format!("error: {e}"));
            }
        }
    }
    if bad > 0 {
        console::err(&format!(
            "rigor: {bad} of {} files could not be imported",
            args.files.len()
        ));
        return Ok(Exit::Failed);
    }
    Ok(Exit::Success)
}

fn execute_show(args: &HistoryArgs) -> Result<Exit, Failure> {
    let filter = filter(args)?;
    let spec = args.store.spec();
    let name = spec.name();
    if let StoreSpec::Sqlite(path) = &spec {
        if !path.exists() {
            return nothing(
                args,
                &format!(
                    "no history yet: {name} does not exist (every `rigor run` of {} stores \
                     there; `rigor history import` loads saved results)",
                    args.store.file.display()
                ),
            );
        }
    }
    let mut store =
        Store::open(&spec, false, crate::history::HOOKS).map_err(|e| in_store(&name, e))?;
    let found = store
        .read(|tx| series::load(tx, &filter))
        .map_err(|e| in_store(&name, e))?;
    match found {
        Ok(series) => show(args, &series, &name),
        Err(Nothing::Unknown(e)) => Err(Failure::usage(e)),
        Err(Nothing::EmptyStore) => nothing(args, &format!("{name} holds no runs yet")),
        Err(Nothing::NoPoints(e)) => nothing(args, &format!("{name}: {e}")),
    }
}

/// The flags checked: a bad `--since` or an empty name is a usage error.
fn filter(args: &HistoryArgs) -> Result<Filter, Failure> {
    let since = args
        .since
        .as_deref()
        .map(crate::history::time::parse)
        .transpose()
        .map_err(|e| Failure::usage(format!("--since: {e}")))?;
    if args.measurements.iter().any(|m| m.trim().is_empty()) {
        return Err(Failure::usage(
            "-m/--measurement: an empty name in the list",
        ));
    }
    Ok(Filter {
        scenario: args.scenario.clone(),
        measurements: args.measurements.clone(),
        since,
    })
}

/// Nothing to show: said on stderr, and the files asked for written empty so a script reads
/// "no series" rather than a missing file.
fn nothing(args: &HistoryArgs, message: &str) -> Result<Exit, Failure> {
    console::err(&format!("rigor history: {message}"));
    write_files(args, &[], "")?;
    Ok(Exit::Success)
}

fn show(args: &HistoryArgs, series: &[HistorySeries], name: &str) -> Result<Exit, Failure> {
    let shown = console::report(&report::history_text::render(series, name));
    write_files(args, series, name)?;
    shown?;
    Ok(Exit::Success)
}

fn write_files(args: &HistoryArgs, series: &[HistorySeries], name: &str) -> Result<(), Failure> {
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report::history_json::render(series))
            .map_err(|e| failed(e.to_string()))?;
        write(path, &(text + "\n"))?;
    }
    if let Some(path) = &args.html {
        write(path, &report::history_html::render(series, name))?;
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    crate::exec::output::write_atomic(path, text).map_err(Failure::Failed)
}
