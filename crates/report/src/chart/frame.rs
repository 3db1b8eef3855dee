//! A chart's frame: the plot area, its title, its axes with ticks, grid lines and labelled
//! units, and the legend under it. What is drawn inside goes through [`Frame::x`] and
//! [`Frame::y`].

use super::axis::Scale;
use super::svg::Svg;

/// Room around the plot area, px.
const LEFT: f64 = 62.0;
const RIGHT: f64 = 26.0;
const TOP: f64 = 24.0;
const BOTTOM: f64 = 36.0;
/// Height of one legend line, px.
const LEGEND_LINE: f64 = 16.0;
/// Longest name a legend or label shows before it is cut (the hover text has it whole).
pub const MAX_NAME: usize = 40;

/// What a frame is made of: its kind (the `chart-KIND` class), its title and axes.
pub struct Spec<'a> {
    pub kind: &'a str,
    pub title: &'a str,
    pub width: f64,
    pub height: f64,
    /// X axis: its value range, its ticks (value, label) and its label with unit.
    pub x: (f64, f64),
    pub x_ticks: Vec<(f64, String)>,
    pub x_label: &'a str,
    pub y: (f64, f64),
    pub y_ticks: Vec<(f64, String)>,
    pub y_label: &'a str,
    /// Legend entries: name and colour.
    pub legend: Vec<(String, &'static str)>,
}

/// A chart being drawn.
pub struct Frame {
    pub svg: Svg,
    pub x: Scale,
    pub y: Scale,
}

/// `s` cut to `max` characters, with `…` where it was cut.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max - 1).collect::<String>() + "…"
    }
}

