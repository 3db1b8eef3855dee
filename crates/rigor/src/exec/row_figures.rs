//! Rows a command makes itself: a program that prints one figure per client count turns each
//! count into a row of its own (`clients=30`), beside the row that ran it, so the table it
//! prints becomes a sweep that is summarised and compared across variants like a matrix.

use crate::declarations::Declaration;
use crate::plan::{Group, RunPlan};
use crate::result::{Iteration, Row, RowFigure, RunResult, Warning, WarningKind};
use std::collections::BTreeMap;

/// Moves an iteration's per-row figures into their rows (made on first sight, after the
/// planned rows) and adds what its output declared where the run's declarations are silent.
/// Each figure's iteration keeps the index, sequence and exclusion of the one that ran.
pub fn distribute(result: &mut RunResult, row: usize, it: &mut Iteration) {
    for (id, said) in std::mem::take(&mut it.declared) {
        declare(result, id, said);
    }
    let figures = std::mem::take(&mut it.row_figures);
    if figures.is_empty() {
        return;
    }
    let parent = &result.rows[row];
    let (scenario, variables, variant) = (
        parent.scenario.clone(),
        parent.variables.clone(),
        parent.variant.clone(),
    );
    let mut by_row: Vec<(BTreeMap<String, String>, BTreeMap<String, f64>)> = Vec::new();
    for RowFigure { row, id, value } in figures {
        let mut vars = variables.clone();
        vars.extend(row);
        match by_row.iter_mut().find(|(v, _)| *v == vars) {
            Some((_, m)) => {
                m.insert(id, value);
            }
            None => by_row.push((vars, BTreeMap::from([(id, value)]))),
        }
    }
    for (vars, measurements) in by_row {
        let at = match result
            .rows
            .iter()
            .position(|r| r.scenario == scenario && r.variables == vars && r.variant == variant)
        {
            Some(i) => i,
            None => {
                result.rows.push(Row {
                    scenario: scenario.clone(),
                    variables: vars,
                    variant: variant.clone(),
                    iterations: Vec::new(),
                    summary: BTreeMap::new(),
                    warnings: Vec::new(),
                    build_error: None,
                    profile: None,
                });
                result.rows.len() - 1
            }
        };
        let mut own = Iteration::new(it.index, it.sequence);
        own.excluded = it.excluded.clone();
        own.pid = it.pid;
        own.log = it.log.clone();
        own.measurements = measurements;
        result.rows[at].iterations.push(own);
    }
}

/// Puts the rows commands made in declared order: under the planned row they came from, each
/// reported row in the order the program first printed it, and its variants in the declared
/// order. They were made as iterations ran, and interleaving shuffles that order, so tables,
/// pivots and chart legends would otherwise list the variants as the shuffle met them.
pub fn order_derived(result: &mut RunResult, plan: &RunPlan) {
    let planned = plan.rows.len().min(result.rows.len());
    let mut derived = result.rows.split_off(planned);
    let mut sets: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    for r in &derived {
        let set = (r.scenario.clone(), r.variables.clone());
        if !sets.contains(&set) {
            sets.push(set);
        }
    }
    let parent = |r: &Row| {
        plan.rows
            .iter()
            .position(|p| {
                p.key.scenario == r.scenario
                    && (p.key.variables.iter()).all(|(k, v)| r.variables.get(k) == Some(v))
            })
            .unwrap_or(usize::MAX)
    };
    let set = |r: &Row| {
        sets.iter()
            .position(|(s, v)| *s == r.scenario && *v == r.variables)
            .unwrap_or(usize::MAX)
    };
    let variant = |r: &Row| {
        (r.variant.as_ref())
            .and_then(|v| plan.variant_order.iter().position(|o| o == v))
            .unwrap_or(usize::MAX)
    };
    derived.sort_by_key(|r| (parent(r), set(r), variant(r)));
    result.rows.extend(derived);
}

/// Adds what a command's output said about `id` to the run's declarations. The config's own
/// declaration wins field by field (its unit, direction, label), the output fills what it left
/// out, and a direction the two disagree on is a warning naming both, said once.
fn declare(result: &mut RunResult, id: String, said: Declaration) {
    let Some(known) = result.measurements.get_mut(&id) else {
        result.measurements.insert(id, said);
        return;
    };
    if let (Some(k), Some(s)) = (known.direction, said.direction) {
        let already = result
            .warnings
            .iter()
            .any(|w| w.kind == WarningKind::ConflictingDeclarations && w.message.contains(&id));
        if k != s && !already {
            result.warnings.push(Warning::new(
                WarningKind::ConflictingDeclarations,
                format!(
                    "{id}: the program's output says {} is better, rigor.toml says {}; \
                     rigor.toml's direction is used for the verdicts",
                    s.as_str(),
                    k.as_str()
                ),
                "make the `[measurements]` table and the program agree",
            ));
        }
    }
    known.unit = known.unit.take().or(said.unit);
    known.direction = known.direction.or(said.direction);
    known.label = known.label.take().or(said.label);
}

