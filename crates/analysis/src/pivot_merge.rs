//! `rigor compare`'s pivot: the saved results' rows in one result whose variants are the files
//! (a row's own variant becomes a variable), so the same pivot tables show a sweep run twice —
//! before and after a change — with a column per file and the comparison's verdicts.

use crate::saved::Saved;
use rigor_model::result::{Comparison, RunResult};

/// The rows of every input, each tagged with its file's column name as its variant, and the
/// comparisons keyed as those rows are (`scenario` is the rows' own, not a variable). The rows
/// carry their summaries: [`crate::saved::load`] completes those a file did not keep.
pub fn merged(inputs: &[Saved], names: &[String], comparisons: &[Comparison]) -> RunResult {
    let mut result = inputs[0].1.clone();
    result.rows.clear();
    result.comparisons.clear();
    for ((_, input), name) in inputs.iter().zip(names) {
        for row in &input.rows {
            let mut row = row.clone();
            row.scenario = row.key_in(&input.scenario).scenario;
            if let Some(v) = row.variant.take() {
                row.variables.insert("variant".into(), v);
            }
            row.variant = Some(name.clone());
            result.rows.push(row);
        }
        for (id, d) in &input.measurements {
            result
                .measurements
                .entry(id.clone())
                .or_insert_with(|| d.clone());
        }
    }
    result.comparisons = comparisons
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.row.remove("scenario");
            c
        })
        .collect();
    result
}
