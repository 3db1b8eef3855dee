//! The sweep table people paste into issues: one measurement, a row per swept value (client
//! count, connections), a column per variant, each cell the median with its verdict against
//! the first column. Built from the result alone, so every format shows the same table.

use rigor_model::declarations;
use rigor_model::result::{RunResult, Verdict};
use std::collections::BTreeMap;

/// One pivot table: the rows that share every variable but the swept one.
#[derive(Debug, Clone, PartialEq)]
pub struct Pivot {
    /// The measurement id shown.
    pub measurement: String,
    /// Its label with its unit, as the tables name it.
    pub label: String,
    /// The variable whose values are the table's rows.
    pub swept: String,
    /// The other variables, the same for every cell of this table (empty when there are none).
    pub fixed: BTreeMap<String, String>,
    /// The variants, baseline first (`None`: rows without a variant).
    pub columns: Vec<Option<String>>,
    /// In the swept variable's order (numeric when every value is a number).
    pub rows: Vec<PivotRow>,
}

/// One swept value across the variants.
#[derive(Debug, Clone, PartialEq)]
pub struct PivotRow {
    pub value: String,
    /// One per column; `None` where that variant has no figure for this value.
    pub cells: Vec<Option<PivotCell>>,
}

/// The figure of one row: its spread, and how it compares with the first column's.
#[derive(Debug, Clone, PartialEq)]
pub struct PivotCell {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation of the kept iterations (a fraction; NaN where the mean is 0).
    pub cv: f64,
    pub n: usize,
    /// Change of the median against the first column, %; `None` in the first column.
    pub change_pct: Option<f64>,
    /// The comparison's verdict against the first column, when one was made.
    pub verdict: Option<Verdict>,
}

/// The measurement a pivot shows when none is asked for: the one self-reported figure (`cmd.*`)
/// when the rows have exactly one and some variable is swept; `None` otherwise.
pub fn default_measurement(result: &RunResult) -> Option<String> {
    let mut ids: Vec<&String> = result
        .rows
        .iter()
        .flat_map(|r| r.summary.keys())
        .filter(|id| id.starts_with("cmd."))
        .collect();
    ids.sort();
    ids.dedup();
    match ids.as_slice() {
        [one] if swept_variable(result, one).is_some() => Some((*one).clone()),
        _ => None,
    }
}

/// The variable a pivot of `id` sweeps: among the rows that have `id`, the one with the most
/// distinct values (a tie goes to the one whose values are all numbers, then the last name);
/// `None` when no variable takes two values.
pub fn swept_variable(result: &RunResult, id: &str) -> Option<String> {
    let mut values: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for row in result.rows.iter().filter(|r| r.summary.contains_key(id)) {
        for (k, v) in &row.variables {
            let seen = values.entry(k).or_default();
            if !seen.contains(&v.as_str()) {
                seen.push(v);
            }
        }
    }
    values
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .max_by_key(|(k, v)| (v.len(), v.iter().all(|x| x.parse::<f64>().is_ok()), *k))
        .map(|(k, _)| k.to_string())
}

/// The pivot tables of `id` swept over `by` (default: [`swept_variable`]): one per combination
/// of the other variables, in the order the rows first appear. Empty when nothing is swept.
pub fn build(result: &RunResult, id: &str, by: Option<&str>) -> Vec<Pivot> {
    let Some(swept) = by
        .map(str::to_string)
        .or_else(|| swept_variable(result, id))
    else {
        return Vec::new();
    };
    let label = declarations::label(id, &result.measurements);
    let columns = columns(result, id);
    let mut tables: Vec<Pivot> = Vec::new();
    for row in result.rows.iter().filter(|r| r.summary.contains_key(id)) {
        let Some(value) = row.variables.get(&swept) else {
            continue;
        };
        let mut fixed = row.variables.clone();
        fixed.remove(&swept);
        let at = match tables.iter().position(|t| t.fixed == fixed) {
            Some(i) => i,
            None => {
                tables.push(Pivot {
                    measurement: id.to_string(),
                    label: label.clone(),
                    swept: swept.clone(),
                    fixed,
                    columns: columns.clone(),
                    rows: Vec::new(),
                });
                tables.len() - 1
            }
        };
        let table = &mut tables[at];
        let r = match table.rows.iter().position(|r| &r.value == value) {
            Some(i) => i,
            None => {
                table.rows.push(PivotRow {
                    value: value.clone(),
                    cells: vec![None; columns.len()],
                });
                table.rows.len() - 1
            }
        };
        let col = columns.iter().position(|c| *c == row.variant).unwrap_or(0);
        let s = &row.summary[id];
        table.rows[r].cells[col] = Some(PivotCell {
            median: s.median,
            min: s.min,
            max: s.max,
            cv: s.cv,
            n: s.n,
            change_pct: None,
            verdict: None,
        });
    }
    for t in &mut tables {
        sort_rows(&mut t.rows);
        judge(t, result);
    }
    tables
}

