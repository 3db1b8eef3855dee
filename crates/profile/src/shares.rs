//! Which functions grew: each function's inclusive share of a profile's samples (the samples
//! whose stack contains it anywhere, counted once per sample however deep it recurses), on
//! both sides of a comparison, the largest increase first.

use crate::Folded;
use std::collections::{BTreeMap, BTreeSet};

/// How many functions a profile diff keeps: the ones whose share moved most.
pub const DIFF_LIMIT: usize = 20;

/// One function's share of the samples on either side, in % of each side's own samples.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionShare {
    pub function: String,
    pub baseline_pct: f64,
    pub candidate_pct: f64,
}

impl FunctionShare {
    /// candidate − baseline, in percentage points.
    pub fn change_pts(&self) -> f64 {
        self.candidate_pct - self.baseline_pct
    }
}

/// Inclusive shares of every function in `folded`, in % of its samples.
fn inclusive(folded: &Folded) -> BTreeMap<&str, f64> {
    let total = folded.total() as f64;
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for (stack, count) in folded.stacks() {
        let frames: BTreeSet<&str> = stack.split(';').collect();
        for f in frames {
            *counts.entry(f).or_default() += count;
        }
    }
    counts
        .into_iter()
        .map(|(f, c)| (f, c as f64 * 100.0 / total))
        .collect()
}

/// The [`DIFF_LIMIT`] functions whose inclusive share changed most between `baseline` and
/// `candidate` (each normalised by its own sample count), ordered by change, the largest
/// increase first; empty when either side has no sample.
pub fn profile_diff(baseline: &Folded, candidate: &Folded) -> Vec<FunctionShare> {
    if baseline.is_empty() || candidate.is_empty() {
        return Vec::new();
    }
    let (b, c) = (inclusive(baseline), inclusive(candidate));
    let names: BTreeSet<&str> = b.keys().chain(c.keys()).copied().collect();
    let mut all: Vec<FunctionShare> = names
        .into_iter()
        .map(|f| FunctionShare {
            function: f.to_string(),
            baseline_pct: b.get(f).copied().unwrap_or(0.0),
            candidate_pct: c.get(f).copied().unwrap_or(0.0),
        })
        .filter(|s| s.change_pts() != 0.0)
        .collect();
    all.sort_by(|x, y| {
        y.change_pts()
            .abs()
            .total_cmp(&x.change_pts().abs())
            .then_with(|| x.function.cmp(&y.function))
    });
    all.truncate(DIFF_LIMIT);
    all.sort_by(|x, y| {
        y.change_pts()
            .total_cmp(&x.change_pts())
            .then_with(|| x.function.cmp(&y.function))
    });
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(text: &str) -> Folded {
        Folded::parse(text).unwrap()
    }

    #[test]
    fn the_function_that_tripled_comes_first_and_the_one_that_shrank_last() {
        // Baseline: hot and cold do equal work; candidate: hot does 3× (normalised: 75% vs
        // 50%), over a different number of samples.
        let base = folded("app;main;hot;work 50\napp;main;cold;work 50\n");
        let cand = folded("app;main;hot;work 300\napp;main;cold;work 100\n");
        let d = profile_diff(&base, &cand);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].function, "hot");
        assert_eq!((d[0].baseline_pct, d[0].candidate_pct), (50.0, 75.0));
        assert_eq!(d[1].function, "cold");
        assert_eq!((d[1].baseline_pct, d[1].candidate_pct), (50.0, 25.0));
    }

    #[test]
    fn shares_are_inclusive_and_recursion_counts_once() {
        let base = folded("a;f;f;f 10\na;g 10\n");
        let cand = folded("a;f 5\na;g 15\n");
        let d = profile_diff(&base, &cand);
        let f = d.iter().find(|s| s.function == "f").unwrap();
        assert_eq!((f.baseline_pct, f.candidate_pct), (50.0, 25.0));
        assert_eq!(d[0].function, "g");
        assert!(
            d.iter().all(|s| s.function != "a"),
            "unchanged 100% left out"
        );
    }

    #[test]
    fn a_function_on_one_side_only_has_zero_on_the_other() {
        let d = profile_diff(&folded("m;old 4\n"), &folded("m;new 4\n"));
        assert_eq!(d[0].function, "new");
        assert_eq!((d[0].baseline_pct, d[0].candidate_pct), (0.0, 100.0));
        assert_eq!(d[1].function, "old");
    }

    #[test]
    fn an_empty_side_gives_no_diff_and_the_list_is_capped() {
        assert!(profile_diff(&Folded::default(), &folded("m 1\n")).is_empty());
        let many: String = (0..50).map(|i| format!("m;f{i} {}\n", i + 1)).collect();
        let d = profile_diff(&folded("m;x 1\n"), &folded(&many));
        assert_eq!(d.len(), DIFF_LIMIT);
        assert!(d.windows(2).all(|w| w[0].change_pts() >= w[1].change_pts()));
    }
}
