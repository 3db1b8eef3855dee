//! Pass/fail limits on absolute values (`[[limits]]` in rigor.toml, `--limit 'ID<50ms'`), as
//! k6 has thresholds: each limit is checked against the median of every row that measured its
//! id, and one not met fails the run with its own exit code. A comparison says whether a change
//! is real; a limit says whether the figure is good enough, which a first run can already tell.

use rigor_model::declarations::Declarations;
pub use rigor_model::result::LimitOutcome as Outcome;
use rigor_model::result::RunResult;

/// How a limit compares a row's median with its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Less,
    AtMost,
    Greater,
    AtLeast,
}

impl Op {
    /// `<`, `<=`, `>`, `>=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Less => "<",
            Op::AtMost => "<=",
            Op::Greater => ">",
            Op::AtLeast => ">=",
        }
    }

    fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Op::Less => value < bound,
            Op::AtMost => value <= bound,
            Op::Greater => value > bound,
            Op::AtLeast => value >= bound,
        }
    }
}

/// One limit, checked: its id, how it compares, and its bound in the measurement's own unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub measure: String,
    pub op: Op,
    /// The bound in the measurement's unit (`50ms` on a millisecond id is 50, `1s` is 1000).
    pub bound: f64,
    /// The bound as the user wrote it (`50ms`), for the report.
    pub written: String,
}

impl Limit {
    /// `load.latency.p99 <= 50ms`: how the report and the JSON name the limit.
    pub fn condition(&self) -> String {
        format!("{} {}", self.op.as_str(), self.written)
    }
}

/// The unit a limit on `id` is written in: the catalogue's, else the declared one.
pub fn unit_of(id: &str, decl: &Declarations) -> Option<String> {
    rigor_model::measurements::info(id)
        .map(|m| m.unit.to_string())
        .or_else(|| decl.get(id).and_then(|d| d.unit.clone()))
}

/// Reads `--limit ID<VALUE` (also `<=`, `>`, `>=`), the id checked against the catalogue (a
/// command's `cmd.NAME` and `app.metric.NAME` are open) and the value against its unit.
pub fn parse_flag(text: &str, decl: &Declarations) -> Result<Limit, LimitError> {
    let at = text
        .find(['<', '>'])
        .ok_or_else(|| LimitError::NoOperator {
            text: text.to_string(),
        })?;
    let (id, rest) = text.split_at(at);
    let (op, value) = if let Some(v) = rest.strip_prefix("<=") {
        (Op::AtMost, v)
    } else if let Some(v) = rest.strip_prefix(">=") {
        (Op::AtLeast, v)
    } else if let Some(v) = rest.strip_prefix('<') {
        (Op::Less, v)
    } else {
        (Op::Greater, &rest[1..])
    };
    limit(id.trim(), op, value.trim(), decl).map_err(|e| LimitError::Flag {
        text: text.to_string(),
        source: Box::new(e),
    })
}

/// A limit of `id` with `op` and the bound `value` as written (`50ms`, `"2 GiB"`, `10000`).
pub fn limit(id: &str, op: Op, value: &str, decl: &Declarations) -> Result<Limit, LimitError> {
    if id.is_empty() {
        return Err(LimitError::EmptyId);
    }
    rigor_model::measurements::validate(id)?;
    let bound = value_in(value, unit_of(id, decl).as_deref()).map_err(|e| LimitError::Value {
        id: id.to_string(),
        source: Box::new(e),
    })?;
    // rigor's own figures (rates, times, sizes, counts, shares) are never negative: a `max`
    // below 0 would fail every run however good, after the whole run. A command's or a
    // runtime's own figure may be negative, so its bound is taken as written.
    if op == Op::AtMost && bound < 0.0 && rigor_model::measurements::info(id).is_some() {
        return Err(LimitError::Negative {
            id: id.to_string(),
            value: value.to_string(),
        });
    }
    Ok(Limit {
        measure: id.to_string(),
        op,
        bound,
        written: value.to_string(),
    })
}