/// The variants of the rows that have `id`, baseline first as the run ordered them.
fn columns(result: &RunResult, id: &str) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> = Vec::new();
    for row in result.rows.iter().filter(|r| r.summary.contains_key(id)) {
        if !out.contains(&row.variant) {
            out.push(row.variant.clone());
        }
    }
    // The comparisons name the baseline: it goes first.
    if let Some(base) = result.comparisons.first().map(|c| Some(c.baseline.clone())) {
        if let Some(i) = out.iter().position(|c| *c == base) {
            let b = out.remove(i);
            out.insert(0, b);
        }
    }
    out
}

/// Numeric order when every value is a number, else the order of first appearance.
fn sort_rows(rows: &mut [PivotRow]) {
    let numbers: Option<Vec<f64>> = rows.iter().map(|r| r.value.parse::<f64>().ok()).collect();
    if numbers.is_some() {
        rows.sort_by(|a, b| {
            let (x, y) = (a.value.parse::<f64>(), b.value.parse::<f64>());
            x.unwrap_or(0.0).total_cmp(&y.unwrap_or(0.0))
        });
    }
}

/// Each cell's change against the first column and the comparison's verdict for it.
fn judge(t: &mut Pivot, result: &RunResult) {
    let Some(Some(base)) = t.columns.first().cloned() else {
        return;
    };
    for row in &mut t.rows {
        let mut vars = t.fixed.clone();
        vars.insert(t.swept.clone(), row.value.clone());
        let base_median = row.cells[0].as_ref().map(|c| c.median);
        for (col, cell) in t.columns.iter().zip(row.cells.iter_mut()).skip(1) {
            let (Some(cell), Some(name)) = (cell.as_mut(), col) else {
                continue;
            };
            if let Some(b) = base_median.filter(|b| *b != 0.0) {
                cell.change_pct = Some((cell.median / b - 1.0) * 100.0);
            }
            cell.verdict = result
                .comparisons
                .iter()
                .find(|c| {
                    c.measurement == t.measurement
                        && c.baseline == base
                        && &c.candidate == name
                        && c.row == vars
                })
                .map(|c| c.verdict);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigor_analysis::summary::{summarize_row, tests::row_with};
    use rigor_model::result::Comparison;

    /// Rows gc × clients × variants with `cmd.mps` = clients × 1000 (× 0.8 for `slow`).
    fn sweep() -> RunResult {
        let mut result = crate::sample::sample_result();
        result.rows.clear();
        result.comparisons.clear();
        for gc in ["server", "workstation"] {
            for clients in ["10", "5", "1"] {
                for (variant, f) in [("base", 1.0), ("slow", 0.8)] {
                    let v = clients.parse::<f64>().unwrap() * 1000.0 * f;
                    let mut row = row_with(
                        &[("gc", gc), ("clients", clients)],
                        Some(variant),
                        "cmd.mps",
                        &[v, v * 1.01, v * 0.99],
                    );
                    summarize_row(&mut row);
                    result.rows.push(row);
                }
            }
        }
        result.comparisons.push(Comparison::verdict_only(
            &[("gc", "server"), ("clients", "5")],
            "cmd.mps",
            "base",
            "slow",
            Verdict::Regression,
        ));
        result
    }

    #[test]
    fn one_table_per_fixed_combination_rows_in_numeric_order() {
        let r = sweep();
        assert_eq!(swept_variable(&r, "cmd.mps").as_deref(), Some("clients"));
        assert_eq!(default_measurement(&r).as_deref(), Some("cmd.mps"));
        let tables = build(&r, "cmd.mps", None);
        assert_eq!(tables.len(), 2);
        let t = &tables[0];
        assert_eq!(t.fixed["gc"], "server");
        assert_eq!(t.columns, vec![Some("base".into()), Some("slow".into())]);
        let values: Vec<&str> = t.rows.iter().map(|r| r.value.as_str()).collect();
        assert_eq!(values, ["1", "5", "10"]);
        let five = &t.rows[1];
        let base = five.cells[0].as_ref().unwrap();
        let slow = five.cells[1].as_ref().unwrap();
        assert_eq!(base.median, 5000.0);
        assert_eq!((base.min, base.max, base.n), (4950.0, 5050.0, 3));
        assert!((slow.change_pct.unwrap() + 20.0).abs() < 1e-9);
        assert_eq!(slow.verdict, Some(Verdict::Regression));
        assert_eq!(t.rows[0].cells[1].as_ref().unwrap().verdict, None);
    }

    #[test]
    fn nothing_swept_means_no_table() {
        let mut r = sweep();
        r.rows.truncate(2);
        assert_eq!(swept_variable(&r, "cmd.mps"), None);
        assert!(build(&r, "cmd.mps", None).is_empty());
        assert_eq!(default_measurement(&r), None);
        assert!(build(&sweep(), "cmd.unknown", None).is_empty());
    }
}
