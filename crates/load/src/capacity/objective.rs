//! The objective a rate must meet (`p99<50ms,errors<1%`): parsed once, checked against the
//! figures of each probe's measured window.

use crate::report::LoadReport;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A figure of the measured window an objective can bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Figure {
    P50,
    P90,
    P99,
    P999,
    Max,
    /// Failed requests (socket errors and responses outside 200–399) over the requests due.
    Errors,
}

/// The names an objective may use, in the order the error message lists them.
const NAMES: &[(&str, Figure)] = &[
    ("p50", Figure::P50),
    ("p90", Figure::P90),
    ("p99", Figure::P99),
    ("p999", Figure::P999),
    ("p99.9", Figure::P999),
    ("max", Figure::Max),
    ("errors", Figure::Errors),
];

impl Figure {
    /// The name an objective writes it with.
    pub fn name(self) -> &'static str {
        match self {
            Figure::P50 => "p50",
            Figure::P90 => "p90",
            Figure::P99 => "p99",
            Figure::P999 => "p999",
            Figure::Max => "max",
            Figure::Errors => "errors",
        }
    }
}

/// One bound: `p99 < 50ms` (limit in ms) or `errors < 1%` (limit as a fraction).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    pub figure: Figure,
    /// Milliseconds for a latency, a fraction in [0, 1] for `errors`.
    pub limit: f64,
    /// `<=` rather than `<`.
    pub inclusive: bool,
}

impl Bound {
    fn holds(&self, value: f64) -> bool {
        if self.inclusive {
            value <= self.limit
        } else {
            value < self.limit
        }
    }
}

/// Every bound a probe's window must meet, with the text it was written as.
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    pub bounds: Vec<Bound>,
    text: String,
}

/// Why an objective's text is not one; the message quotes the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectiveError {
    #[error("the objective is empty: write bounds like 'p99<50ms' or 'p99<50ms,errors<1%'")]
    Empty,
    #[error("`{0}` has no `<` or `<=`: write bounds like 'p99<50ms' or 'errors<1%'")]
    NoOperator(String),
    #[error("`{term}`: unknown figure `{figure}`; an objective bounds p50, p90, p99, p999, max or errors")]
    UnknownFigure { term: String, figure: String },
    #[error("`{0}` has no limit after its operator: write e.g. 'p99<50ms'")]
    NoLimit(String),
    #[error(
        "`{term}`: `{limit}` is not a latency: write a number and a unit, e.g. 50ms, 1.5s, 800us"
    )]
    BadLatency { term: String, limit: String },
    #[error("`{term}`: `{limit}` is not an error rate: write a percentage from 0% to 100%, e.g. 1% or 0.1%")]
    BadRate { term: String, limit: String },
    #[error("`{term}` can never be met: a latency below 0 ms")]
    Impossible { term: String },
    #[error("`{0}` is given twice")]
    Repeated(String),
}

impl FromStr for Objective {
    type Err = ObjectiveError;

    fn from_str(text: &str) -> Result<Self, ObjectiveError> {
        let mut bounds: Vec<Bound> = Vec::new();
        for term in text.split(',').map(str::trim) {
            if term.is_empty() {
                if text.trim().is_empty() {
                    return Err(ObjectiveError::Empty);
                }
                continue;
            }
            let bound = parse_bound(term)?;
            if bounds.iter().any(|b| b.figure == bound.figure) {
                return Err(ObjectiveError::Repeated(bound.figure.name().into()));
            }
            bounds.push(bound);
        }
        if bounds.is_empty() {
            return Err(ObjectiveError::Empty);
        }
        let text = bounds.iter().map(describe).collect::<Vec<_>>().join(", ");
        Ok(Objective { bounds, text })
    }
}

fn parse_bound(term: &str) -> Result<Bound, ObjectiveError> {
    let (figure, inclusive, limit) = if let Some((f, l)) = term.split_once("<=") {
        (f, true, l)
    } else if let Some((f, l)) = term.split_once('<') {
        (f, false, l)
    } else {
        return Err(ObjectiveError::NoOperator(term.into()));
    };
    let name = figure.trim().to_ascii_lowercase();
    let Some(&(_, figure)) = NAMES.iter().find(|(n, _)| *n == name) else {
        return Err(ObjectiveError::UnknownFigure {
            term: term.into(),
            figure: figure.trim().into(),
        });
    };
    let limit_text = limit.trim();
    if limit_text.is_empty() {
        return Err(ObjectiveError::NoLimit(term.into()));
    }
    let limit = if figure == Figure::Errors {
        parse_rate(limit_text).ok_or_else(|| ObjectiveError::BadRate {
            term: term.into(),
            limit: limit_text.into(),
        })?
    } else {
        let ms = parse_ms(limit_text).ok_or_else(|| ObjectiveError::BadLatency {
            term: term.into(),
            limit: limit_text.into(),
        })?;
        if ms <= 0.0 && !inclusive {
            return Err(ObjectiveError::Impossible { term: term.into() });
        }
        ms
    };
    Ok(Bound {
        figure,
        limit,
        inclusive,
    })
}

/// `50ms`, `1.5s`, `800us`/`800µs` as milliseconds.
fn parse_ms(text: &str) -> Option<f64> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = text.split_at(split);
    let n: f64 = number.parse().ok().filter(|n: &f64| n.is_finite())?;
    let scale = match unit.trim() {
        "ms" => 1.0,
        "s" => 1000.0,
        "us" | "µs" => 0.001,
        _ => return None,
    };
    Some(n * scale)
}

