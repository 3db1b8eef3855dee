//! `rigor compare`'s pivot: the saved results' rows in one result whose variants are the files
//! (a row's own variant becomes a variable), so the same pivot tables show a sweep run twice —
//! before and after a change — with a column per file and the comparison's verdicts.

use crate::saved::Saved;
use rigor_model::result::{Comparison, Row, RunResult};

/// The rows of every input, each tagged with its file's column name as its variant, and the
/// comparisons keyed as those rows are (`scenario` is the rows' own, not a variable). The rows
/// carry their summaries: [`crate::saved::load`] completes those a file did not keep.
pub fn merged(inputs: &[Saved], names: &[String], comparisons: &[Comparison]) -> RunResult {
    let mut result = header(&inputs[0].1);
    let alone = inputs.len() == 1;
    for ((_, input), name) in inputs.iter().zip(names) {
        for row in &input.rows {
            result
                .rows
                .push(tagged(row.clone(), &input.scenario, name, alone));
        }
        declare(&mut result, input);
    }
    with_comparisons(&mut result, comparisons);
    result
}

/// [`merged`], taking the results: their rows are moved into the merge, not copied, for a
/// caller that reads nothing of them afterwards (with many rows, a copy doubles the memory).
pub fn merged_owned(inputs: Vec<Saved>, names: &[String], comparisons: &[Comparison]) -> RunResult {
    let mut result = header(&inputs[0].1);
    let alone = inputs.len() == 1;
    for ((_, mut input), name) in inputs.into_iter().zip(names) {
        for row in std::mem::take(&mut input.rows) {
            result.rows.push(tagged(row, &input.scenario, name, alone));
        }
        declare(&mut result, &input);
    }
    with_comparisons(&mut result, comparisons);
    result
}

/// A file's row as the merge holds it: its own scenario, its variant a variable, the file's
/// column name its variant. A file compared `alone` (its own variants against each other)
/// keeps its variants: they are the pivot's columns, as in the report of its run.
fn tagged(mut row: Row, scenario: &str, name: &str, alone: bool) -> Row {
    row.scenario = row.key_in(scenario).scenario;
    if alone && row.variant.is_some() {
        return row;
    }
    if let Some(v) = row.variant.take() {
        row.variables.insert("variant".into(), v);
    }
    row.variant = Some(name.to_string());
    row
}

/// The measurement declarations of `input` the merge does not have yet (the first file's win).
fn declare(result: &mut RunResult, input: &RunResult) {
    for (id, d) in &input.measurements {
        result
            .measurements
            .entry(id.clone())
            .or_insert_with(|| d.clone());
    }
}

/// Puts `comparisons` into a merged result, keyed as its rows are: what `rigor compare` does
/// once it has compared, instead of merging every row a second time.
pub fn with_comparisons(merged: &mut RunResult, comparisons: &[Comparison]) {
    merged.comparisons = comparisons
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.row.remove("scenario");
            c
        })
        .collect();
}

/// Everything of `first` but its rows and comparisons, without copying those first: with ten
/// thousand rows a whole clone is as large as the merge itself. Every field is named, so a new
/// one is a compile error here rather than silently left out.
fn header(first: &RunResult) -> RunResult {
    let RunResult {
        schema,
        rigor_version,
        scenario,
        profile,
        description,
        started_at,
        finished_at,
        status,
        seed,
        environment,
        warnings,
        builds,
        rows: _,
        comparisons: _,
        measurements,
        sequential,
        noise_floor,
        cross_check,
        limits,
        profiles,
    } = first;
    RunResult {
        schema: schema.clone(),
        rigor_version: rigor_version.clone(),
        scenario: scenario.clone(),
        profile: profile.clone(),
        description: description.clone(),
        started_at: started_at.clone(),
        finished_at: finished_at.clone(),
        status: status.clone(),
        seed: *seed,
        environment: environment.clone(),
        warnings: warnings.clone(),
        builds: builds.clone(),
        rows: Vec::new(),
        comparisons: Vec::new(),
        measurements: measurements.clone(),
        sequential: sequential.clone(),
        noise_floor: noise_floor.clone(),
        cross_check: cross_check.clone(),
        limits: limits.clone(),
        profiles: profiles.clone(),
    }
}
