//! Every row of every selected scenario, resolved and checked up front so that config and flag
//! errors — all of them, not just the first — stop the run before anything is built or started.

use super::settings::{self, Settings};
use crate::cli::run::RunArgs;
use crate::config::{Config, Limits, PlanRequest, Problems, RowPlan, MAX_ROWS};
use crate::result::RowKey;

/// The most iterations of a whole run (rows × iterations): one schedule slot each.
pub const MAX_TOTAL_ITERATIONS: u128 = 1_000_000;

/// A planned row with its scenario and the key of the build it needs.
pub struct PlannedRow {
    pub plan: RowPlan,
    pub scenario: String,
    /// Rows with the same key share one build.
    pub build_key: String,
    pub iterations: usize,
}

/// The whole run: rows in declared order and the variants in baseline-first order.
pub struct RunPlan {
    pub scenarios: Vec<String>,
    pub rows: Vec<PlannedRow>,
    pub variant_order: Vec<String>,
    /// The config's `[measurements.ID]` declarations.
    pub declarations: crate::declarations::Declarations,
}

/// Checks the flags, reads the config and plans every row; every problem found is returned.
pub fn prepare(args: &RunArgs) -> Result<(Settings, RunPlan), Problems> {
    let settings = settings::parse(args);
    let mut problems = Problems::default();
    // The config is checked even when flags are bad, so one run lists every problem.
    // A file with problems is still planned (its entries that are right), so the problems of
    // the file and of every row are listed together, in line order.
    let planned = match Config::load_all(&args.file) {
        Ok((config, found)) => {
            problems.extend(found);
            let cli_vars = crate::options::run::parse_vars(&args.vars).unwrap_or_default();
            match plan(&config, args, cli_vars, Limits::this_machine()) {
                Ok(planned) => Some(planned),
                Err(p) => {
                    problems.extend(p);
                    None
                }
            }
        }
        Err(p) => {
            problems.extend(p);
            None
        }
    };
    problems.sort_by_line(&args.file);
    match (settings, planned) {
        (Ok(s), Some(planned)) if problems.is_empty() => Ok((s, planned)),
        (settings, _) => {
            let mut all = settings.err().unwrap_or_default();
            all.extend(problems);
            Err(all)
        }
    }
}

/// Prints every problem, one `error:` each, and says that nothing was started.
pub fn print_problems(problems: &Problems) {
    for m in problems.messages() {
        super::console::err(&format!("error: {m}"));
    }
    if problems.len() > 1 {
        super::console::err(&format!(
            "rigor: {} problems; nothing was built or started",
            problems.len()
        ));
    }
}

/// Resolves the selected scenarios (all, in declared order, by default).
pub fn plan(
    config: &Config,
    args: &RunArgs,
    cli_vars: Vec<(String, String)>,
    limits: Limits,
) -> Result<RunPlan, Problems> {
    let scenarios = if args.scenarios.is_empty() {
        config.scenario_names()
    } else {
        args.scenarios.clone()
    };
    let request = PlanRequest {
        profile: args.profile.clone(),
        cli_vars,
        variants: args.variants.clone(),
        limits,
    };
    let mut problems = Problems::default();
    let mut rows = Vec::new();
    let mut variant_order: Vec<String> = Vec::new();
    let mut total: u128 = 0;
    for s in &scenarios {
        let plan = match config.plan(s, &request) {
            Ok(plan) => plan,
            Err(p) => {
                problems.extend(p);
                continue;
            }
        };
        for v in plan.variants.iter().flatten() {
            if !variant_order.contains(v) {
                variant_order.push(v.clone());
            }
        }
        let n = args.iterations.or(plan.iterations).unwrap_or(3);
        total += plan.rows.len() as u128 * n as u128;
        for row in plan.rows {
            let build_key = format!(
                "{}\u{0}{:?}\u{0}{:?}\u{0}{:?}",
                row.app.dir.display(),
                row.app.build,
                row.app.artifact,
                row.app.env
            );
            rows.push(PlannedRow {
                plan: row,
                scenario: s.clone(),
                build_key,
                iterations: n,
            });
        }
    }
    if rows.len() as u128 > MAX_ROWS {
        problems.add(format!(
            "the selected scenarios have {} rows together, more than the limit of {MAX_ROWS}: \
             select fewer with -s or --variants",
            rows.len()
        ));
    } else if total > MAX_TOTAL_ITERATIONS {
        problems.add(format!(
            "{total} iterations in all, more than the limit of {MAX_TOTAL_ITERATIONS}: use fewer \
             iterations (-i) or rows"
        ));
    }
    // Bad declarations are listed with the rows' problems, not instead of them.
    let declarations = config.declarations().unwrap_or_else(|e| {
        problems.extend(e);
        Default::default()
    });
    problems.or_ok(RunPlan {
        scenarios,
        rows,
        variant_order,
        declarations,
    })
}

impl RunPlan {
    /// Row indices grouped by scenario and matrix values: the variants compared with each other.
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let keys: Vec<String> = self
            .rows
            .iter()
            .map(|p| {
                RowKey {
                    scenario: p.scenario.clone(),
                    variables: p.plan.variables.clone(),
                    variant: p.plan.variant.clone(),
                }
                .group()
                .label()
            })
            .collect();
        super::schedule::groups(&keys)
    }
}

impl RunPlan {
    /// Refused before anything runs: `--exclude LOW:HIGH` that would leave a row with no kept
    /// iteration, since its exclusions could only be skipped after every iteration ran. With
    /// `--until-conclusive` rows may grow, so nothing is refused.
    pub fn exclusions_leave_nothing(
        &self,
        exclude: Option<(usize, usize)>,
        until_conclusive: bool,
    ) -> Option<String> {
        let (low, high) = exclude?;
        if until_conclusive || low + high == 0 {
            return None;
        }
        let n = self.rows.iter().map(|r| r.iterations).min()?;
        (n <= low + high).then(|| {
            format!(
                "--exclude {low}:{high} drops {} iterations of each row, but a row has only {n}: \
                 nothing would be kept; run at least {} iterations (-i {}) or exclude fewer",
                low + high,
                low + high + 1,
                low + high + 1
            )
        })
    }

    /// Said before anything runs: variants whose smallest row, after `--exclude` takes its
    /// `low + high`, keeps too few iterations per side for any verdict. Nothing to say without
    /// variants, or with `--until-conclusive` (it adds rounds until a verdict is possible).
    pub fn never_enough(
        &self,
        exclude: Option<(usize, usize)>,
        until_conclusive: bool,
    ) -> Option<crate::result::Warning> {
        if self.variant_order.len() < 2 || until_conclusive {
            return None;
        }
        let n = self.rows.iter().map(|r| r.iterations).min()?;
        let (low, high) = exclude.unwrap_or((0, 0));
        // Exclusions are skipped (with their own warning) when they would leave nothing.
        let excluded = if n > low + high { low + high } else { 0 };
        crate::analysis::sufficiency::never_enough(n, excluded)
    }
}

#[cfg(test)]
mod cli_fuzz_tests;
