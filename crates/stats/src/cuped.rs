//! Adjusting a paired difference for a measured covariate (CUPED-style regression
//! adjustment). When a round's interference hit one side harder than the other, its log ratio
//! moved for a reason the run measured; removing the part of the ratios that the interference
//! difference explains narrows the interval without moving its centre.

/// The adjustment made, so a report can show it: the slope removed, the adjusted values and
/// how much of the variance went with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Adjustment {
    /// θ = cov(d, x)/var(x): change in d per unit of covariate.
    pub theta: f64,
    /// d_i − θ(x_i − mean x), in the same order as the input.
    pub adjusted: Vec<f64>,
    /// 1 − var(adjusted)/var(d), in [0, 1]: the squared correlation of d and x. Estimated on
    /// the same values θ was fitted to, so it reads a little high at small n (by about 1/n
    /// under no real relation).
    pub variance_reduction: f64,
}

/// Adjusts each d_i (e.g. a round's log ratio) for x_i (e.g. the round's candidate-minus-
/// baseline interference): d_i − θ(x_i − mean x), θ = cov(d, x)/var(x). The adjusted values
/// keep the mean of d exactly (the x deviations sum to zero), so a real change is not moved,
/// only the noise the covariate explains is removed. The covariate must not be affected by the
/// change itself (interference from other processes is not; the app's own CPU would be).
/// `None` when the slices differ in length, n < 4, a value is not finite, or x has no
/// variance.
pub fn adjust(d: &[f64], x: &[f64]) -> Option<Adjustment> {
    let n = d.len();
    if n != x.len() || n < 4 || d.iter().chain(x).any(|v| !v.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let (mean_d, mean_x) = (d.iter().sum::<f64>() / nf, x.iter().sum::<f64>() / nf);
    let (mut sxx, mut sxd, mut sdd) = (0.0, 0.0, 0.0);
    for (&di, &xi) in d.iter().zip(x) {
        sxx += (xi - mean_x) * (xi - mean_x);
        sxd += (xi - mean_x) * (di - mean_d);
        sdd += (di - mean_d) * (di - mean_d);
    }
    if sxx <= 0.0 {
        return None;
    }
    let theta = sxd / sxx;
    let adjusted: Vec<f64> = d
        .iter()
        .zip(x)
        .map(|(&di, &xi)| di - theta * (xi - mean_x))
        .collect();
    let variance_reduction = if sdd > 0.0 {
        (sxd * sxd / (sxx * sdd)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    Some(Adjustment {
        theta,
        adjusted,
        variance_reduction,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // numpy: d = [0.01, 0.03, -0.02, 0.05, 0.00]; x = [1, 3, -1, 4, 0];
        // theta = cov(d, x)/var(x) = 0.012906976744186045;
        // 1 - var(adjusted)/var(d) = corrcoef(d, x)[0,1]**2 = 0.9812838483593501;
        // adjusted = d - theta*(x - x.mean()) = [0.015162790697674417, 0.009348837209302324,
        //   0.010976744186046505, 0.01644186046511628, 0.018069767441860462]
        let d = [0.01, 0.03, -0.02, 0.05, 0.00];
        let x = [1.0, 3.0, -1.0, 4.0, 0.0];
        let a = adjust(&d, &x).unwrap();
        assert!(
            (a.theta - 0.012906976744186045).abs() < 1e-15,
            "{}",
            a.theta
        );
        assert!((a.variance_reduction - 0.9812838483593501).abs() < 1e-12);
        let want = [
            0.015162790697674417,
            0.009348837209302324,
            0.010976744186046505,
            0.01644186046511628,
            0.018069767441860462,
        ];
        for (got, want) in a.adjusted.iter().zip(want) {
            assert!((got - want).abs() < 1e-15, "{:?}", a.adjusted);
        }
        let var = |v: &[f64]| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            v.iter().map(|x| (x - m).powi(2)).sum::<f64>()
        };
        assert!((1.0 - var(&a.adjusted) / var(&d) - a.variance_reduction).abs() < 1e-12);
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!((mean(&a.adjusted) - mean(&d)).abs() < 1e-15);
    }

    #[test]
    fn refuses_what_it_cannot_fit() {
        assert!(adjust(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]).is_none());
        assert!(adjust(&[1.0, 2.0, 3.0, 4.0], &[2.0; 4]).is_none());
        assert!(adjust(&[1.0, 2.0, 3.0, 4.0], &[1.0, 2.0, 3.0]).is_none());
        assert!(adjust(&[1.0, 2.0, f64::NAN, 4.0], &[1.0, 2.0, 3.0, 4.0]).is_none());
        // No relation at all: nothing is removed.
        let a = adjust(&[1.0, -1.0, -1.0, 1.0], &[1.0, 1.0, -1.0, -1.0]).unwrap();
        assert_eq!((a.theta, a.variance_reduction), (0.0, 0.0));
    }
}
