//! The SVG text of one chart: elements written with coordinates rounded to a tenth of a pixel
//! (a page of charts stays small) and every piece of text escaped, so a variant named
//! `<script>` is drawn as those characters and never parsed as markup.

use crate::html::escape;

/// One `<svg>` element being written; [`Svg::finish`] closes it.
pub struct Svg {
    out: String,
}

/// A coordinate or length as written: one decimal, no trailing `.0`.
pub fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

impl Svg {
    /// Opens a chart of `kind` (its class, `chart-KIND`, lets tests and style sheets find every
    /// chart of that kind) sized `w`×`h`, described by `label` for screen readers.
    pub fn new(kind: &str, w: f64, h: f64, label: &str) -> Svg {
        Svg {
            out: format!(
                "<svg class=\"chart chart-{kind}\" xmlns=\"http://www.w3.org/2000/svg\" \
                 width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" \
                 aria-label=\"{}\">",
                escape(label),
                w = n(w),
                h = n(h)
            ),
        }
    }

    /// A straight line of CSS class `class`.
    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), class: &str) {
        self.out.push_str(&format!(
            "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            n(x1),
            n(y1),
            n(x2),
            n(y2)
        ));
    }

    /// A rectangle filled with `fill` (a palette colour) at `opacity`.
    pub fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), fill: &str, opacity: f64) {
        self.out.push_str(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" \
             fill-opacity=\"{opacity}\"/>",
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0))
        ));
    }

    /// Text at (`x`, `y`): `class` sets its size and anchor, `extra` further trusted attributes
    /// (a rotation); the text itself is escaped.
    pub fn text(&mut self, (x, y): (f64, f64), class: &str, extra: &str, text: &str) {
        self.out.push_str(&format!(
            "<text class=\"{class}\" x=\"{}\" y=\"{}\"{extra}>{}</text>",
            n(x),
            n(y),
            escape(text)
        ));
    }

    /// A polyline through `points` stroked with `colour`; `dashed` for what did not count.
    pub fn polyline(&mut self, points: &[(f64, f64)], colour: &str, opacity: f64, dashed: bool) {
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", n(*x), n(*y)))
            .collect();
        let dash = if dashed {
            " stroke-dasharray=\"4 3\""
        } else {
            ""
        };
        self.out.push_str(&format!(
            "<polyline class=\"series\" points=\"{}\" stroke=\"{colour}\" \
             stroke-opacity=\"{opacity}\"{dash}/>",
            pts.join(" ")
        ));
    }

    /// A filled polygon (a min–max band).
    pub fn polygon(&mut self, points: &[(f64, f64)], colour: &str, opacity: f64) {
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", n(*x), n(*y)))
            .collect();
        self.out.push_str(&format!(
            "<polygon class=\"band\" points=\"{}\" fill=\"{colour}\" fill-opacity=\"{opacity}\"/>",
            pts.join(" ")
        ));
    }

    /// A dot, with `tip` shown by the browser on hover (an SVG `<title>`, no script).
    pub fn dot(&mut self, (x, y): (f64, f64), r: f64, colour: &str, tip: Option<&str>) {
        let tip = tip
            .map(|t| format!("<title>{}</title>", escape(t)))
            .unwrap_or_default();
        self.out.push_str(&format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{colour}\">{tip}</circle>",
            n(x),
            n(y),
            n(r)
        ));
    }

    /// Opens a group whose hover text is `tip`; close it with [`Svg::end_group`].
    pub fn group(&mut self, tip: &str) {
        self.out
            .push_str(&format!("<g><title>{}</title>", escape(tip)));
    }

    /// Closes the group [`Svg::group`] opened.
    pub fn end_group(&mut self) {
        self.out.push_str("</g>");
    }

    /// The finished element.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_labels_are_escaped_everywhere() {
        let mut s = Svg::new("x", 100.0, 50.0, "a\"><script>alert(1)</script>");
        s.text((1.0, 2.0), "t", "", "<script>alert(1)</script>");
        s.dot((1.0, 1.0), 2.0, "#000", Some("</title><script>"));
        s.group("<b>");
        s.end_group();
        let out = s.finish();
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("<b>"), "{out}");
        assert!(
            out.contains("aria-label=\"a&quot;&gt;&lt;script&gt;"),
            "{out}"
        );
        assert!(
            out.contains(">&lt;script&gt;alert(1)&lt;/script&gt;</text>"),
            "{out}"
        );
        assert!(out.starts_with("<svg class=\"chart chart-x\""));
        assert!(out.ends_with("</svg>"));
    }

    #[test]
    fn coordinates_are_short() {
        assert_eq!(n(1.0), "1");
        assert_eq!(n(1.2345), "1.2");
        assert_eq!(n(-0.04), "0");
        assert_eq!(n(12.96), "13");
    }
}
