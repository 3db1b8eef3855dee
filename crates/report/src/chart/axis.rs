//! Axes: where a value lands on the page, which round values get a tick, how a tick reads
//! (`1.5k`, `2M`), and the "nines" scale latency percentiles are drawn on.

/// A linear map from a value range onto a pixel range (the pixel range may run backwards, as
/// a y axis does).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub px0: f64,
    pub px1: f64,
}

impl Scale {
    /// The pixel of `v`.
    pub fn at(&self, v: f64) -> f64 {
        let span = self.hi - self.lo;
        if span == 0.0 {
            return (self.px0 + self.px1) / 2.0;
        }
        self.px0 + (v - self.lo) / span * (self.px1 - self.px0)
    }
}

/// The value range a y axis shows for `values` and what its label must add.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
    /// Said on the axis when it does not start at zero.
    pub note: Option<&'static str>,
}

/// The y range of positive figures: from zero (so bar heights and line heights compare), unless
/// `may_zoom` and the values differ by less than a tenth of the largest, where a zero-based axis
/// would draw flat lines; then the data's own range, and the axis says so.
pub fn range(values: impl IntoIterator<Item = f64>, may_zoom: bool) -> Range {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.into_iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return Range {
            lo: 0.0,
            hi: 1.0,
            note: None,
        };
    }
    let span = hi - lo;
    if may_zoom && lo > 0.0 && span > 0.0 && span < hi * 0.1 {
        let pad = span * 0.15;
        return Range {
            lo: lo - pad,
            hi: hi + pad,
            note: Some("axis not from 0"),
        };
    }
    let lo = lo.min(0.0);
    let hi = if hi <= lo { lo + 1.0 } else { hi };
    Range { lo, hi, note: None }
}

/// Round tick values covering `lo..=hi` (about `max` of them), and the range widened to the
/// outer ticks so the top line is a labelled value.
pub fn ticks(lo: f64, hi: f64, max: usize) -> (Vec<f64>, f64, f64) {
    let span = (hi - lo).abs().max(f64::MIN_POSITIVE);
    let rough = span / max.max(1) as f64;
    let mag = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= max as f64)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).floor() * step;
    let last = (hi / step).ceil() * step;
    let count = ((last - first) / step).round() as usize;
    let ticks = (0..=count).map(|i| first + i as f64 * step).collect();
    (ticks, first, last)
}

/// A tick label on an axis whose largest tick is `top`: thousands as `k`, millions as `M`,
/// billions as `G` (one unit for the whole axis), with as many decimals as the step between
/// ticks needs (`1.5k`, `250`, `0.25`); zero is `0`.
pub fn label(v: f64, step: f64, top: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let (div, suffix) = match top.abs().max(step.abs()) {
        a if a >= 1e9 => (1e9, "G"),
        a if a >= 1e6 => (1e6, "M"),
        a if a >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let s = step.abs() / div;
    // As many decimals as the step itself needs: 0.25 → 2, 0.5 → 1, 5 → 0.
    let decimals = (0..4)
        .find(|d| {
            let scaled = s * 10f64.powi(*d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.abs().max(1.0)
        })
        .unwrap_or(4);
    let text = format!("{:.*}", decimals, v / div);
    let text = if text.starts_with('-') && text.trim_matches(['-', '0', '.']).is_empty() {
        text[1..].to_string()
    } else {
        text
    };
    format!("{text}{suffix}")
}

/// Tick labels for evenly spaced `ticks`.
pub fn labels(ticks: &[f64]) -> Vec<(f64, String)> {
    let step = match ticks {
        [a, b, ..] => b - a,
        _ => 1.0,
    };
    let top = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
    ticks.iter().map(|&t| (t, label(t, step, top))).collect()
}

/// The "nines" position of percentile `p` (0–100): −log10(1 − p/100), so 90, 99, 99.9 and
/// 99.99 are evenly spaced and the tail, where latency problems live, gets the room.
/// `None` for 100 (the maximum), which lies at infinity.
pub fn nines(p: f64) -> Option<f64> {
    let rest = 1.0 - p / 100.0;
    (rest > 0.0 && p >= 0.0).then(|| -rest.log10())
}

/// The ticks of a nines axis up to `top_nines` (its largest [`nines`] value).
pub fn nines_ticks(top_nines: f64) -> Vec<(f64, String)> {
    let marks = [
        (0.0, "0%"),
        (1.0, "90%"),
        (2.0, "99%"),
        (3.0, "99.9%"),
        (4.0, "99.99%"),
        (5.0, "99.999%"),
        (6.0, "99.9999%"),
    ];
    marks
        .iter()
        .filter(|(x, _)| *x <= top_nines + 1e-9)
        .map(|(x, l)| (*x, l.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        let (t, lo, hi) = ticks(0.0, 937.0, 5);
        assert_eq!(t, vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]);
        assert_eq!((lo, hi), (0.0, 1000.0));
        let (t, _, _) = ticks(0.0, 1.0, 4);
        assert_eq!(t, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn big_numbers_read_as_k_m_g() {
        assert_eq!(label(1_500_000.0, 500_000.0, 2e6), "1.5M");
        assert_eq!(label(2_000_000.0, 500_000.0, 2e6), "2.0M");
        assert_eq!(label(20_000.0, 10_000.0, 2e4), "20k");
        assert_eq!(label(2_500.0, 500.0, 3e3), "2500");
        assert_eq!(label(3e9, 1e9, 3e9), "3G");
        assert_eq!(label(0.25, 0.25, 1.0), "0.25");
        assert_eq!(label(0.0, 0.25, 1.0), "0");
        assert_eq!(label(-0.0, 1.0, 1.0), "0");
        // One unit per axis: 250k on an axis that reaches 1M reads 0.25M.
        let l = labels(&[0.0, 250e3, 500e3, 750e3, 1e6]);
        let texts: Vec<&str> = l.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["0", "0.25M", "0.50M", "0.75M", "1.00M"]);
    }

    #[test]
    fn zero_based_unless_that_draws_flat_lines() {
        let r = range([800.0, 1000.0], true);
        assert_eq!((r.lo, r.hi, r.note), (0.0, 1000.0, None));
        let r = range([1000.0, 1010.0], true);
        assert!(r.lo > 990.0 && r.hi < 1020.0, "{r:?}");
        assert_eq!(r.note, Some("axis not from 0"));
        let r = range([1000.0, 1010.0], false);
        assert_eq!((r.lo, r.note), (0.0, None));
        let r = range([f64::NAN], true);
        assert_eq!((r.lo, r.hi), (0.0, 1.0));
        let r = range([5.0, 5.0], true);
        assert_eq!((r.lo, r.hi), (0.0, 5.0));
    }

    #[test]
    fn nines_space_the_tail_evenly() {
        assert_eq!(nines(0.0), Some(0.0));
        assert!((nines(90.0).unwrap() - 1.0).abs() < 1e-9);
        assert!((nines(99.9).unwrap() - 3.0).abs() < 1e-9);
        assert_eq!(nines(100.0), None);
        assert_eq!(nines_ticks(5.0).last().unwrap().1, "99.999%");
    }

    #[test]
    fn scales_map_both_ways() {
        let s = Scale {
            lo: 0.0,
            hi: 10.0,
            px0: 100.0,
            px1: 0.0,
        };
        assert_eq!(s.at(0.0), 100.0);
        assert_eq!(s.at(10.0), 0.0);
        assert_eq!(s.at(5.0), 50.0);
    }
}