/// The groups of the rows commands made (every row past the planned ones), keyed like the
/// planned groups, in order of first appearance; each group's rows in the variants' order.
pub fn derived_groups(result: &RunResult, plan: &RunPlan) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, row) in result.rows.iter().enumerate().skip(plan.rows.len()) {
        let key = row.key_in(&result.scenario).group();
        match groups.iter_mut().find(|g| g.key == key) {
            Some(g) => g.rows.push(i),
            None => groups.push(Group { key, rows: vec![i] }),
        }
    }
    let order = |i: &usize| {
        let v = result.rows[*i].variant.as_deref();
        plan.variant_order
            .iter()
            .position(|o| Some(o.as_str()) == v)
            .unwrap_or(usize::MAX)
    };
    for g in &mut groups {
        g.rows.sort_by_key(order);
    }
    groups
}

/// Whether a command-made group came from the planned group `planned`: same scenario, and
/// every planned variable with the same value.
pub fn descends_from(derived: &Group, planned: &Group) -> bool {
    derived.key.scenario == planned.key.scenario
        && planned
            .key
            .variables
            .iter()
            .all(|(k, v)| derived.key.variables.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::RowKey;

    fn result_with_one_row() -> RunResult {
        let row = Row {
            scenario: "pp".into(),
            variables: BTreeMap::from([("gc".into(), "server".into())]),
            variant: Some("net9".into()),
            iterations: Vec::new(),
            summary: BTreeMap::new(),
            warnings: Vec::new(),
            build_error: None,
            profile: None,
        };
        let mut result = crate::report::sample::sample_result();
        result.scenario = "pp".into();
        result.rows = vec![row];
        result.measurements.clear();
        result.warnings.clear();
        result
    }

    fn figure(clients: &str, id: &str, value: f64) -> RowFigure {
        RowFigure {
            row: BTreeMap::from([("clients".into(), clients.into())]),
            id: id.into(),
            value,
        }
    }

    #[test]
    fn each_reported_row_becomes_a_row_with_the_parents_variables() {
        let mut result = result_with_one_row();
        for (index, v) in [(0, 10.0), (1, 20.0)] {
            let mut it = Iteration::new(index, index * 2);
            it.row_figures = vec![
                figure("1", "cmd.mps", v),
                figure("5", "cmd.mps", v + 1.0),
                figure("5", "cmd.total", 7.0),
            ];
            distribute(&mut result, 0, &mut it);
            assert!(it.row_figures.is_empty());
        }
        assert_eq!(result.rows.len(), 3);
        let five = &result.rows[2];
        assert_eq!(five.variables["clients"], "5");
        assert_eq!(five.variables["gc"], "server");
        assert_eq!(five.variant.as_deref(), Some("net9"));
        assert_eq!(five.iterations.len(), 2);
        assert_eq!(five.iterations[1].measurements["cmd.mps"], 21.0);
        assert_eq!(five.iterations[1].measurements["cmd.total"], 7.0);
        assert_eq!(five.iterations[1].sequence, 2);
        assert!(
            result.rows[0].iterations.is_empty(),
            "the parent is the runner's"
        );
    }

    #[test]
    fn declarations_from_output_never_override_the_config() {
        use crate::declarations::{Better, Declaration};
        let mut result = result_with_one_row();
        result.measurements.insert(
            "cmd.mps".into(),
            Declaration {
                direction: Some(Better::Higher),
                ..Default::default()
            },
        );
        let mut it = Iteration::new(0, 0);
        for (id, dir) in [("cmd.mps", Better::Lower), ("cmd.lat", Better::Lower)] {
            it.declared.insert(
                id.into(),
                Declaration {
                    direction: Some(dir),
                    ..Default::default()
                },
            );
        }
        distribute(&mut result, 0, &mut it);
        assert_eq!(
            result.measurements["cmd.mps"].direction,
            Some(Better::Higher)
        );
        assert_eq!(
            result.measurements["cmd.lat"].direction,
            Some(Better::Lower)
        );
    }

    #[test]
    fn derived_groups_pair_the_variants_of_each_reported_row() {
        let g = Group {
            key: RowKey {
                scenario: "pp".into(),
                variables: BTreeMap::from([("gc".into(), "server".into())]),
                variant: None,
            },
            rows: vec![0],
        };
        let mut d = g.clone();
        d.key.variables.insert("clients".into(), "5".into());
        assert!(descends_from(&d, &g));
        d.key.variables.insert("gc".into(), "workstation".into());
        assert!(!descends_from(&d, &g));
    }
}
