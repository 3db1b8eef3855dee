use serde::{Deserialize, Serialize};

/// The figures every reported number carries (numbers come with their noise), so a reader can
/// judge the noise before trusting the median.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n − 1 denominator); 0 when n = 1.
    pub stdev: f64,
    /// stdev / |mean| as a fraction; 0 when stdev is 0, NaN when the mean is 0 but
    /// the spread is not (a relative spread is meaningless there).
    pub cv: f64,
    pub min: f64,
    pub max: f64,
}

/// Summarises one measurement across iterations. NaN values are dropped rather than
/// poisoning every figure; `None` when nothing is left.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let sorted = sorted_clean(xs);
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let mean = sorted.iter().sum::<f64>() / n as f64;
    // Two-pass variance: numerically stable for the large, tightly clustered values
    // benchmarks produce (e.g. 1.2e6 ± 100 RPS).
    let stdev = if n > 1 {
        let ss: f64 = sorted.iter().map(|x| (x - mean) * (x - mean)).sum();
        (ss / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let cv = if stdev == 0.0 {
        0.0
    } else if mean == 0.0 {
        f64::NAN
    } else {
        stdev / mean.abs()
    };
    Some(Summary {
        n,
        mean,
        median: median_of_sorted(&sorted),
        stdev,
        cv,
        min: sorted[0],
        max: sorted[n - 1],
    })
}

/// Copy without NaNs, sorted ascending.
pub(crate) fn sorted_clean(xs: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of an already sorted, non-empty slice (mean of the two middle values when even).
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        // Halved first: the sum of two values near f64::MAX would overflow to infinity.
        sorted[n / 2 - 1] / 2.0 + sorted[n / 2] / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn reference_values() {
        let xs = [12.0, 15.0, 11.0, 19.0, 14.0, 13.0];
        let s = summarize(&xs).unwrap();
        assert_eq!(s.n, 6);
        // numpy: mean = 14.0, median = 13.5, std(ddof=1) = 2.8284271247461903
        assert!(close(s.mean, 14.0, 1e-12));
        assert!(close(s.median, 13.5, 1e-12));
        assert!(close(s.stdev, 2.8284271247461903, 1e-12));
        // cv = 2.8284271247461903 / 14 = 0.20203050891044216
        assert!(close(s.cv, 0.20203050891044216, 1e-12));
        assert_eq!((s.min, s.max), (11.0, 19.0));
    }

    #[test]
    fn large_offset_is_stable() {
        // numpy.std([1e9+1, 1e9+2, 1e9+3, 1e9+4], ddof=1) = 1.2909944487358056
        let s = summarize(&[1e9 + 1.0, 1e9 + 2.0, 1e9 + 3.0, 1e9 + 4.0]).unwrap();
        assert!(close(s.stdev, 1.2909944487358056, 1e-9));
        assert!(close(s.median, 1e9 + 2.5, 1e-15));
    }

    #[test]
    fn edge_cases() {
        assert!(summarize(&[]).is_none());
        assert!(summarize(&[f64::NAN]).is_none());
        let s = summarize(&[5.0, f64::NAN]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.median, s.stdev, s.cv),
            (1, 5.0, 5.0, 0.0, 0.0)
        );
        let z = summarize(&[0.0, 0.0]).unwrap();
        assert_eq!(z.cv, 0.0);
        let neg = summarize(&[-1.0, 1.0]).unwrap();
        assert!(neg.cv.is_nan());
        let neg = summarize(&[-2.0, -4.0]).unwrap();
        assert!(neg.cv > 0.0);
    }
}
