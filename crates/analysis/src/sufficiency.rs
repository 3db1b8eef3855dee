//! How many iterations a comparison needs: the smallest per-side count that can ever reach
//! significance, and the advice built on it. One place, so the warning given before a run, the
//! note on a comparison after it and `rigor compare`'s advice always name the same number.

use super::CONFIDENCE;
use rigor_model::result::{Warning, WarningKind};

/// Largest iteration count advice will look for before giving up: beyond it the samples vary too
/// much for more iterations to be a practical answer.
pub const MAX_SUGGESTED_ITERATIONS: usize = 100;

/// Whether `nb` against `nc` kept iterations can ever show a significant difference, however
/// clear: below that no verdict is possible.
pub fn can_reach(nb: usize, nc: usize) -> bool {
    rigor_stats::can_ever_be_significant(nb, nc, CONFIDENCE)
}

/// The smallest per-side count of kept iterations, from `from` up, that can ever reach
/// significance (None past [`MAX_SUGGESTED_ITERATIONS`]).
fn smallest_sufficient(from: usize) -> Option<usize> {
    (from.max(1)..=MAX_SUGGESTED_ITERATIONS).find(|&n| can_reach(n, n))
}

/// The confidence as people read it (`95`).
fn confidence_pct() -> f64 {
    (CONFIDENCE * 100.0).round()
}

/// The note of a comparison whose samples are too small for any test to reach significance:
/// the smallest per-side count that could, or the statistics' estimate `settle` of what would
/// settle it if larger, plus the `excluded` iterations `--exclude` will drop again. `pointing`
/// (the medians' change in % and the test's p) says what the data point to meanwhile, so a
/// clear change left without a verdict is still read: `+141%, p = 0.10`.
pub fn too_few_note(
    nb: usize,
    nc: usize,
    excluded: usize,
    settle: Option<usize>,
    pointing: Option<(f64, f64)>,
) -> String {
    let need = smallest_sufficient(nb.max(nc)).map(|n| {
        n.max(
            settle
                .filter(|&s| s <= MAX_SUGGESTED_ITERATIONS)
                .unwrap_or(0),
        )
    });
    let advice = match need {
        Some(n) if excluded > 0 => format!(
            "run more iterations (-i {}: {n} kept after excluding {excluded})",
            n + excluded
        ),
        Some(n) => format!("run more iterations (-i {n})"),
        None => "run more iterations".to_string(),
    };
    let mut note = format!(
        "n={nb} vs {nc} can never reach {}% confidence: {advice}",
        confidence_pct()
    );
    if let (Some((change, p)), Some(n)) = (pointing, need) {
        if change.is_finite() && p.is_finite() {
            note.push_str(&format!(
                "; the data point to {}, p = {}: {} iterations per side would decide",
                rigor_model::format::signed_pct(change),
                rigor_model::format::p_value(p),
                in_words(n)
            ));
        }
    }
    note
}

/// Small counts in words, as a sentence reads them (`four iterations`); larger as digits.
fn in_words(n: usize) -> String {
    const WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    WORDS
        .get(n)
        .map_or_else(|| n.to_string(), |w| w.to_string())
}

/// The note of an inconclusive comparison: how many more iterations per side would likely
/// settle it (`settle`, the statistics' estimate), counting the `excluded` ones again, or why
/// more iterations are not the answer. The `-i` advised is never over
/// [`MAX_SUGGESTED_ITERATIONS`]; over `max_rounds` (`--until-conclusive MAX`, the most this run
/// could grow to) the note says the limit stood in the way and what to raise it to.
pub fn settle_note(
    kept: usize,
    excluded: usize,
    settle: Option<usize>,
    threshold_pct: f64,
    max_rounds: Option<usize>,
) -> String {
    match settle {
        Some(k) if k > MAX_SUGGESTED_ITERATIONS => beyond_note(),
        Some(k) => {
            let more = k.saturating_sub(kept).max(1);
            let runs = kept + more + excluded;
            match max_rounds {
                _ if runs > MAX_SUGGESTED_ITERATIONS => beyond_note(),
                Some(max) if runs > max => format!(
                    "about {more} more iterations per side would likely settle it ({runs} per \
                     side), more than --until-conclusive={max} allows: raise it to {runs}, or \
                     quiet the machine"
                ),
                _ => format!(
                    "about {more} more iterations per side would likely settle it {SETTLE_FLAG}{runs})"
                ),
            }
        }
        None => format!(
            "the change is too close to the ±{}% threshold to settle with a reasonable number of iterations",
            rigor_model::format::number(threshold_pct)
        ),
    }
}

