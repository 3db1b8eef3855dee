//! Interleaved rounds as natural pairs: iteration `index` r of every variant of a group ran in
//! the same round r, so the baseline's and the candidate's iteration r saw the same slow drift
//! of the machine. A pair stands on kept iterations of both sides; a round excluded or failed on
//! either side is dropped whole (and counted), never half-used.

use rigor_model::result::Row;
use std::collections::BTreeMap;

/// One measurement's aligned values of two rows, round by round.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairs {
    /// The baseline's value of each paired round.
    pub baseline: Vec<f64>,
    /// The candidate's value of the same rounds, aligned with `baseline`.
    pub candidate: Vec<f64>,
    /// Per paired round, the candidate's minus the baseline's interference (% of the machine's
    /// CPU), where both sides measured it: the covariate of an adjusted comparison.
    pub interference: Vec<Option<f64>>,
    /// Rounds one side ran that could not be paired: excluded, failed or missing the
    /// measurement on either side, or never run by the other.
    pub dropped: usize,
}

/// Pairs the kept iterations of `baseline` and `candidate` by iteration index on measurement
/// `id`. Several kept iterations with one index (a re-run slot) use the last one recorded.
pub fn pair(baseline: &Row, candidate: &Row, id: &str) -> Pairs {
    let by_round = |row: &Row| -> BTreeMap<usize, (f64, Option<f64>)> {
        row.kept_iterations()
            .filter_map(|it| {
                let interference = it.machine.as_ref().and_then(|m| m.interference_pct);
                Some((it.index, (*it.measurements.get(id)?, interference)))
            })
            .collect()
    };
    let rounds = |row: &Row| -> std::collections::BTreeSet<usize> {
        row.iterations.iter().map(|it| it.index).collect()
    };
    let (b, c) = (by_round(baseline), by_round(candidate));
    let mut all = rounds(baseline);
    all.extend(rounds(candidate));
    let mut pairs = Pairs {
        baseline: Vec::new(),
        candidate: Vec::new(),
        interference: Vec::new(),
        dropped: 0,
    };
    for r in all {
        match (b.get(&r), c.get(&r)) {
            (Some((x, xi)), Some((y, yi))) => {
                pairs.baseline.push(*x);
                pairs.candidate.push(*y);
                pairs.interference.push(yi.zip(*xi).map(|(c, b)| c - b));
            }
            _ => pairs.dropped += 1,
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::tests::row_with;
    use rigor_model::result::Exclusion;

    #[test]
    fn rounds_pair_by_index() {
        let b = row_with(&[], Some("a"), "load.rps", &[10.0, 11.0, 12.0]);
        let c = row_with(&[], Some("b"), "load.rps", &[20.0, 21.0, 22.0]);
        let p = pair(&b, &c, "load.rps");
        assert_eq!(p.baseline, vec![10.0, 11.0, 12.0]);
        assert_eq!(p.candidate, vec![20.0, 21.0, 22.0]);
        assert_eq!(p.dropped, 0);
    }

    #[test]
    fn excluded_or_failed_rounds_drop_on_both_sides() {
        let mut b = row_with(&[], Some("a"), "load.rps", &[10.0, 11.0, 12.0, 13.0, 14.0]);
        let mut c = row_with(&[], Some("b"), "load.rps", &[20.0, 21.0, 22.0, 23.0, 24.0]);
        b.iterations[1].excluded = Exclusion::Interference;
        c.iterations[3].error = Some("crashed".into());
        // The candidate's round 4 ran in a different order: pairing is by index, not position.
        c.iterations.swap(0, 4);
        let p = pair(&b, &c, "load.rps");
        assert_eq!(p.baseline, vec![10.0, 12.0, 14.0]);
        assert_eq!(p.candidate, vec![20.0, 22.0, 24.0]);
        assert_eq!(p.dropped, 2);
    }

    #[test]
    fn a_round_only_one_side_ran_is_dropped() {
        let b = row_with(&[], Some("a"), "load.rps", &[10.0, 11.0, 12.0, 13.0]);
        let c = row_with(&[], Some("b"), "load.rps", &[20.0, 21.0]);
        let p = pair(&b, &c, "load.rps");
        assert_eq!(p.baseline.len(), 2);
        assert_eq!(p.dropped, 2);
        let none = pair(&b, &c, "app.rss");
        assert!(none.baseline.is_empty());
        assert_eq!(none.dropped, 4);
    }
}
