//! Every row of every selected scenario, resolved up front so config errors stop the run before
//! anything is built or started.

use crate::cmd_run::RunArgs;
use crate::config::{Config, PlanRequest, RowPlan};

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

/// Resolves the selected scenarios (all, in declared order, by default).
pub fn plan(
    config: &Config,
    args: &RunArgs,
    cli_vars: Vec<(String, String)>,
) -> Result<RunPlan, String> {
    let scenarios = if args.scenarios.is_empty() {
        config.scenario_names()
    } else {
        args.scenarios.clone()
    };
    let request = PlanRequest {
        profile: args.profile.clone(),
        cli_vars,
        variants: args.variants.clone(),
    };
    let mut rows = Vec::new();
    let mut variant_order: Vec<String> = Vec::new();
    for s in &scenarios {
        let plan = config.plan(s, &request)?;
        for v in plan.variants.iter().flatten() {
            if !variant_order.contains(v) {
                variant_order.push(v.clone());
            }
        }
        let n = args.iterations.or(plan.iterations).unwrap_or(3);
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
    Ok(RunPlan {
        scenarios,
        rows,
        variant_order,
        declarations: config.declarations()?,
    })
}

impl RunPlan {
    /// Row indices grouped by scenario and matrix values: the variants compared with each other.
    pub fn groups(&self) -> Vec<Vec<usize>> {
        let keys: Vec<String> = self
            .rows
            .iter()
            .map(|p| format!("{}\u{0}{:?}", p.scenario, p.plan.variables))
            .collect();
        super::schedule::groups(&keys)
    }
}

impl RunPlan {
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
        crate::comparison::never_enough(n, excluded)
    }
}