/// What the `-i` of a settle note starts with, so [`settle_advice`] reads back what
/// [`settle_note`] wrote.
const SETTLE_FLAG: &str = "(-i ";

/// The settle note of a change no practical number of iterations would settle.
fn beyond_note() -> String {
    format!(
        "over {MAX_SUGGESTED_ITERATIONS} iterations per side would be needed: the iterations \
         vary too much for this change to settle (quiet the machine, or accept it as unsettled)"
    )
}

/// What one clause of a comparison's note advises about iterations, so a report of many rows
/// can say it once (the largest `-i`) instead of once per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// `-i N` would likely settle it.
    Iterations(usize),
    /// More than [`MAX_SUGGESTED_ITERATIONS`] per side would be needed.
    Beyond,
}

/// The advice of `clause` (one `; `-separated part of a note) when it is a [`settle_note`]'s
/// advice on iterations; `None` for any other clause.
pub fn settle_advice(clause: &str) -> Option<Settle> {
    if clause == beyond_note() {
        return Some(Settle::Beyond);
    }
    let rest = clause
        .strip_prefix("about ")
        .filter(|r| r.contains(" more iterations per side would likely settle it "))?;
    let (_, flag) = rest.rsplit_once(SETTLE_FLAG)?;
    flag.strip_suffix(')')?.parse().ok().map(Settle::Iterations)
}

/// Said before anything runs (and again after, for the smallest row): variants with
/// `iterations` per row, of which `--exclude` drops `excluded`, leave too few per side for any
/// verdict, however clear the difference. None when a verdict is possible.
pub fn never_enough(iterations: usize, excluded: usize) -> Option<Warning> {
    never_enough_after(iterations, excluded, 0)
}

/// [`never_enough`] after the run, when `failed` of the `iterations` a row ran failed: they are
/// said, and the `-i` advised counts them again, so a run of `-i 4` that kept 3 is not told to
/// run `-i 4`.
pub fn never_enough_after(iterations: usize, excluded: usize, failed: usize) -> Option<Warning> {
    let kept = iterations.saturating_sub(excluded + failed);
    if can_reach(kept, kept) {
        return None;
    }
    let need = smallest_sufficient(kept).unwrap_or(5);
    let how = match (excluded, failed) {
        (0, 0) => format!("{kept} iteration(s) per variant"),
        (_, 0) => format!(
            "-i {iterations} with {excluded} excluded by --exclude leaves {kept} per variant"
        ),
        (0, _) => format!("-i {iterations} with {failed} failed leaves {kept} per variant"),
        _ => format!(
            "-i {iterations} with {failed} failed and {excluded} excluded by --exclude leaves \
             {kept} per variant"
        ),
    };
    Some(Warning::new(
        WarningKind::TooFewIterations,
        format!(
            "{how}: that can never show a significant difference at {}% confidence, so no \
             comparison of this run can reach a verdict",
            confidence_pct()
        ),
        format!(
            "{}run at least -i {} ({need} kept per variant), or use --until-conclusive",
            if failed > 0 {
                "fix what failed (the failed iterations say why), or "
            } else {
                ""
            },
            need + excluded + failed
        ),
    ))
}

