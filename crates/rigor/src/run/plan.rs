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
