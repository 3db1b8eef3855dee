//! Bounds on what a page draws, so a long run gives a page a browser opens at once: a line
//! keeps at most a few hundred points (each slice's lowest and highest, so a spike survives
//! thinning), and a row draws an evenly spaced few of its iterations.

/// Points one line keeps at most.
pub const MAX_POINTS: usize = 160;
/// Iterations one timeline draws at most.
pub const MAX_ITERATIONS: usize = 10;

/// `points` thinned to about `max`: consecutive slices each keep their lowest and highest
/// value in time order; a slice with no value keeps a gap.
pub fn thin(points: &[(f64, Option<f64>)], max: usize) -> Vec<(f64, Option<f64>)> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    let slice = points.len().div_ceil(max / 2);
    let mut out = Vec::with_capacity(max + 2);
    for chunk in points.chunks(slice) {
        let values = chunk.iter().filter(|(_, v)| v.is_some_and(f64::is_finite));
        let lo = values
            .clone()
            .min_by(|a, b| a.1.unwrap().total_cmp(&b.1.unwrap()));
        let hi = values.max_by(|a, b| a.1.unwrap().total_cmp(&b.1.unwrap()));
        match (lo, hi) {
            (Some(lo), Some(hi)) if lo.0 <= hi.0 => out.extend([*lo, *hi]),
            (Some(lo), Some(hi)) => out.extend([*hi, *lo]),
            _ => out.push((chunk[0].0, None)),
        }
    }
    out.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    out
}

/// Which of `n` items to draw when at most `max` fit: all of them, or `max` evenly spaced,
/// the first and the last among them.
pub fn pick(n: usize, max: usize) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    if max <= 1 {
        return vec![0];
    }
    let mut v: Vec<usize> = (0..max)
        .map(|i| (i as f64 * (n - 1) as f64 / (max - 1) as f64).round() as usize)
        .collect();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_spikes_and_gaps() {
        let mut pts: Vec<(f64, Option<f64>)> = (0..1000).map(|i| (i as f64, Some(1.0))).collect();
        pts[500].1 = Some(99.0);
        for p in &mut pts[700..720] {
            p.1 = None;
        }
        let t = thin(&pts, 100);
        assert!(t.len() <= 102, "{}", t.len());
        assert!(t.iter().any(|p| p.1 == Some(99.0)));
        assert!(t.iter().any(|p| p.1.is_none()));
        assert_eq!(thin(&pts[..50], 100).len(), 50);
    }

    #[test]
    fn picks_are_spread_and_include_both_ends() {
        assert_eq!(pick(3, 10), vec![0, 1, 2]);
        assert_eq!(pick(1000, 5), vec![0, 250, 500, 749, 999]);
        assert_eq!(pick(5, 1), vec![0]);
    }
}
