//! Comparison charts: for one compared pair, each measurement's change against the baseline as
//! a horizontal bar (the change of the medians) with its confidence interval as a whisker,
//! coloured by verdict, around a zero line and the practical threshold's band.

use super::axis::{labels, ticks, Scale};
use super::frame::cut;
use super::palette;
use super::svg::Svg;
use crate::format::{number, signed_pct};
use rigor_model::result::Comparison;

/// Rows one chart draws at most; the page says how many more there were.
pub const MAX_BARS: usize = 40;
const WIDTH: f64 = 800.0;
const LABEL_W: f64 = 250.0;
const PLOT: (f64, f64) = (262.0, 620.0);
const ROW_H: f64 = 22.0;
const TOP: f64 = 28.0;
/// The widest axis, %: one change of +100,000% (a page cache that was empty in the baseline)
/// must not flatten every other bar; beyond it bars are cut and marked.
pub const MAX_EXTENT: f64 = 100.0;
/// What marks a bar cut at the edge of the axis.
pub const CUT_MARK: &str = "›";

/// The x range: every change and interval, the threshold, and at least ±1%, symmetric so left
/// and right read alike.
fn extent(cs: &[&Comparison], threshold: Option<f64>) -> f64 {
    cs.iter()
        .flat_map(|c| [c.change_pct, c.ci_low_pct, c.ci_high_pct])
        .flatten()
        .filter(|v| v.is_finite())
        .map(f64::abs)
        .chain(threshold.map(|t| t * 1.5))
        .fold(1.0f64, f64::max)
        .min(MAX_EXTENT / 1.1)
        * 1.1
}

/// One chart: `title` names the compared pair, `label` each bar (its measurement), `threshold`
/// (%) the band of practical equivalence when known.
pub fn chart(
    title: &str,
    cs: &[&Comparison],
    label: impl Fn(&Comparison) -> String,
    threshold: Option<f64>,
) -> String {
    let cs = &cs[..cs.len().min(MAX_BARS)];
    let e = extent(cs, threshold);
    let (t, lo, hi) = ticks(-e, e, 6);
    let x = Scale {
        lo,
        hi,
        px0: PLOT.0,
        px1: PLOT.1,
    };
    let bottom = TOP + ROW_H * cs.len() as f64;
    let mut svg = Svg::new("comparison", WIDTH, bottom + 40.0, title);
    svg.text((8.0, 16.0), "title", "", &cut(title, 90));
    if let Some(th) = threshold.filter(|t| *t > 0.0) {
        let (a, b) = (x.at(-th), x.at(th));
        svg.rect((a, TOP), (b - a, bottom - TOP), palette::MUTED, 0.15);
    }
    for (v, l) in labels(&t) {
        svg.line((x.at(v), TOP), (x.at(v), bottom), "grid");
        svg.text((x.at(v), bottom + 14.0), "tick mid", "", &format!("{l}%"));
    }
    svg.line((x.at(0.0), TOP - 4.0), (x.at(0.0), bottom), "zero");
    let axis_label = match threshold {
        Some(th) => format!(
            "change against the baseline (%) · bar: change of the medians · whisker: 95% \
             interval · grey band: ±{}% threshold",
            number(th)
        ),
        None => "change against the baseline (%) · bar: change of the medians · whisker: 95% \
                 interval"
            .to_string(),
    };
    svg.text(
        ((PLOT.0 + PLOT.1) / 2.0, bottom + 30.0),
        "label mid",
        "",
        &axis_label,
    );
    for (i, c) in cs.iter().enumerate() {
        bar(
            &mut svg,
            &x,
            TOP + ROW_H * i as f64 + ROW_H / 2.0,
            c,
            &label(c),
        );
    }
    svg.finish()
}

