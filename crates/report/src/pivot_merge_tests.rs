//! `rigor compare`'s pivot of several saved results, drawn: each file a column, verdicts kept
//! with their rows.

use crate::{pivot, View};
use rigor_analysis::pivot_merge::merged;
use rigor_analysis::saved::Saved;
use rigor_analysis::summary::{summarize_row, tests::row_with};
use rigor_model::result::Comparison;
use rigor_model::result::Verdict;

/// A saved result of a `clients` sweep with `cmd.mps` = clients × `f` × 1000.
fn saved(name: &str, f: f64) -> Saved {
    let mut r = crate::sample::sample_result();
    r.rows.clear();
    r.comparisons.clear();
    for clients in ["1", "2"] {
        let v = clients.parse::<f64>().unwrap() * 1000.0 * f;
        let mut row = row_with(&[("clients", clients)], None, "cmd.mps", &[v, v, v]);
        summarize_row(&mut row);
        r.rows.push(row);
    }
    (format!("{name}.json").into(), r)
}

#[test]
fn files_become_columns_and_verdicts_stay_with_their_rows() {
    let inputs = vec![saved("a", 1.0), saved("b", 0.5)];
    let names = vec!["a".to_string(), "b".to_string()];
    let scenario = inputs[0].1.scenario.clone();
    let mut c = Comparison::verdict_only(
        &[("clients", "2"), ("scenario", &scenario)],
        "cmd.mps",
        "a",
        "b",
        Verdict::Regression,
    );
    c.scenario = scenario;
    let m = merged(&inputs, &names, &[c]);
    assert_eq!(m.rows.len(), 4);
    let tables = pivot::build(&m, "cmd.mps", None);
    assert_eq!(tables.len(), 1);
    let t = &tables[0];
    assert_eq!(t.columns, vec![Some("a".into()), Some("b".into())]);
    let two = t.rows[1].cells[1].as_ref().unwrap();
    assert_eq!(two.median, 1000.0);
    assert_eq!(two.verdict, Some(Verdict::Regression));
    assert!((two.change_pct.unwrap() + 50.0).abs() < 1e-9);
    assert_eq!(crate::pivot_blocks::problem(&m, &View::default()), None);
}

#[test]
fn verdicts_put_in_after_the_merge_and_rows_moved_in_give_the_same_result() {
    let inputs = vec![saved("a", 1.0), saved("b", 0.5)];
    let names = vec!["a".to_string(), "b".to_string()];
    let scenario = inputs[0].1.scenario.clone();
    let mut c = Comparison::verdict_only(
        &[("clients", "1"), ("scenario", &scenario)],
        "cmd.mps",
        "a",
        "b",
        Verdict::Regression,
    );
    c.scenario = scenario;
    let at_once = merged(&inputs, &names, std::slice::from_ref(&c));
    let mut after = merged(&inputs, &names, &[]);
    assert!(after.comparisons.is_empty());
    rigor_analysis::pivot_merge::with_comparisons(&mut after, std::slice::from_ref(&c));
    assert_eq!(
        serde_json::to_value(&after).unwrap(),
        serde_json::to_value(&at_once).unwrap()
    );
    assert!(!after.comparisons[0].row.contains_key("scenario"));
    // The first file's run stays whole around the rows: only its rows and comparisons change.
    assert_eq!(after.environment, inputs[0].1.environment);
    assert_eq!(after.started_at, inputs[0].1.started_at);
    assert_eq!(after.rows.len(), 4);
    // Moving the files' rows into the merge gives what copying them does.
    let owned = rigor_analysis::pivot_merge::merged_owned(inputs, &names, std::slice::from_ref(&c));
    assert_eq!(
        serde_json::to_value(&owned).unwrap(),
        serde_json::to_value(&at_once).unwrap()
    );
}

#[test]
fn one_file_keeps_its_variants_as_the_pivots_columns() {
    let (path, mut r) = saved("run", 1.0);
    for row in &mut r.rows {
        row.variant = Some("base".into());
    }
    let mut slow = r.rows.clone();
    for row in &mut slow {
        row.variant = Some("slow".into());
    }
    r.rows.extend(slow);
    let mut c = Comparison::verdict_only(
        &[("clients", "2")],
        "cmd.mps",
        "base",
        "slow",
        Verdict::NoChange,
    );
    c.scenario = r.scenario.clone();
    let inputs = vec![(path, r)];
    let names = vec!["run".to_string()];
    let m = merged(&inputs, &names, std::slice::from_ref(&c));
    let tables = pivot::build(&m, "cmd.mps", None);
    assert_eq!(tables.len(), 1, "{tables:?}");
    let t = &tables[0];
    assert_eq!(t.columns, vec![Some("base".into()), Some("slow".into())]);
    assert_eq!(
        t.rows[1].cells[1].as_ref().unwrap().verdict,
        Some(Verdict::NoChange)
    );
    // Two files: each file a column, the variants rows of their own.
    let two = vec![inputs[0].clone(), inputs[0].clone()];
    let m = merged(&two, &["a".into(), "b".into()], &[]);
    assert_eq!(pivot::build(&m, "cmd.mps", None).len(), 2);
}
