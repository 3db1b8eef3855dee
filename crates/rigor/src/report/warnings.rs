//! Warnings in a report: each said once, where it belongs. A warning that says the run cannot
//! answer its question comes before the tables; the rest are listed after them, an iteration
//! warning repeated across a row's iterations once with the iterations it came from.

use super::{Block, Cell, Style};
use crate::result::{Row, RunResult, Warning, WarningKind};

/// `[kind] message — advice`
pub fn warning_text(w: &Warning) -> String {
    if w.advice.is_empty() {
        format!("[{}] {}", w.kind, w.message)
    } else {
        format!("[{}] {} — {}", w.kind, w.message, w.advice)
    }
}

/// Whether a warning is said before any table: it says the run cannot answer its question,
/// whatever the figures are.
pub fn up_front(w: &Warning) -> bool {
    w.kind == WarningKind::TooFewIterations
}

/// The list of warnings said before the tables, if any.
pub fn up_front_block<'a>(warnings: impl IntoIterator<Item = &'a Warning>) -> Option<Block> {
    let items: Vec<Cell> = warnings
        .into_iter()
        .filter(|w| up_front(w))
        .map(|w| Cell::styled(warning_text(w), Style::Warning))
        .collect();
    (!items.is_empty()).then_some(Block::List(items))
}

/// The `warnings` section: a heading and the list, or nothing when `items` is empty.
pub fn section(items: Vec<Cell>) -> Vec<Block> {
    if items.is_empty() {
        return Vec::new();
    }
    vec![Block::Heading(2, "warnings".into()), Block::List(items)]
}

/// Warnings not said up front, as list items.
pub fn items<'a>(warnings: impl IntoIterator<Item = &'a Warning>) -> Vec<Cell> {
    warnings
        .into_iter()
        .filter(|w| !up_front(w))
        .map(|w| Cell::styled(warning_text(w), Style::Warning))
        .collect()
}

/// Run, row and iteration warnings of a run, each once.
pub fn run_items(result: &RunResult) -> Vec<Cell> {
    let mut out = items(&result.warnings);
    for row in &result.rows {
        out.extend(row_items(row));
    }
    out
}

/// A row's own warnings, then its iterations' warnings grouped by kind and message.
fn row_items(row: &Row) -> Vec<Cell> {
    let label = row.label();
    let mut out: Vec<Cell> = row
        .warnings
        .iter()
        .map(|w| Cell::styled(format!("{label}: {}", warning_text(w)), Style::Warning))
        .collect();
    for (w, numbers) in grouped_by_iteration(row) {
        out.push(Cell::styled(
            format!(
                "{label} · {}: {}",
                iterations_named(&numbers),
                warning_text(w)
            ),
            Style::Warning,
        ));
    }
    out
}

/// Each distinct iteration warning of a row (same kind and message) with the numbers of the
/// iterations that said it, in order of first appearance.
fn grouped_by_iteration(row: &Row) -> Vec<(&Warning, Vec<usize>)> {
    let mut grouped: Vec<(&Warning, Vec<usize>)> = Vec::new();
    for it in &row.iterations {
        for w in &it.warnings {
            match grouped
                .iter_mut()
                .find(|(g, _)| g.kind == w.kind && g.message == w.message)
            {
                Some((_, numbers)) => numbers.push(it.number()),
                None => grouped.push((w, vec![it.number()])),
            }
        }
    }
    grouped
}

/// `iteration 3` or `iterations 1, 2`.
fn iterations_named(numbers: &[usize]) -> String {
    match numbers {
        [one] => format!("iteration {one}"),
        many => format!(
            "iterations {}",
            many.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_names_the_kind_and_adds_the_advice_when_there_is_one() {
        let w = Warning::new(WarningKind::Proxy, "through nginx", "");
        assert_eq!(warning_text(&w), "[proxy] through nginx");
        let w = Warning::new(WarningKind::Steal, "stole 5%", "move");
        assert_eq!(warning_text(&w), "[steal] stole 5% — move");
    }

    #[test]
    fn too_few_iterations_goes_up_front_and_nowhere_else() {
        let few = Warning::of(WarningKind::TooFewIterations, "2 per variant");
        let steal = Warning::new(WarningKind::Steal, "stole 5%", "");
        let both = [few.clone(), steal.clone()];
        let Some(Block::List(first)) = up_front_block(&both) else {
            panic!("no up-front block")
        };
        assert_eq!(
            first,
            vec![Cell::styled(warning_text(&few), Style::Warning)]
        );
        assert_eq!(
            items(&both),
            vec![Cell::styled("[steal] stole 5%", Style::Warning)]
        );
        assert!(up_front_block(&[steal]).is_none());
        assert!(section(Vec::new()).is_empty());
    }
}
