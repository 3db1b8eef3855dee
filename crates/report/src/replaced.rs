//! The line that says how many iterations were replaced because the rest of the machine
//! interfered with them, and how many such iterations were kept, so no exclusion goes unsaid.
//! Each one's figures are in its row's warnings.

use super::Block;
use rigor_model::result::{Exclusion, Iteration, Row, RunResult, WarningKind};

/// `replaced: 2 iterations (connections=16: 1, connections=64: 1): …`, or nothing when no
/// iteration was contaminated.
pub fn blocks(result: &RunResult) -> Vec<Block> {
    let replaced = counted(result, |it| it.excluded == Exclusion::Interference);
    let kept = counted(result, |it| it.excluded != Exclusion::Interference);
    let mut sentences = Vec::new();
    if let Some((n, rows)) = replaced {
        sentences.push(format!(
            "replaced: {} {rows}: the rest of the machine (hypervisor steal, other processes) \
             took far more CPU during them than the run's baseline, so each was excluded and \
             re-run in its slot",
            iterations(n)
        ));
    }
    if let Some((n, rows)) = kept {
        sentences.push(format!(
            "kept despite interference far above the run's baseline: {} {rows} (see the \
             warnings)",
            iterations(n)
        ));
    }
    if sentences.is_empty() {
        return Vec::new();
    }
    vec![Block::Text(sentences.join("; "))]
}

/// How many contaminated iterations `pick` selects, and `(label: n, …)` per row.
fn counted(result: &RunResult, pick: impl Fn(&Iteration) -> bool) -> Option<(usize, String)> {
    let per_row: Vec<(&Row, usize)> = result
        .rows
        .iter()
        .map(|r| {
            let n = r
                .iterations
                .iter()
                .filter(|it| contaminated(it) && pick(it))
                .count();
            (r, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    let total: usize = per_row.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return None;
    }
    let rows: Vec<String> = per_row
        .iter()
        .map(|(r, n)| format!("{}: {n}", r.label()))
        .collect();
    Some((total, format!("({})", rows.join(", "))))
}

/// Judged contaminated during the run (the rows a command made copy the exclusion but not
/// the warning, so they are not counted twice).
fn contaminated(it: &Iteration) -> bool {
    it.warnings
        .iter()
        .any(|w| w.kind == WarningKind::Contaminated)
}

fn iterations(n: usize) -> String {
    match n {
        1 => "1 iteration".into(),
        n => format!("{n} iterations"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sample_result;
    use rigor_model::result::Warning;

    fn contaminate(it: &mut Iteration, excluded: bool) {
        it.warnings.push(Warning::of(
            WarningKind::Contaminated,
            "interference 23.4% (steal 20.1%) vs the run's 2.0%: excluded and re-run",
        ));
        if excluded {
            it.excluded = Exclusion::Interference;
        }
    }

    #[test]
    fn replaced_and_kept_iterations_are_counted_per_row() {
        let mut r = sample_result();
        assert!(blocks(&r).is_empty());
        contaminate(&mut r.rows[0].iterations[1], true);
        contaminate(&mut r.rows[1].iterations[0], true);
        contaminate(&mut r.rows[1].iterations[2], false);
        let [Block::Text(text)] = &blocks(&r)[..] else {
            panic!("one sentence")
        };
        assert_eq!(
            text,
            "replaced: 2 iterations (connections=16: 1, connections=64: 1): the rest of the \
             machine (hypervisor steal, other processes) took far more CPU during them than the \
             run's baseline, so each was excluded and re-run in its slot; kept despite \
             interference far above the run's baseline: 1 iteration (connections=64: 1) (see \
             the warnings)"
        );
    }
}