/// The warning of `rigor compare` for matched rows whose kept iterations can never reach a
/// verdict; `rows` names each (`\`row\` (3 in a vs 3 in b)`). None when there are none.
pub fn too_few_rows(rows: &[String]) -> Option<Warning> {
    if rows.is_empty() {
        return None;
    }
    Some(Warning::new(
        WarningKind::TooFewIterations,
        format!(
            "kept iterations per side can never reach {}% confidence for {}: their \
             comparisons cannot reach a verdict",
            confidence_pct(),
            rows.join(", ")
        ),
        "record more iterations per side (what --exclude drops does not count)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smallest_sufficient_count_is_where_significance_becomes_possible() {
        let n = smallest_sufficient(1).unwrap();
        assert!(can_reach(n, n));
        assert!(!can_reach(n - 1, n - 1));
        assert_eq!(smallest_sufficient(n + 3), Some(n + 3));
    }

    #[test]
    fn never_enough_counts_the_iterations_exclude_drops() {
        // -i 6 --exclude 2:1 keeps 3 per side: 3 vs 3 can never reach 95%; 4 kept need -i 7.
        let w = never_enough(6, 3).expect("warning");
        assert_eq!(w.kind, "too_few_iterations");
        assert!(
            w.message
                .starts_with("-i 6 with 3 excluded by --exclude leaves 3 per variant"),
            "{}",
            w.message
        );
        assert!(
            w.advice
                .starts_with("run at least -i 7 (4 kept per variant)"),
            "{}",
            w.advice
        );
        assert!(never_enough(7, 3).is_none());
        // -i 4 that lost one iteration to a failure keeps 3: the -i advised counts it again.
        let w = never_enough_after(4, 0, 1).expect("warning");
        assert!(
            w.message
                .starts_with("-i 4 with 1 failed leaves 3 per variant"),
            "{}",
            w.message
        );
        assert!(
            w.advice.starts_with(
                "fix what failed (the failed iterations say why), or run at least -i 5 (4 kept"
            ),
            "{}",
            w.advice
        );
        assert!(never_enough_after(5, 0, 1).is_none());
        assert!(never_enough(3, 0).is_some());
        assert!(never_enough(4, 0).is_none());
    }

    #[test]
    fn the_advice_of_a_settle_note_is_read_back() {
        assert_eq!(
            settle_advice(&settle_note(10, 1, Some(79), 2.0, None)),
            Some(Settle::Iterations(80))
        );
        assert_eq!(
            settle_advice(&settle_note(5, 0, Some(500), 2.0, None)),
            Some(Settle::Beyond)
        );
        assert_eq!(settle_advice(&settle_note(5, 0, None, 2.0, None)), None);
        assert_eq!(
            settle_advice("n=2 vs 2 can never reach 95% confidence: run more iterations (-i 9)"),
            None
        );
    }

    #[test]
    fn notes_name_the_count_to_run_with() {
        assert_eq!(
            too_few_note(3, 3, 3, None, None),
            "n=3 vs 3 can never reach 95% confidence: run more iterations (-i 7: 4 kept after excluding 3)"
        );
        assert_eq!(
            too_few_note(2, 2, 0, Some(9), None),
            "n=2 vs 2 can never reach 95% confidence: run more iterations (-i 9)"
        );
        assert_eq!(
            too_few_note(3, 3, 3, None, Some((141.04, 0.1))),
            "n=3 vs 3 can never reach 95% confidence: run more iterations (-i 7: 4 kept after \
             excluding 3); the data point to +141.0%, p = 0.10: four iterations per side would decide"
        );
        assert!(too_few_note(3, 3, 0, Some(12), Some((1.0, 0.7)))
            .ends_with("p = 0.70: 12 iterations per side would decide"));
        assert_eq!(
            settle_note(10, 0, Some(14), 2.0, None),
            "about 4 more iterations per side would likely settle it (-i 14)"
        );
        assert!(settle_note(10, 0, Some(500), 2.0, None).starts_with("over 100 iterations"));
        assert!(settle_note(10, 0, None, 2.5, None).contains("±2.50% threshold"));
        // Never an -i over the most advice looks for, excluded iterations counted.
        assert!(
            settle_note(90, 10, Some(95), 2.0, None).starts_with("over 100 iterations"),
            "{}",
            settle_note(90, 10, Some(95), 2.0, None)
        );
        // A run capped by --until-conclusive is told its cap stood in the way.
        assert_eq!(
            settle_note(11, 0, Some(90), 2.0, Some(20)),
            "about 79 more iterations per side would likely settle it (90 per side), more than \
             --until-conclusive=20 allows: raise it to 90, or quiet the machine"
        );
        assert_eq!(
            settle_note(11, 0, Some(14), 2.0, Some(20)),
            "about 3 more iterations per side would likely settle it (-i 14)"
        );
    }

    #[test]
    fn rows_with_too_few_iterations_are_one_warning() {
        assert!(too_few_rows(&[]).is_none());
        let w = too_few_rows(&["`a` (3 in x vs 3 in y)".into()]).unwrap();
        assert_eq!(w.kind, "too_few_iterations");
        assert!(
            w.message
                .contains("never reach 95% confidence for `a` (3 in x vs 3 in y)"),
            "{}",
            w.message
        );
    }
}
