//! The binary search over the commits between good and bad, apart from how a commit is judged:
//! index 0 is the good end, the last index the bad one, and each tested commit is decided like
//! good, like bad, skipped (it does not build or run, as `git bisect skip`) or unknown (the
//! statistics could not tell, which ends the search honestly rather than guessing).

use std::collections::BTreeSet;

/// How one tested commit was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Measures like the good end.
    Good,
    /// Measures like the bad end.
    Bad,
    /// Could not be measured (does not build, or never ran): try a neighbour.
    Skip,
    /// Measured, but like neither end (or like both).
    Unknown,
}

/// What the search wants next, or how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Measure the commit at this index.
    Test(usize),
    /// The first commit like the bad end: its predecessor measured like the good end.
    Culprit(usize),
    /// Every commit left between the last good-like and the first bad-like one was skipped: the
    /// first bad commit is one of these indices (the skipped ones and the bad-like one).
    AmongSkipped(Vec<usize>),
    /// The commit at `unknown` could not be decided; the change is somewhere after `good` and
    /// up to `bad`.
    Inconclusive {
        good: usize,
        bad: usize,
        unknown: usize,
    },
}

/// The search's state: the last index known like good, the first known like bad, and the
/// indices skipped between them.
#[derive(Debug, Clone)]
pub struct Search {
    good: usize,
    bad: usize,
    skipped: BTreeSet<usize>,
    unknown: Option<usize>,
}

impl Search {
    /// A search between index 0 (good) and `bad` (at least 1).
    pub fn new(bad: usize) -> Search {
        Search {
            good: 0,
            bad: bad.max(1),
            skipped: BTreeSet::new(),
            unknown: None,
        }
    }

    /// The next commit to measure, or the end of the search.
    pub fn next(&self) -> Next {
        if let Some(unknown) = self.unknown {
            return Next::Inconclusive {
                good: self.good,
                bad: self.bad,
                unknown,
            };
        }
        if self.bad - self.good == 1 {
            return Next::Culprit(self.bad);
        }
        let open = |i: usize| i > self.good && i < self.bad && !self.skipped.contains(&i);
        let mid = (self.good + self.bad) / 2;
        // The untested index nearest the middle, the earlier one first on a tie.
        for d in 0..self.bad {
            for i in [mid.checked_sub(d), Some(mid + d)].into_iter().flatten() {
                if open(i) {
                    return Next::Test(i);
                }
            }
        }
        Next::AmongSkipped((self.good + 1..=self.bad).collect())
    }

    /// Records how the commit at `index` measured.
    pub fn record(&mut self, index: usize, decision: Decision) {
        match decision {
            Decision::Good if index > self.good && index < self.bad => self.good = index,
            Decision::Bad if index > self.good && index < self.bad => self.bad = index,
            Decision::Skip => {
                self.skipped.insert(index);
            }
            Decision::Unknown => self.unknown = Some(index),
            _ => {}
        }
    }

    /// The commits that may still be the first bad one.
    pub fn left(&self) -> usize {
        self.bad - self.good
    }

    /// About how many more commits need measuring: log2 of what is left, rounded up.
    pub fn steps_left(&self) -> usize {
        let n = self.left();
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }

    /// The last index known like good and the first known like bad.
    #[cfg(test)]
    pub fn bounds(&self) -> (usize, usize) {
        (self.good, self.bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search between 0 and `bad` with `decide` judging each tested index; returns the
    /// end and the indices tested, in order.
    fn search(bad: usize, mut decide: impl FnMut(usize) -> Decision) -> (Next, Vec<usize>) {
        let mut s = Search::new(bad);
        let mut tested = Vec::new();
        loop {
            match s.next() {
                Next::Test(i) => {
                    assert!(!tested.contains(&i), "{i} tested twice");
                    tested.push(i);
                    s.record(i, decide(i));
                }
                end => return (end, tested),
            }
        }
    }

    #[test]
    fn the_culprit_is_found_at_every_position_in_log2_steps() {
        for n in 1..=40 {
            for k in 1..=n {
                let (end, tested) = search(n, |i| {
                    if i >= k {
                        Decision::Bad
                    } else {
                        Decision::Good
                    }
                });
                assert_eq!(end, Next::Culprit(k), "n {n} k {k}");
                let bound = (usize::BITS - n.leading_zeros()) as usize;
                assert!(tested.len() <= bound, "n {n} k {k}: {tested:?}");
                assert!(tested.iter().all(|i| *i > 0 && *i < n), "{tested:?}");
            }
        }
    }

    #[test]
    fn a_skipped_commit_is_replaced_by_its_neighbour() {
        // Eight commits after good; the fourth does not build, the sixth is the first bad.
        let (end, tested) = search(7, |i| match i {
            3 => Decision::Skip,
            i if i >= 5 => Decision::Bad,
            _ => Decision::Good,
        });
        assert_eq!(end, Next::Culprit(5));
        assert_eq!(tested[0], 3);
        assert!(tested.contains(&2) || tested.contains(&4), "{tested:?}");
    }

    #[test]
    fn skips_next_to_the_change_leave_the_culprit_among_them() {
        let (end, _) = search(7, |i| match i {
            3 | 4 => Decision::Skip,
            i if i >= 5 => Decision::Bad,
            _ => Decision::Good,
        });
        assert_eq!(end, Next::AmongSkipped(vec![3, 4, 5]));
        // Everything skipped: any commit after good may be it.
        let (end, tested) = search(4, |_| Decision::Skip);
        assert_eq!(end, Next::AmongSkipped(vec![1, 2, 3, 4]));
        assert_eq!(tested.len(), 3);
    }

    #[test]
    fn an_unknown_commit_ends_the_search_between_the_bounds_so_far() {
        let (end, tested) = search(8, |i| match i {
            4 => Decision::Good,
            6 => Decision::Unknown,
            _ => Decision::Bad,
        });
        assert_eq!(tested, vec![4, 6]);
        assert_eq!(
            end,
            Next::Inconclusive {
                good: 4,
                bad: 8,
                unknown: 6
            }
        );
    }

    #[test]
    fn what_is_left_and_the_steps_it_takes() {
        let mut s = Search::new(8);
        assert_eq!((s.left(), s.steps_left()), (8, 3));
        s.record(4, Decision::Good);
        assert_eq!((s.left(), s.steps_left(), s.bounds()), (4, 2, (4, 8)));
        s.record(6, Decision::Bad);
        s.record(5, Decision::Bad);
        assert_eq!((s.left(), s.steps_left()), (1, 0));
        assert_eq!(s.next(), Next::Culprit(5));
        // A decision outside the bounds changes nothing.
        s.record(7, Decision::Good);
        assert_eq!(s.bounds(), (4, 5));
    }
}