/// `1%`, `0.5 %` as a fraction.
fn parse_rate(text: &str) -> Option<f64> {
    let number = text.strip_suffix('%')?.trim();
    let p: f64 = number.parse().ok()?;
    (p.is_finite() && (0.0..=100.0).contains(&p)).then_some(p / 100.0)
}

fn describe(b: &Bound) -> String {
    let op = if b.inclusive { "<=" } else { "<" };
    match b.figure {
        Figure::Errors => format!("errors{op}{}%", trim(b.limit * 100.0)),
        f => format!("{}{op}{}ms", f.name(), trim(b.limit)),
    }
}

/// A number without trailing zeros: 50, 0.5, 1.25.
fn trim(n: f64) -> String {
    let s = format!("{n:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The objective in its canonical spelling: `p99<50ms, errors<1%`.
impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Objective {
    /// Whether the window meets every bound. A window with no answer at all meets none: its
    /// latency figures are empty, not fast.
    pub fn met(&self, w: &Window) -> bool {
        w.answered > 0 && self.bounds.iter().all(|b| b.holds(w.value(b.figure)))
    }

    /// The largest latency limit, ms (none for an objective on errors alone): how large a
    /// queue must grow before a probe can see it.
    pub fn latency_limit_ms(&self) -> Option<f64> {
        self.bounds
            .iter()
            .filter(|b| b.figure != Figure::Errors)
            .map(|b| b.limit)
            .reduce(f64::max)
    }
}

/// What a probe measured that an objective can be judged on: the window's latency figures
/// (corrected for coordinated omission in the open model), its errors and its rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    /// Responses completed in the window, any status.
    pub answered: u64,
    /// Socket errors plus responses outside 200–399.
    pub errors: u64,
    /// Requests due in the window: answered plus failed without an answer.
    pub due: u64,
    /// Responses per measured second (the rate the load actually reached).
    pub achieved_rps: f64,
}

impl Window {
    /// The figures of one engine run's measured window.
    pub fn from_report(r: &LoadReport) -> Window {
        let l = &r.latency;
        let socket = r.errors.socket_errors();
        Window {
            p50_ms: l.p50_ms,
            p90_ms: l.p90_ms,
            p99_ms: l.p99_ms,
            p999_ms: l.p999_ms,
            max_ms: l.max_ms,
            answered: r.requests,
            errors: socket + r.bad_responses,
            due: r.requests + socket,
            achieved_rps: r.rps,
        }
    }

    /// Failed requests over requests due, 0 for an empty window.
    pub fn error_rate(&self) -> f64 {
        if self.due == 0 {
            0.0
        } else {
            self.errors as f64 / self.due as f64
        }
    }

    fn value(&self, f: Figure) -> f64 {
        match f {
            Figure::P50 => self.p50_ms,
            Figure::P90 => self.p90_ms,
            Figure::P99 => self.p99_ms,
            Figure::P999 => self.p999_ms,
            Figure::Max => self.max_ms,
            Figure::Errors => self.error_rate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(p99: f64, errors: u64) -> Window {
        Window {
            p50_ms: p99 / 4.0,
            p90_ms: p99 / 2.0,
            p99_ms: p99,
            p999_ms: p99 * 2.0,
            max_ms: p99 * 3.0,
            answered: 1000 - errors,
            errors,
            due: 1000,
            achieved_rps: 100.0,
        }
    }

    #[test]
    fn bounds_parse_in_every_spelling() {
        let o: Objective = " P99 < 50ms , errors<=1% ,p99.9<1.5s, max<800us"
            .parse()
            .unwrap();
        assert_eq!(
            o.to_string(),
            "p99<50ms, errors<=1%, p999<1500ms, max<0.8ms"
        );
        assert_eq!(o.latency_limit_ms(), Some(1500.0));
        let o: Objective = "errors<0.5%".parse().unwrap();
        assert_eq!(o.bounds[0].limit, 0.005);
        assert_eq!(o.latency_limit_ms(), None);
    }

    #[test]
    fn a_window_meets_an_objective_only_within_every_bound() {
        let o: Objective = "p99<50ms,errors<1%".parse().unwrap();
        assert!(o.met(&window(49.0, 9)));
        assert!(!o.met(&window(50.0, 0)), "50 is not below 50");
        assert!(!o.met(&window(10.0, 10)), "1% is not below 1%");
        let inclusive: Objective = "p99<=50ms".parse().unwrap();
        assert!(inclusive.met(&window(50.0, 0)));
        assert!(
            !o.met(&Window::default()),
            "an empty window is not a fast one"
        );
    }

    #[test]
    fn bad_objectives_say_what_is_wrong() {
        for (text, needle) in [
            ("p99<", "no limit"),
            ("p95<50ms", "unknown figure `p95`"),
            ("p99>50ms", "no `<`"),
            ("p99<50", "not a latency"),
            ("p99<fast", "not a latency"),
            ("errors<1", "not an error rate"),
            ("errors<101%", "not an error rate"),
            ("", "empty"),
            (" , ", "empty"),
            ("p99<1ms,p99<2ms", "given twice"),
            ("p99<0ms", "never be met"),
        ] {
            let e = text.parse::<Objective>().unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
