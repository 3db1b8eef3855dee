//! The run's plan: every row of every selected scenario, resolved and checked up front so that
//! config errors — all of them, not just the first — stop the run before anything is built or
//! started. Each row carries its [`RowKey`]; the rows compared with each other (the variants of
//! one matrix row) form a [`Group`], keyed by [`RowKey::group`]. The schedule, the runner and
//! the comparisons all use these groups, so they cannot disagree about which rows belong
//! together.

use crate::config::{Config, Limits, PlanRequest, Problems, RowPlan, MAX_ROWS};
use crate::options::run::Selection;
use crate::result::RowKey;

/// The most iterations of a whole run (rows × iterations): one schedule slot each.
pub const MAX_TOTAL_ITERATIONS: u128 = 1_000_000;

/// A planned row: what it is called, what it runs, and the build it needs.
#[derive(Debug, Clone)]
pub struct PlannedRow {
    pub key: RowKey,
    pub plan: RowPlan,
    /// Rows with the same key share one build.
    pub build_key: String,
    pub iterations: usize,
    /// How its iterations' CPU profiles walk stacks, when its scenario or profile asks for them
    /// (`--cpu-profile` asks for every row's).
    pub cpu_profile: Option<crate::config::StackWalk>,
}

/// Rows compared with each other: the variants of one matrix row of one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The rows' shared key ([`RowKey::group`]: no variant).
    pub key: RowKey,
    /// Indices into [`RunPlan::rows`], in declared order.
    pub rows: Vec<usize>,
}

/// The whole run: rows in declared order, their groups, and the variants baseline first.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub scenarios: Vec<String>,
    pub rows: Vec<PlannedRow>,
    pub groups: Vec<Group>,
    pub variant_order: Vec<String>,
    /// The config's `[measurements.ID]` declarations.
    pub declarations: crate::declarations::Declarations,
    /// `[report] key`: the headline's key figures, unless `--key` names others.
    pub report_key: Vec<String>,
    /// The config's `[[limits]]` (the flags' are added by `rigor run`).
    pub limits: Vec<crate::analysis::limits::Limit>,
}

