//! Whether higher or lower is better, when several saved results each carry their own
//! `[measurements.ID]` declarations and `--measure` flags may settle them: merged once, with a
//! warning where the files disagree, so every verdict of the comparison uses the same answer.

use super::saved::Saved;
use rigor_model::declarations::{self, Better, Declarations};
use rigor_model::format::visible;
use rigor_model::result::{Comparison, Warning, WarningKind};

/// The declarations of every input merged, then `flags` on top. Files that disagree on an id's
/// direction leave it undeclared (with a warning) unless a flag settles it; `names` are the
/// inputs' column names, to say which file said what.
pub fn merge_declarations(
    inputs: &[Saved],
    names: &[String],
    flags: &[(String, Better)],
    warnings: &mut Vec<Warning>,
) -> Declarations {
    let (mut merged, conflicts) = union(inputs);
    for id in &conflicts {
        if flags.iter().any(|(f, _)| f == id) {
            continue;
        }
        if let Some(d) = merged.get_mut(id) {
            d.direction = None;
        }
        warnings.push(conflict_warning(inputs, names, id));
    }
    for (id, better) in flags {
        merged.entry(id.clone()).or_default().direction = Some(*better);
    }
    merged
}

/// Every input's declarations in one map (the first to say a unit, label or direction wins),
/// and the ids whose direction the inputs declare both ways.
fn union(inputs: &[Saved]) -> (Declarations, Vec<String>) {
    let mut merged = Declarations::new();
    let mut conflicts: Vec<String> = Vec::new();
    for (_, r) in inputs {
        for (id, d) in &r.measurements {
            let entry = merged.entry(id.clone()).or_insert_with(|| d.clone());
            if entry.direction.is_some()
                && d.direction.is_some()
                && entry.direction != d.direction
                && !conflicts.contains(id)
            {
                conflicts.push(id.clone());
            }
            entry.direction = entry.direction.or(d.direction);
            entry.unit = entry.unit.clone().or_else(|| d.unit.clone());
            entry.label = entry.label.clone().or_else(|| d.label.clone());
            entry.threshold_pct = entry.threshold_pct.or(d.threshold_pct);
        }
    }
    (merged, conflicts)
}

/// `conflicting_declarations`: which file declared `id` which way, and how to settle it.
fn conflict_warning(inputs: &[Saved], names: &[String], id: &str) -> Warning {
    let said: Vec<String> = inputs
        .iter()
        .zip(names)
        .filter_map(|((_, r), name)| {
            r.measurements
                .get(id)
                .and_then(|d| d.direction)
                .map(|b| format!("{name}: {}", b.as_str()))
        })
        .collect();
    Warning::new(
        WarningKind::ConflictingDeclarations,
        format!(
            "the results declare {id} differently ({}): no verdict for it",
            said.join(", ")
        ),
        format!("settle it with --measure {id}=higher or --measure {id}=lower"),
    )
}

/// Whether some input declares a direction for `id` (so an id without one after merging was
/// declared both ways, not never).
fn declared_by_a_file(inputs: &[Saved], id: &str) -> bool {
    inputs
        .iter()
        .any(|(_, r)| r.measurements.get(id).and_then(|d| d.direction).is_some())
}

/// After comparing: ids the files declared both ways get a note on each of their comparisons
/// (they have their `conflicting_declarations` warning); ids nobody declared get the
/// `undeclared_measurement` warning.
pub fn explain_undeclared(
    inputs: &[Saved],
    comparisons: &mut [Comparison],
    decl: &Declarations,
) -> Option<Warning> {
    let mut undeclared = declarations::undeclared(comparisons.iter().map(|c| &c.measurement), decl);
    for c in comparisons.iter_mut() {
        if undeclared.contains(&c.measurement) && declared_by_a_file(inputs, &c.measurement) {
            c.note = Some(format!(
                "no verdict: the results declare {} differently",
                c.measurement
            ));
        }
    }
    undeclared.retain(|id| !declared_by_a_file(inputs, id));
    declarations::undeclared_warning(&undeclared)
}

/// Why `--fail-on-regression` cannot gate on a watched id: it was compared but has no direction
/// (never declared, or declared both ways by the files), so it could never be a regression and
/// the gate would pass whatever happened. Names the id and how to settle it.
pub fn unjudgeable(
    inputs: &[Saved],
    comparisons: &[Comparison],
    decl: &Declarations,
    watched: &[String],
) -> Option<String> {
    let id = watched.iter().find(|id| {
        comparisons.iter().any(|c| &c.measurement == *id)
            && declarations::direction(id, decl).is_none()
    })?;
    Some(declarations::cannot_gate(
        &visible(id),
        declared_by_a_file(inputs, id),
    ))
}
