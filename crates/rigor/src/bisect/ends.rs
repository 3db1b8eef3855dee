//! The ends' values, reused from step to step. Each step still runs a few rounds of good and
//! bad interleaved with the tested commit; those are pooled with every earlier run's while they
//! agree with them (each of the step's own ends' medians within a quarter of the step from where
//! the earlier ones put that end). When the machine drifted, the step's own rounds are used
//! alone, as they were measured beside the tested commit.

use super::position::median;

/// How far (in steps between the ends) a step's own end may lie from the earlier ones before
/// they are no longer pooled.
const DRIFT: f64 = 0.25;

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

    /// The values to place a commit with, given the step's own values of the ends: the step's
    /// and every earlier run's when they agree, the step's alone otherwise.
    pub fn pooled(&self, good: &[f64], bad: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let own = || (good.to_vec(), bad.to_vec());
        let (Some(g0), Some(b0)) = (median(&self.good), median(&self.bad)) else {
            return own();
        };
        let (Some(g), Some(b)) = (median(good), median(bad)) else {
            return own();
        };
        let span = b0 - g0;
        if span == 0.0 || !span.is_finite() {
            return own();
        }
        let agrees = ((g - g0) / span).abs() <= DRIFT && ((b - b0) / span).abs() <= DRIFT;
        if !agrees {
            return own();
        }
        let join = |a: &[f64], b: &[f64]| [a, b].concat();
        (join(&self.good, good), join(&self.bad, bad))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_ends_are_pooled_only_while_they_agree() {
        let mut ends = Ends::default();
        let (own_g, own_b) = (vec![100.0, 101.0], vec![120.0, 121.0]);
        // Nothing earlier: the step's own.
        assert_eq!(ends.pooled(&own_g, &own_b), (own_g.clone(), own_b.clone()));
        ends.add(&[100.5, 99.5, 100.0], &[120.5, 119.5, 121.5]);
        let (g, b) = ends.pooled(&own_g, &own_b);
        assert_eq!((g.len(), b.len()), (5, 5));
        // The machine got 10% slower since: the ends moved by half the step.
        let (g, b) = ends.pooled(&[110.0, 111.0], &[130.0, 131.0]);
        assert_eq!((g, b), (vec![110.0, 111.0], vec![130.0, 131.0]));
    }
}
