//! The limits of a run (`[[limits]]`, `--limit`), one line each, ✓ or ✗ with the measured value
//! and the row it was measured on: the pass/fail a reader looks for first, so its own block that
//! goes near the top of the report.

use super::format::number;
use super::{Block, Cell, Style};
use rigor_analysis::limits::Outcome;
use rigor_model::result::RowKey;

/// The limits block: nothing when the run has no limits.
pub fn blocks(outcomes: &[Outcome]) -> Vec<Block> {
    if outcomes.is_empty() {
        return Vec::new();
    }
    let failed = outcomes.iter().filter(|o| !o.passed).count();
    let head = match failed {
        0 => format!("limits: all {} met", outcomes.len()),
        n => format!("limits: {n} of {} not met", outcomes.len()),
    };
    vec![
        Block::Text(head),
        Block::List(outcomes.iter().map(line).collect()),
    ]
}

/// The limits of `rigor compare --limit`, file by file: each line as [`line`] says it, after
/// the file's column name. Empty without limits.
pub fn per_file(files: &[(String, Vec<Outcome>)]) -> Vec<Block> {
    let all: Vec<&Outcome> = files.iter().flat_map(|(_, o)| o).collect();
    if all.is_empty() {
        return Vec::new();
    }
    let failed = all.iter().filter(|o| !o.passed).count();
    let head = match failed {
        0 => format!("limits: all {} met", all.len()),
        n => format!("limits: {n} of {} not met", all.len()),
    };
    let items = files
        .iter()
        .flat_map(|(name, outcomes)| {
            outcomes.iter().map(move |o| {
                let mut c = line(o);
                c.text = format!("{name}: {}", c.text);
                c
            })
        })
        .collect();
    vec![Block::Text(head), Block::List(items)]
}

/// `✓ load.latency.p99 < 50ms: 3.21 ms (plaintext connections=64 base)`.
pub fn line(o: &Outcome) -> Cell {
    let mark = if o.passed { "✓" } else { "✗" };
    let value = match o.value {
        Some(v) if o.unit.is_empty() || o.unit == "count" => number(v),
        Some(v) => format!("{} {}", number(v), o.unit),
        None => "not measured by any row".into(),
    };
    let key = RowKey {
        scenario: o.scenario.clone(),
        variables: o.variables.clone(),
        variant: o.variant.clone(),
    };
    let at = if o.value.is_some() {
        format!(" ({})", key.label())
    } else {
        String::new()
    };
    let style = if o.passed {
        Style::Improvement
    } else {
        Style::Regression
    };
    Cell::styled(
        format!("{mark} {} {}: {value}{at}", o.measure, o.condition),
        style,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(value: Option<f64>, passed: bool) -> Outcome {
        Outcome {
            measure: "load.latency.p99".into(),
            condition: "< 50ms".into(),
            bound: Some(50.0),
            scenario: "plaintext".into(),
            variables: [("connections".to_string(), "64".to_string())].into(),
            variant: Some("slow".into()),
            value,
            unit: "ms".into(),
            passed,
        }
    }

    #[test]
    fn each_limit_is_one_line_with_its_value() {
        let blocks = blocks(&[outcome(Some(3.214), true), outcome(Some(1234.5), false)]);
        let [Block::Text(head), Block::List(items)] = blocks.as_slice() else {
            panic!("{blocks:?}");
        };
        assert_eq!(head, "limits: 1 of 2 not met");
        assert_eq!(
            items[0].text,
            "✓ load.latency.p99 < 50ms: 3.21 ms (plaintext connections=64 slow)"
        );
        assert_eq!(items[0].style, Style::Improvement);
        assert_eq!(
            items[1].text,
            "✗ load.latency.p99 < 50ms: 1,234 ms (plaintext connections=64 slow)"
        );
        assert_eq!(items[1].style, Style::Regression);
        assert_eq!(
            line(&outcome(None, false)).text,
            "✗ load.latency.p99 < 50ms: not measured by any row"
        );
        assert!(super::blocks(&[]).is_empty());
    }
}
