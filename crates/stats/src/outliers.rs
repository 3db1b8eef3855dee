use crate::summary::{median_of_sorted, sorted_clean};

/// Flags iterations that look like a different process (a GC storm, a noisy
/// neighbour) with Iglewicz & Hoaglin's modified z-score, |0.6745 (x − median) / MAD| >
/// 3.5. Median and MAD are themselves robust, so one wild value cannot hide itself
/// the way it can with a mean/stdev z-score. When more than half the values are
/// identical (MAD = 0) the mean absolute deviation stands in, scaled by 1.2533 as
/// in the usual fallback (MeanAD ≈ 0.7979 σ). One flag per input; NaN is never flagged.
pub fn outliers(xs: &[f64]) -> Vec<bool> {
    let sorted = sorted_clean(xs);
    if sorted.is_empty() {
        return vec![false; xs.len()];
    }
    let med = median_of_sorted(&sorted);
    let mut dev: Vec<f64> = sorted.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let mad = median_of_sorted(&dev);
    // Robust stand-in for sigma: MAD / 0.6745, or 1.253314 * MeanAD when MAD is 0.
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
        if mean_ad == 0.0 {
            return vec![false; xs.len()];
        }
        1.253314 * mean_ad
    };
    xs.iter()
        .map(|&x| !x.is_nan() && ((x - med) / scale).abs() > 3.5)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_z_reference() {
        let xs = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 14.0, 10.3];
        // numpy: median = 10.05, MAD = 0.15; 0.6745 * (14 - 10.05) / 0.15 = 17.76 → flagged;
        // 0.6745 * (10.3 - 10.05) / 0.15 = 1.12, 0.6745 * (9.8 - 10.05) / 0.15 = -1.12 → kept
        let flags = outliers(&xs);
        assert_eq!(
            flags,
            vec![false, false, false, false, false, false, true, false]
        );
        // boundary: 0.6745 * d / 0.15 = 3.5 at d = 0.7784; 10.05 + 0.77 stays, + 0.79 is flagged
        assert!(!outliers(&[10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.82, 10.3])[6]);
        assert!(outliers(&[10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.84, 10.3])[6]);
    }

    #[test]
    fn degenerate_inputs() {
        assert!(outliers(&[]).is_empty());
        assert_eq!(outliers(&[3.0, 3.0, 3.0]), vec![false; 3]);
        // MAD = 0 → MeanAD fallback: (100 - 5) / (1.253314 * 19) = 3.99 > 3.5
        assert_eq!(
            outliers(&[5.0, 5.0, 5.0, 5.0, 100.0]),
            vec![false, false, false, false, true]
        );
        assert_eq!(outliers(&[1.0, f64::NAN, 1.1]), vec![false, false, false]);
    }
}