/// Legend entries laid out in lines that fit `width`: (entry, x, line).
fn legend_layout(entries: &[(String, &'static str)], width: f64) -> Vec<(usize, f64, usize)> {
    let (mut x, mut line) = (LEFT, 0);
    let mut out = Vec::new();
    for (i, (name, _)) in entries.iter().enumerate() {
        let w = 22.0 + 6.5 * cut(name, MAX_NAME).chars().count() as f64;
        if x > LEFT && x + w > width {
            x = LEFT;
            line += 1;
        }
        out.push((i, x, line));
        x += w + 10.0;
    }
    out
}

impl Frame {
    /// Draws the frame of `spec`; the height grows by the legend's lines.
    pub fn new(spec: &Spec) -> Frame {
        let layout = legend_layout(&spec.legend, spec.width);
        let legend_lines = layout.last().map(|(_, _, l)| l + 1).unwrap_or(0);
        let total_h = spec.height + legend_lines as f64 * LEGEND_LINE;
        let mut svg = Svg::new(spec.kind, spec.width, total_h, spec.title);
        let (x0, x1) = (LEFT, spec.width - RIGHT);
        let (y0, y1) = (spec.height - BOTTOM, TOP);
        let x = Scale {
            lo: spec.x.0,
            hi: spec.x.1,
            px0: x0,
            px1: x1,
        };
        let y = Scale {
            lo: spec.y.0,
            hi: spec.y.1,
            px0: y0,
            px1: y1,
        };
        svg.text((LEFT, 14.0), "title", "", &cut(spec.title, 70));
        for (v, l) in &spec.y_ticks {
            let py = y.at(*v);
            svg.line((x0, py), (x1, py), "grid");
            svg.text((x0 - 4.0, py + 3.5), "tick end", "", l);
        }
        for (v, l) in &spec.x_ticks {
            let px = x.at(*v);
            svg.line((px, y0), (px, y0 + 4.0), "axis");
            svg.text((px, y0 + 15.0), "tick mid", "", l);
        }
        svg.line((x0, y0), (x1, y0), "axis");
        svg.line((x0, y0), (x0, y1), "axis");
        svg.text(((x0 + x1) / 2.0, y0 + 29.0), "label mid", "", spec.x_label);
        let mid = (y0 + y1) / 2.0;
        svg.text(
            (12.0, mid),
            "label mid",
            &format!(" transform=\"rotate(-90 12 {})\"", super::svg::n(mid)),
            spec.y_label,
        );
        for (i, lx, line) in layout {
            let (name, colour) = &spec.legend[i];
            let ly = spec.height + 4.0 + line as f64 * LEGEND_LINE;
            svg.rect((lx, ly), (14.0, 8.0), colour, 0.9);
            svg.text((lx + 18.0, ly + 8.0), "legend", "", &cut(name, MAX_NAME));
        }
        Frame { svg, x, y }
    }

    /// The finished chart.
    pub fn finish(self) -> String {
        self.svg.finish()
    }

    /// Shades `x0..x1` across the plot area (the measured window).
    pub fn shade_x(&mut self, x0: f64, x1: f64, colour: &str, opacity: f64) {
        let (a, b) = (self.x.at(x0.max(self.x.lo)), self.x.at(x1.min(self.x.hi)));
        let (top, bottom) = (self.y.px1, self.y.px0);
        self.svg.rect(
            (a.min(b), top),
            ((b - a).abs(), bottom - top),
            colour,
            opacity,
        );
    }

    /// A line through `points`; a missing or non-finite y breaks it, and a point with no
    /// neighbour on either side is drawn as a dot so it is not lost.
    pub fn line(
        &mut self,
        points: &[(f64, Option<f64>)],
        colour: &str,
        opacity: f64,
        dashed: bool,
    ) {
        for run in runs(points) {
            let px: Vec<(f64, f64)> = run
                .iter()
                .map(|(x, y)| (self.x.at(*x), self.y.at(*y)))
                .collect();
            if px.len() == 1 {
                self.svg.dot(px[0], 2.5, colour, None);
            } else {
                self.svg.polyline(&px, colour, opacity, dashed);
            }
        }
    }

    /// A band between `lo` and `hi` over `x`, broken where either is missing.
    pub fn band(&mut self, points: &[(f64, Option<(f64, f64)>)], colour: &str, opacity: f64) {
        let mut run: Vec<(f64, f64, f64)> = Vec::new();
        let flush = |run: &mut Vec<(f64, f64, f64)>, svg: &mut Svg, x: &Scale, y: &Scale| {
            if run.len() > 1 {
                let mut poly: Vec<(f64, f64)> =
                    run.iter().map(|(a, _, h)| (x.at(*a), y.at(*h))).collect();
                poly.extend(run.iter().rev().map(|(a, l, _)| (x.at(*a), y.at(*l))));
                svg.polygon(&poly, colour, opacity);
            } else if let Some((a, l, h)) = run.first() {
                svg.line((x.at(*a), y.at(*l)), (x.at(*a), y.at(*h)), "whisker");
            }
            run.clear();
        };
        for (x, v) in points {
            match v {
                Some((l, h)) if l.is_finite() && h.is_finite() => run.push((*x, *l, *h)),
                _ => flush(&mut run, &mut self.svg, &self.x, &self.y),
            }
        }
        flush(&mut run, &mut self.svg, &self.x, &self.y);
    }
}

/// The unbroken stretches of `points`: a missing or non-finite value ends one.
pub fn runs(points: &[(f64, Option<f64>)]) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![Vec::new()];
    for (x, y) in points {
        match y {
            Some(v) if v.is_finite() && x.is_finite() => out.last_mut().unwrap().push((*x, *v)),
            _ => {
                if !out.last().unwrap().is_empty() {
                    out.push(Vec::new());
                }
            }
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(legend: Vec<(String, &'static str)>) -> Spec<'static> {
        Spec {
            kind: "test",
            title: "t",
            width: 300.0,
            height: 200.0,
            x: (0.0, 10.0),
            x_ticks: vec![(0.0, "0".into()), (10.0, "10".into())],
            x_label: "time (s)",
            y: (0.0, 100.0),
            y_ticks: vec![(0.0, "0".into()), (100.0, "100".into())],
            y_label: "CPU (%)",
            legend,
        }
    }

    #[test]
    fn gaps_break_lines_and_lone_points_are_dots() {
        let pts = [
            (0.0, Some(1.0)),
            (1.0, Some(2.0)),
            (2.0, None),
            (3.0, Some(f64::NAN)),
            (4.0, Some(3.0)),
        ];
        let r = runs(&pts);
        assert_eq!(r, vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(4.0, 3.0)]]);
        let mut f = Frame::new(&spec(vec![]));
        f.line(&pts, "#123456", 1.0, false);
        let svg = f.finish();
        assert_eq!(svg.matches("<polyline").count(), 1, "{svg}");
        assert_eq!(svg.matches("<circle").count(), 1, "{svg}");
        assert!(svg.contains(">time (s)</text>") && svg.contains(">CPU (%)</text>"));
    }

    #[test]
    fn the_legend_wraps_and_grows_the_chart() {
        let names: Vec<(String, &'static str)> = (0..6)
            .map(|i| (format!("variant-{i}-long"), "#000"))
            .collect();
        let svg = Frame::new(&spec(names)).finish();
        assert!(svg.contains("height=\"248\""), "{svg}");
        let long = Frame::new(&spec(vec![("x".repeat(100), "#000")])).finish();
        assert!(long.contains(&format!("{}…", "x".repeat(39))));
    }
}
