//! Everything a bisection checks before it builds anything: the flags, the scenario (one row),
//! the measurement, and what is searched: the path from good to bad in the repository of the
//! scenario's job, or the values of `--var` from good to bad. Bad flags and configs are usage
//! failures (exit 2); a folder outside git or revisions that are not commits of it fail
//! (exit 1).

use super::git::{self as bgit, Commit};
use crate::cli::bisect::BisectArgs;
use crate::config::{Work, MAX_ITERATIONS};
use crate::failure::Failure;
use crate::measurements::ids;
use crate::options::run::{refused, Selection};

/// A bisection ready to start.
pub struct Setup {
    pub measurement: String,
    /// Good first, bad last.
    pub commits: Vec<Commit>,
    /// The variable whose values are searched, when they are values rather than commits.
    pub var: Option<String>,
}

/// Checks the flags, the config and the repository.
pub fn prepare(args: &BisectArgs) -> Result<Setup, Failure> {
    check_flags(args)?;
    let over = super::values::from_args(args)?;
    let selection = Selection {
        file: args.file.clone(),
        scenarios: vec![args.scenario.clone()],
        profile: "local".into(),
        iterations: Some(args.iterations),
        // The config is checked as the first value would run it.
        vars: over
            .iter()
            .map(|o| (o.name.clone(), o.values[0].clone()))
            .collect(),
        variants: None,
        refs: Vec::new(),
        values: None,
        cross_check: None,
    };
    let plan = crate::plan::prepare(&selection).map_err(|p| refused(&p))?;
    let Some(first) = plan.rows.first() else {
        return Err(Failure::usage(format!(
            "scenario `{}` has no row to measure",
            args.scenario
        )));
    };
    let mut combos: Vec<_> = plan.rows.iter().map(|r| &r.key.variables).collect();
    combos.dedup();
    if combos.len() > 1 {
        return Err(Failure::usage(format!(
            "scenario `{}` has {} matrix rows: bisect measures one row; make a scenario \
             without a matrix (or with one value per variable) for it",
            args.scenario,
            combos.len()
        )));
    }
    let measurement = match (&args.measurement, &first.plan.work) {
        (Some(m), _) => m.clone(),
        (None, Work::Load(_)) => ids::LOAD_RPS.to_string(),
        (None, Work::Command(_)) => {
            return Err(Failure::usage(format!(
                "scenario `{}` runs a command job: name the measurement to bisect with -m \
                 (its own figure cmd.NAME, or app.elapsed, app.rss…)",
                args.scenario
            )))
        }
    };
    if let Some(over) = over {
        return Ok(Setup {
            measurement,
            commits: over.between(args.good.as_deref(), args.bad.as_deref())?,
            var: Some(over.name),
        });
    }
    let failed = |e: String| Failure::from(anyhow::anyhow!(e));
    let (good, bad) = (
        args.good.as_deref().unwrap_or_default(),
        args.bad.as_deref().unwrap_or_default(),
    );
    let repo = crate::git::toplevel(&first.plan.app.dir).map_err(|e| {
        failed(format!(
            "the folder of job `{}`: {e}; bisect needs the job's repository",
            first.plan.app.name
        ))
    })?;
    let good = bgit::resolve(&repo, "--good", good)?;
    let bad = bgit::resolve(&repo, "--bad", bad)?;
    let commits = bgit::path(&repo, &good, &bad)?;
    Ok(Setup {
        measurement,
        commits,
        var: None,
    })
}

/// The flags alone: iterations within the limits, a known measurement id, a `--json` path
/// that can be written.
fn check_flags(args: &BisectArgs) -> Result<(), Failure> {
    let most = MAX_ITERATIONS / super::CAP_FACTOR;
    if args.iterations == 0 || args.iterations > most {
        return Err(Failure::usage(format!(
            "-i/--iterations must be 1 to {most} (a step may grow to {}× it)",
            super::CAP_FACTOR
        )));
    }
    if let Some(m) = &args.measurement {
        crate::measurements::validate(m).map_err(|e| Failure::usage(format!("-m: {e}")))?;
    }
    // The report is written after the last step, maybe hours later: a path that cannot be
    // written is said now, as `rigor run` does for its result paths.
    if let Some(path) = &args.json {
        crate::exec::output::probe(path)
            .map_err(|e| Failure::usage(format!("--json {}: {e}", path.display())))?;
    }
    Ok(())
}
