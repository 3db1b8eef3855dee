//! Sparklines: a series drawn in one line of block characters (`▁▂▃▄▅▆▇█`), so a terminal or
//! a Markdown table shows a trend (msgs/s rising with clients, CPU falling off mid-run) without
//! a chart. Plain text: every renderer shows it as it is.

/// The eight heights, lowest first.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Where a value is missing (no sample, NaN, infinite): a dot, so a gap reads as a gap and
/// not as a low value.
pub const GAP: char = '·';

/// The bar of a series that does not move: the middle height, so "flat" does not read as
/// "at the bottom".
const FLAT: char = BARS[3];

/// The range of the finite values, `None` when there are none.
pub fn range(values: &[Option<f64>]) -> Option<(f64, f64)> {
    values
        .iter()
        .flatten()
        .filter(|v| v.is_finite())
        .fold(None, |acc, &v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// One character per value on the series' own scale: its lowest value `▁`, its highest `█`.
pub fn line(values: &[Option<f64>]) -> String {
    match range(values) {
        Some((lo, hi)) => scaled(values, lo, hi),
        None => values.iter().map(|_| GAP).collect(),
    }
}

/// One character per value on the scale `lo..=hi` (shared by several sparklines so their heights
/// compare): values outside it are clamped, a scale of zero height draws every value flat.
/// Negative values are drawn like any other: the scale is the range, not zero-based.
pub fn scaled(values: &[Option<f64>], lo: f64, hi: f64) -> String {
    values
        .iter()
        .map(|v| match v {
            Some(v) if v.is_finite() => bar(*v, lo, hi),
            _ => GAP,
        })
        .collect()
}

fn bar(v: f64, lo: f64, hi: f64) -> char {
    let span = hi - lo;
    if !span.is_finite() || span <= 0.0 {
        return FLAT;
    }
    let level = ((v - lo) / span * (BARS.len() - 1) as f64).round();
    BARS[level.clamp(0.0, (BARS.len() - 1) as f64) as usize]
}

/// At most `width` points: a longer series is cut into `width` consecutive runs of nearly equal
/// length, each drawn as the mean of its finite values (a run with none is a gap). A series that
/// fits is returned as it is, one point per character.
pub fn resample(values: &[Option<f64>], width: usize) -> Vec<Option<f64>> {
    let n = values.len();
    if n <= width || width == 0 {
        return values.to_vec();
    }
    (0..width)
        .map(|i| {
            let run = &values[i * n / width..(i + 1) * n / width];
            let finite: Vec<f64> = run
                .iter()
                .flatten()
                .copied()
                .filter(|v| v.is_finite())
                .collect();
            (!finite.is_empty()).then(|| finite.iter().sum::<f64>() / finite.len() as f64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(v: &[f64]) -> Vec<Option<f64>> {
        v.iter().map(|x| Some(*x)).collect()
    }

    #[test]
    fn lowest_to_highest_over_eight_heights() {
        let v = some(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        assert_eq!(line(&v), "▁▂▃▄▅▆▇█");
        // The scale is the range, so negative values draw like any others.
        assert_eq!(line(&some(&[-7.0, -3.5, 0.0])), "▁▅█");
        assert_eq!(line(&some(&[10.0, 5.0, 0.0])), "█▅▁");
    }

    #[test]
    fn gaps_flat_series_and_single_points() {
        assert_eq!(
            line(&[
                Some(1.0),
                None,
                Some(f64::NAN),
                Some(3.0),
                Some(f64::INFINITY)
            ]),
            "▁··█·"
        );
        assert_eq!(line(&some(&[4.0, 4.0, 4.0])), "▄▄▄");
        assert_eq!(line(&some(&[42.0])), "▄");
        assert_eq!(line(&[None, None]), "··");
        assert_eq!(line(&[]), "");
        assert_eq!(range(&[None, Some(f64::NAN)]), None);
    }

    #[test]
    fn a_shared_scale_clamps_and_compares() {
        // 0..10: 5 sits at 3.5 → round 4 → `▅`; 12 clamps to the top, -1 to the bottom.
        assert_eq!(scaled(&some(&[5.0, 12.0, -1.0, 10.0]), 0.0, 10.0), "▅█▁█");
        assert_eq!(scaled(&some(&[3.0]), 3.0, 3.0), "▄");
    }

    #[test]
    fn long_series_are_averaged_into_the_width() {
        let v = some(&[1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);
        assert_eq!(resample(&v, 3), some(&[2.0, 6.0, 10.0]));
        assert_eq!(resample(&v, 10), v);
        // 5 points into 2: runs of 2 and 3; a run with only gaps stays a gap.
        let g = vec![None, None, Some(1.0), None, Some(3.0)];
        assert_eq!(resample(&g, 2), vec![None, Some(2.0)]);
    }
}