/// Why a limit could not be read: names the flag, the id or the value that is wrong.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    /// `--limit` text with neither `<` nor `>`.
    #[error("--limit `{text}`: expected ID<VALUE or ID>VALUE, e.g. 'load.latency.p99<50ms'")]
    NoOperator { text: String },
    /// What was wrong in the `--limit` text.
    #[error("--limit `{text}`: {source}")]
    Flag {
        text: String,
        source: Box<LimitError>,
    },
    /// Nothing before the operator.
    #[error("the measurement id is empty")]
    EmptyId,
    /// An id no run can record.
    #[error(transparent)]
    Unknown(#[from] rigor_model::measurements::UnknownMeasurement),
    /// The bound of `id` could not be read.
    #[error("{id}: {source}")]
    Value { id: String, source: Box<LimitError> },
    /// A `max` below 0 on a figure that is never negative.
    #[error("{id}: `{value}`: a bound below 0 can never be met ({id} is never negative)")]
    Negative { id: String, value: String },
    /// The bound is not a number.
    #[error("`{value}` is not a number with an optional unit, such as 50ms")]
    NotANumber { value: String },
    /// A unit given for a measurement that has none.
    #[error("`{value}`: the measurement has no known unit, so give a plain number")]
    NoUnit { value: String },
    /// A unit of another kind than the measurement's.
    #[error("`{value}`: the measurement is in {unit}, and `{suffix}` does not convert to it")]
    OtherUnit {
        value: String,
        unit: String,
        suffix: String,
    },
}

/// Time units in milliseconds, size units in MiB: what a written bound converts through.
const TIME_MS: &[(&str, f64)] = &[
    ("ns", 1e-6),
    ("us", 1e-3),
    ("µs", 1e-3),
    ("ms", 1.0),
    ("s", 1000.0),
    ("min", 60_000.0),
];
const SIZE_MIB: &[(&str, f64)] = &[
    ("B", 1.0 / 1_048_576.0),
    ("KiB", 1.0 / 1024.0),
    ("MiB", 1.0),
    ("GiB", 1024.0),
    ("KB", 1e3 / 1_048_576.0),
    ("MB", 1e6 / 1_048_576.0),
    ("GB", 1e9 / 1_048_576.0),
];

/// `value` (a number, with an optional unit) in `unit`: `50ms` in ms is 50, `1s` 1000, `2GiB`
/// in MiB 2048. A unit of another kind than the measurement's is an error naming both.
pub fn value_in(value: &str, unit: Option<&str>) -> Result<f64, LimitError> {
    let v = value.trim();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(v.len());
    // `1e3` is a number; `e` alone at the end of digits is not a unit we know anyway.
    let (number, suffix) = v.split_at(split);
    let number: f64 = number
        .trim()
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite())
        .ok_or_else(|| LimitError::NotANumber {
            value: value.to_string(),
        })?;
    let suffix = suffix.trim();
    if suffix.is_empty() {
        return Ok(number);
    }
    let unit = unit.unwrap_or("");
    if suffix == unit {
        return Ok(number);
    }
    for family in [TIME_MS, SIZE_MIB] {
        let of = |u: &str| family.iter().find(|(n, _)| *n == u).map(|(_, f)| *f);
        if let (Some(given), Some(own)) = (of(suffix), of(unit)) {
            return Ok(number * given / own);
        }
    }
    Err(match unit {
        "" => LimitError::NoUnit {
            value: value.to_string(),
        },
        u => LimitError::OtherUnit {
            value: value.to_string(),
            unit: u.to_string(),
            suffix: suffix.to_string(),
        },
    })
}

