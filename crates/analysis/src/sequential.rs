//! `--until-conclusive` looks again after every added round; a fresh 95% test at each look would
//! raise the false-alarm rate with every look. Each look instead tests at the nominal confidence
//! of a group-sequential rule, and the final verdicts use the confidence of the group's last
//! look, so a saved result re-analyses to the same verdicts.

use super::CONFIDENCE;
use rigor_model::result::{Row, Sequential};
use rigor_stats::LookPlan;
use std::sync::Mutex;

/// The looks solved so far, one plan per (max, confidence): a run re-analyses after every
/// round, and each round adds one look to the same sequence, which the plan solves as one
/// more step rather than from the start.
static PLANS: Mutex<Vec<LookPlan>> = Mutex::new(Vec::new());

/// Plans kept at most; a run uses one or two.
const MAX_PLANS: usize = 8;

/// Rounds a group has run: one past the highest iteration index of any of its rows (failed and
/// excluded iterations count: their round was run).
pub fn rounds_done(rows: &[&Row]) -> usize {
    rows.iter()
        .flat_map(|r| r.iterations.iter().map(|it| it.index + 1))
        .max()
        .unwrap_or(0)
}

/// The looks of a run with `planned` rounds that may grow to `max` and has run `done`: one at
/// the planned rounds, then one after every added round. `None` without `--until-conclusive`.
pub fn looks(planned: usize, done: usize, max: Option<usize>) -> Option<Sequential> {
    let max = max?;
    let looks = if done <= planned {
        vec![done.max(1)]
    } else {
        (planned..=done).collect()
    };
    Some(Sequential { looks, max })
}

/// The confidence a group that has run `rounds` judges at: the nominal level of its last look
/// (the run's looks up to its own rounds: a group that settled early stopped looking), or
/// [`CONFIDENCE`] for a run without looks.
pub fn confidence(sequential: Option<&Sequential>, rounds: usize) -> f64 {
    let Some(seq) = sequential else {
        return CONFIDENCE;
    };
    let mine: Vec<usize> = seq.looks.iter().copied().filter(|l| *l <= rounds).collect();
    if mine.is_empty() {
        return CONFIDENCE;
    }
    look_confidence(&mine, seq.max, CONFIDENCE)
}

/// [`rigor_stats::look_confidence`], with the boundaries of earlier calls reused.
fn look_confidence(looks: &[usize], max: usize, confidence: f64) -> f64 {
    let Ok(mut plans) = PLANS.lock() else {
        return rigor_stats::look_confidence(looks, max, confidence);
    };
    let position = plans.iter().position(|p| p.key() == (max, confidence));
    let mut plan = match position {
        Some(i) => plans.remove(i),
        None => LookPlan::new(max, confidence),
    };
    let level = plan.confidence_at(looks);
    plans.push(plan);
    if plans.len() > MAX_PLANS {
        plans.remove(0);
    }
    level
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::tests::row_with;

    #[test]
    fn looks_start_at_the_planned_rounds() {
        assert_eq!(looks(10, 10, None), None);
        assert_eq!(looks(10, 13, Some(20)).unwrap().looks, vec![10, 11, 12, 13]);
        assert_eq!(looks(10, 10, Some(20)).unwrap().looks, vec![10]);
        assert_eq!(looks(10, 4, Some(20)).unwrap().looks, vec![4]);
    }

    #[test]
    fn a_group_judges_at_its_own_last_look() {
        let seq = looks(10, 13, Some(20)).unwrap();
        let early = confidence(Some(&seq), 10);
        let late = confidence(Some(&seq), 13);
        assert_eq!(early, rigor_stats::look_confidence(&[10], 20, 0.95));
        assert_eq!(
            late,
            rigor_stats::look_confidence(&[10, 11, 12, 13], 20, 0.95)
        );
        assert!(early > 0.95 && late > 0.95);
        assert_eq!(confidence(None, 13), CONFIDENCE);
        let a = row_with(&[], Some("a"), "load.rps", &[1.0; 13]);
        let b = row_with(&[], Some("b"), "load.rps", &[1.0; 12]);
        assert_eq!(rounds_done(&[&a, &b]), 13);
    }
}
