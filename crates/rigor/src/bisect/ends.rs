//! The ends' values, reused from step to step: each step still runs good and bad in every
//! round beside the tested commit (so the pool follows the machine as the bisection goes on),
//! and the commit is placed against every value of the ends measured so far, which narrows the
//! midpoint far more than a step's own few rounds would.

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

    /// The values to place a commit with: every earlier run's and the step's own.
    pub fn pooled(&self, good: &[f64], bad: &[f64]) -> (Vec<f64>, Vec<f64>) {
        (
            [&self.good[..], good].concat(),
            [&self.bad[..], bad].concat(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_of_the_ends_is_pooled() {
        let mut ends = Ends::default();
        assert_eq!(ends.pooled(&[1.0], &[2.0]), (vec![1.0], vec![2.0]));
        ends.add(&[100.0, 101.0], &[120.0, 121.0]);
        ends.add(&[99.0], &[125.0]);
        let (g, b) = ends.pooled(&[98.0], &[122.0]);
        assert_eq!((g.len(), b.len()), (4, 4));
    }
}