/// Reads the config and plans every selected row; every problem found is returned, those of
/// the file in line order.
pub fn prepare(selection: &Selection) -> Result<RunPlan, Problems> {
    let mut problems = Problems::default();
    // A file with problems is still planned (its entries that are right), so the problems of
    // the file and of every row are listed together, in line order.
    let planned = match Config::load_all(&selection.file) {
        Ok((mut config, found)) => {
            problems.extend(found);
            if !selection.refs.is_empty() {
                for s in &selection.scenarios {
                    config.use_ref_variants(s, &selection.refs);
                }
            }
            if let Some((name, values)) = &selection.values {
                for s in &selection.scenarios {
                    config.use_value_variants(s, name, values);
                }
            }
            match plan(&config, selection, Limits::this_machine()) {
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
    problems.sort_by_line(&selection.file);
    match planned {
        Some(planned) if problems.is_empty() => Ok(planned),
        _ => Err(problems),
    }
}

/// Resolves the selected scenarios (all, in declared order, by default).
pub fn plan(config: &Config, selection: &Selection, limits: Limits) -> Result<RunPlan, Problems> {
    let scenarios = if selection.scenarios.is_empty() {
        config.scenario_names()
    } else {
        selection.scenarios.clone()
    };
    let request = PlanRequest {
        profile: selection.profile.clone(),
        cli_vars: selection.vars.clone(),
        variants: selection.variants.clone(),
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
        let plan = match &selection.cross_check {
            None => plan,
            Some(tool) => match crate::crosscheck::split(s, plan, tool) {
                Ok(plan) => plan,
                Err(messages) => {
                    messages.into_iter().for_each(|m| problems.add(m));
                    continue;
                }
            },
        };
        for v in plan.variants.iter().flatten() {
            if !variant_order.contains(v) {
                variant_order.push(v.clone());
            }
        }
        let n = selection.iterations.or(plan.iterations).unwrap_or(3);
        total += plan.rows.len() as u128 * n as u128;
        let walk = plan.cpu_profile;
        rows.extend(plan.rows.into_iter().map(|row| PlannedRow {
            cpu_profile: walk,
            ..PlannedRow::new(s, row, n)
        }));
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
    // The limits' problems are the file's, listed when it was read.
    let limits = config.limits(&declarations).unwrap_or_default();
    let mut plan = RunPlan::new(scenarios, rows, variant_order, declarations);
    plan.report_key = config.report_key().unwrap_or_default();
    plan.limits = limits;
    problems.or_ok(plan)
}

/// What makes two builds the same build: the folder, the command, the artifact and the
/// environment. Rows (and a bisection's steps) with one key share one build.
pub fn build_key(app: &crate::config::AppJob) -> String {
    format!(
        "{}\u{0}{:?}\u{0}{:?}\u{0}{:?}\u{0}{:?}",
        app.dir.display(),
        app.build,
        app.artifact,
        app.env,
        // A container's image and engine make a build of their own.
        app.container.as_ref().map(|c| (&c.image, c.engine))
    )
}

impl PlannedRow {
    /// A row of `scenario` that runs `iterations` times.
    pub fn new(scenario: &str, plan: RowPlan, iterations: usize) -> PlannedRow {
        let build_key = build_key(&plan.app);
        PlannedRow {
            key: RowKey {
                scenario: scenario.to_string(),
                variables: plan.variables.clone(),
                variant: plan.variant.clone(),
            },
            plan,
            build_key,
            iterations,
            cpu_profile: None,
        }
    }
}

/// Rows grouped by [`RowKey::group`], groups in the order their first row appears.
pub fn group<'a>(keys: impl IntoIterator<Item = &'a RowKey>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, key) in keys.into_iter().enumerate() {
        let key = key.group();
        match groups.iter_mut().find(|g| g.key == key) {
            Some(g) => g.rows.push(i),
            None => groups.push(Group { key, rows: vec![i] }),
        }
    }
    groups
}

impl RunPlan {
    /// The measurement verdicts focus on unless `--primary` names one: `load.rps` when a row
    /// is under load; for command jobs alone, the figure of their one extract rule, else how
    /// long they ran (`app.elapsed`), the figure every command has.
    pub fn default_primary(&self) -> String {
        use crate::config::Work;
        use crate::measurements::ids;
        let mut rules: Vec<String> = Vec::new();
        for r in &self.rows {
            match &r.plan.work {
                Work::Load(_) => return ids::LOAD_RPS.to_string(),
                Work::Command(c) => {
                    for rule in &c.extract {
                        let id = format!("cmd.{}", rule.name);
                        if !rules.contains(&id) {
                            rules.push(id);
                        }
                    }
                }
            }
        }
        match rules.as_slice() {
            [one] => one.clone(),
            _ => ids::APP_ELAPSED.to_string(),
        }
    }

    /// A plan of these rows, grouped.
    pub fn new(
        scenarios: Vec<String>,
        rows: Vec<PlannedRow>,
        variant_order: Vec<String>,
        declarations: crate::declarations::Declarations,
    ) -> RunPlan {
        let groups = group(rows.iter().map(|r| &r.key));
        RunPlan {
            scenarios,
            rows,
            groups,
            variant_order,
            declarations,
            report_key: Vec::new(),
            limits: Vec::new(),
        }
    }

    /// How progress names row `index`: `plaintext row 2/3 (connections=64 slow)`.
    pub fn row_label(&self, index: usize) -> String {
        let key = &self.rows[index].key;
        let detail = match key.detail() {
            d if d.is_empty() => d,
            d => format!(" ({d})"),
        };
        format!(
            "{} row {}/{}{detail}",
            key.scenario,
            index + 1,
            self.rows.len()
        )
    }

    /// Every planned iteration (before `--until-conclusive` adds any).
    pub fn total_iterations(&self) -> usize {
        self.rows.iter().map(|r| r.iterations).sum()
    }

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
        // Only rows compared with another row count: a scenario without variants in the same
        // run compares nothing, whatever its iterations.
        let n = self
            .groups
            .iter()
            .filter(|g| g.rows.len() >= 2)
            .flat_map(|g| g.rows.iter().map(|&i| self.rows[i].iterations))
            .min()?;
        let (low, high) = exclude.unwrap_or((0, 0));
        // Exclusions are skipped (with their own warning) when they would leave nothing.
        let excluded = if n > low + high { low + high } else { 0 };
        crate::analysis::sufficiency::never_enough(n, excluded)
    }
}

#[cfg(test)]
mod cli_fuzz_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn key(scenario: &str, n: &str, variant: Option<&str>) -> RowKey {
        RowKey {
            scenario: scenario.into(),
            variables: BTreeMap::from([("n".to_string(), n.to_string())]),
            variant: variant.map(Into::into),
        }
    }

    #[test]
    fn rows_compared_with_nothing_do_not_make_a_run_hopeless() {
        // The bundled config: two scenarios without variants at the default 3 iterations, and
        // one with variants at 5, which can conclude.
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rigor.toml");
        let selection = |iterations| crate::options::run::Selection {
            file: file.clone(),
            scenarios: Vec::new(),
            profile: "local".to_string(),
            iterations,
            vars: Vec::new(),
            variants: None,
            refs: Vec::new(),
            values: None,
            cross_check: None,
        };
        let plan = prepare(&selection(None)).expect("the bundled config plans");
        assert!(plan.rows.iter().any(|r| r.iterations == 3));
        assert!(plan.never_enough(None, false).is_none());
        // Its variants at 3 iterations each can never conclude.
        let plan = prepare(&selection(Some(3))).expect("plans");
        assert!(plan.never_enough(None, false).is_some());
        assert!(plan.never_enough(None, true).is_none());
    }

    #[test]
    fn variants_of_one_matrix_row_form_one_group_in_first_seen_order() {
        let keys = [
            key("s", "1", Some("a")),
            key("s", "1", Some("b")),
            key("s", "2", Some("a")),
            key("t", "1", Some("a")),
            key("s", "2", Some("b")),
        ];
        let groups = group(&keys);
        let rows: Vec<Vec<usize>> = groups.iter().map(|g| g.rows.clone()).collect();
        assert_eq!(rows, vec![vec![0, 1], vec![2, 4], vec![3]]);
        assert_eq!(groups[1].key, key("s", "2", None));
    }
}