/// One compared row at height `y`, with a hover text saying everything it shows.
fn bar(svg: &mut Svg, x: &Scale, y: f64, c: &Comparison, name: &str) {
    let colour = palette::verdict(c.verdict);
    let interval = match (c.ci_low_pct, c.ci_high_pct) {
        (Some(l), Some(h)) => format!("95% interval [{}, {}]", signed_pct(l), signed_pct(h)),
        _ => "no interval".to_string(),
    };
    let p = c
        .p_value
        .map(|p| format!(", p = {p:.3}"))
        .unwrap_or_default();
    let note = c
        .note
        .as_ref()
        .map(|n| format!(" · {n}"))
        .unwrap_or_default();
    let change = c.change_pct.filter(|v| v.is_finite());
    svg.group(&format!(
        "{name}: {} ({interval}{p}) {}{note}",
        change
            .map(signed_pct)
            .unwrap_or_else(|| "no change figure".into()),
        c.verdict.as_str()
    ));
    svg.text((LABEL_W, y + 4.0), "tick end", "", &cut(name, 38));
    if let Some(ch) = change {
        let (a, b) = (x.at(0.0), x.at(ch.clamp(x.lo, x.hi)));
        svg.rect(
            (a.min(b), y - 5.0),
            ((b - a).abs().max(1.0), 10.0),
            colour,
            0.45,
        );
        // Cut at the edge: a mark just inside the end says the bar goes on.
        if ch > x.hi {
            svg.text((b - 8.0, y + 4.0), "value", "", CUT_MARK);
        } else if ch < x.lo {
            svg.text((b + 2.0, y + 4.0), "value", "", "‹");
        }
    }
    if let (Some(l), Some(h)) = (c.ci_low_pct, c.ci_high_pct) {
        let (a, b) = (x.at(l.max(x.lo)), x.at(h.min(x.hi)));
        svg.rect((a, y - 1.0), ((b - a).max(1.0), 2.0), colour, 1.0);
        svg.rect((a - 0.75, y - 6.0), (1.5, 12.0), colour, 1.0);
        svg.rect((b - 0.75, y - 6.0), (1.5, 12.0), colour, 1.0);
    }
    let text = format!(
        "{} {}",
        change.map(signed_pct).unwrap_or_else(|| "–".into()),
        c.verdict.as_str()
    );
    svg.text(
        (PLOT.1 + 8.0, y + 4.0),
        "value",
        &format!(" fill=\"{colour}\""),
        &text,
    );
    svg.end_group();
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigor_model::result::Verdict;

    fn comparison(change: f64, ci: (f64, f64), verdict: Verdict) -> Comparison {
        let mut c = crate::sample::sample_result().comparisons.remove(0);
        c.change_pct = Some(change);
        (c.ci_low_pct, c.ci_high_pct) = (Some(ci.0), Some(ci.1));
        c.verdict = verdict;
        c
    }

    #[test]
    fn bars_are_coloured_by_verdict_with_the_threshold_band() {
        let cs = [
            comparison(-10.0, (-12.0, -8.0), Verdict::Regression),
            comparison(5.0, (3.0, 7.0), Verdict::Improvement),
            comparison(0.1, (-0.5, 0.8), Verdict::NoChange),
            comparison(1.0, (-4.0, 6.0), Verdict::Inconclusive),
        ];
        let refs: Vec<&Comparison> = cs.iter().collect();
        let svg = chart("Requests/s", &refs, |c| c.candidate.clone(), Some(2.0));
        assert!(svg.contains("chart-comparison"));
        for v in [
            Verdict::Regression,
            Verdict::Improvement,
            Verdict::NoChange,
            Verdict::Inconclusive,
        ] {
            assert!(svg.contains(palette::verdict(v)), "{v:?}");
        }
        assert!(svg.contains(">-10.0% regression</text>"), "{svg}");
        assert!(svg.contains("±2% threshold"));
        assert!(svg.contains("95% interval [-12.0%, -8.0%]"));
        assert!(!svg.contains(CUT_MARK));
    }

    #[test]
    fn a_huge_change_is_cut_not_allowed_to_flatten_the_others() {
        let cs = [
            comparison(114_950.0, (100.0, 200_000.0), Verdict::Inconclusive),
            comparison(-10.0, (-12.0, -8.0), Verdict::Regression),
        ];
        let refs: Vec<&Comparison> = cs.iter().collect();
        let svg = chart("x", &refs, |c| c.measurement.clone(), None);
        assert!(svg.contains(CUT_MARK), "{svg}");
        assert!(svg.contains(">100%</text>"), "{svg}");
        assert!(svg.contains(">+114,950.0% inconclusive</text>"), "{svg}");
    }

    #[test]
    fn many_rows_are_capped() {
        let cs: Vec<Comparison> = (0..100)
            .map(|_| comparison(1.0, (0.0, 2.0), Verdict::NoChange))
            .collect();
        let refs: Vec<&Comparison> = cs.iter().collect();
        let svg = chart("x", &refs, |c| c.candidate.clone(), None);
        assert_eq!(svg.matches("<g>").count(), MAX_BARS);
    }
}