/// Checks every limit against every row of `result` that measured its id (kept iterations'
/// median); a limit no row measured is one failed outcome with no value. `rigor run` checks its
/// own result; `rigor compare --limit` each file it compares.
pub fn check(limits: &[Limit], result: &RunResult) -> Vec<Outcome> {
    let mut out = Vec::new();
    for l in limits {
        let unit = unit_of(&l.measure, &result.measurements).unwrap_or_default();
        let outcome = |row: Option<&rigor_model::result::Row>, value: Option<f64>| Outcome {
            measure: l.measure.clone(),
            condition: l.condition(),
            bound: Some(l.bound),
            scenario: row
                .map(|r| r.scenario.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| result.scenario.clone()),
            variables: row.map(|r| r.variables.clone()).unwrap_or_default(),
            variant: row.and_then(|r| r.variant.clone()),
            value,
            unit: unit.clone(),
            passed: value.is_some_and(|v| l.op.holds(v, l.bound)),
        };
        let before = out.len();
        for row in &result.rows {
            // The row's summary; a result written without one, from its kept iterations.
            let median = row
                .summary
                .get(&l.measure)
                .map(|s| s.median)
                .or_else(|| rigor_stats::summarize(&row.values(&l.measure)).map(|s| s.median));
            if let Some(m) = median {
                out.push(outcome(Some(row), Some(m)));
            }
        }
        if out.len() == before {
            out.push(outcome(None, None));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::tests::row_with;

    fn none() -> Declarations {
        Declarations::new()
    }

    #[test]
    fn flags_read_the_comparison_and_the_unit() {
        let l = parse_flag("load.latency.p99<50ms", &none()).unwrap();
        assert_eq!((l.op, l.bound), (Op::Less, 50.0));
        assert_eq!(l.condition(), "< 50ms");
        let l = parse_flag(" load.latency.p99 <= 1.5s", &none()).unwrap();
        assert_eq!((l.op, l.bound), (Op::AtMost, 1500.0));
        let l = parse_flag("app.rss<=2GiB", &none()).unwrap();
        assert_eq!(l.bound, 2048.0);
        let l = parse_flag("load.rps>=10000", &none()).unwrap();
        assert_eq!((l.op, l.bound), (Op::AtLeast, 10000.0));
        let l = parse_flag("app.cpu>50%", &none()).unwrap();
        assert_eq!((l.op, l.bound), (Op::Greater, 50.0));
        // A command's own figure without a declared unit takes plain numbers only.
        assert_eq!(parse_flag("cmd.x<3", &none()).unwrap().bound, 3.0);
        let e = parse_flag("cmd.x<3ms", &none()).unwrap_err().to_string();
        assert!(e.contains("no known unit"), "{e}");
    }

    #[test]
    fn bad_limits_name_what_is_wrong() {
        let e = parse_flag("load.latency.p99", &none())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--limit `load.latency.p99`: expected ID<VALUE"),
            "{e}"
        );
        let e = parse_flag("load.latency.p99<50MiB", &none())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--limit `load.latency.p99<50MiB`: load.latency.p99: `50MiB`: the measurement is in ms, and `MiB` does not convert to it"
        );
        let e = parse_flag("load.nope<5", &none()).unwrap_err().to_string();
        assert!(e.contains("unknown measurement `load.nope`"), "{e}");
        let e = parse_flag("<5", &none()).unwrap_err().to_string();
        assert!(e.contains("id is empty"), "{e}");
        let e = parse_flag("load.rps>fast", &none())
            .unwrap_err()
            .to_string();
        assert!(e.contains("`fast` is not a number"), "{e}");
    }

    #[test]
    fn each_row_is_checked_on_its_median() {
        let r: RunResult = serde_json::from_value(serde_json::json!({
            "schema": rigor_model::result::SCHEMA, "rigor_version": "0", "scenario": "s",
            "profile": "local", "started_at": "", "status": "complete",
            "environment": {}, "warnings": [], "builds": [], "rows": [], "comparisons": []
        }))
        .unwrap();
        let mut r = r;
        for (variant, p99) in [("fast", [4.0, 5.0, 9.0]), ("slow", [60.0, 70.0, 1.0])] {
            let mut row = row_with(&[], Some(variant), "load.latency.p99", &p99);
            crate::summary::summarize_row(&mut row);
            r.rows.push(row);
        }
        let limits = [
            parse_flag("load.latency.p99<50ms", &none()).unwrap(),
            parse_flag("app.rss<1GiB", &none()).unwrap(),
        ];
        let out = check(&limits, &r);
        let got: Vec<(Option<&str>, Option<f64>, bool)> = out
            .iter()
            .map(|o| (o.variant.as_deref(), o.value, o.passed))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("fast"), Some(5.0), true),
                (Some("slow"), Some(60.0), false),
                // Nobody measured app.rss: failed, with no value.
                (None, None, false),
            ]
        );
        assert_eq!(out[0].unit, "ms");
        assert_eq!(out[0].condition, "< 50ms");
    }
}
