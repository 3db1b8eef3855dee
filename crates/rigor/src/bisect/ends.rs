//! The ends' values from every run of the bisection: how long a step between them is (the
//! scale a tested commit's position is read on) and how noisy each end is (how many rounds a
//! step starts with). Each step still measures the ends in every round beside the tested
//! commit, so drift of the machine between steps cancels out of the decision.

use super::position::median;

/// Every value of good and of bad measured so far.
#[derive(Debug, Default, Clone)]
pub struct Ends {
    pub good: Vec<f64>,
    pub bad: Vec<f64>,
}

impl Ends {
    /// Keeps one more run's values of the ends.
    pub fn add(&mut self, good: &[f64], bad: &[f64]) {
        self.good.extend_from_slice(good);
        self.bad.extend_from_slice(bad);
    }

    /// The medians of good and bad so far.
    pub fn span(&self) -> Option<(f64, f64)> {
        Some((median(&self.good)?, median(&self.bad)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_is_the_medians_of_every_run() {
        let mut ends = Ends::default();
        assert_eq!(ends.span(), None);
        ends.add(&[100.0, 101.0], &[120.0, 121.0]);
        ends.add(&[99.0], &[125.0]);
        assert_eq!(ends.span(), Some((100.0, 121.0)));
    }
}
