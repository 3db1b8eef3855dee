//! rigor's line protocol: a line `##rigor {"name":"msgs_per_sec","value":801176,…}` is one
//! figure, with what the program knows about it (unit, direction, label) and the row it belongs
//! to (`"row":{"clients":"30"}`). Every field is checked, so a typo is an error, not a figure
//! silently dropped or misread.

use crate::selfreport::SelfReportError;

use super::text::quote;
use super::{check_label, check_row, Reported};
use crate::config::valid_figure_name;
use rigor_model::declarations::{Better, Declaration};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// What starts a protocol line.
pub const PREFIX: &str = "##rigor";

/// The fields a protocol line may hold.
const FIELDS: &str = "name, value, unit, direction, label, row";

/// Whether `line` is meant as a protocol line: `##rigor` first (indentation allowed), then a
/// space, a `{` or nothing. `##rigorous` is ordinary output.
pub fn is_protocol(line: &str) -> bool {
    line.trim_start()
        .strip_prefix(PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '{']))
}

/// The figure of protocol line `n`; an error names the line, says what is wrong and quotes it.
pub fn parse(n: usize, line: &str) -> Result<Reported, SelfReportError> {
    let json = line.trim_start()[PREFIX.len()..].trim();
    let fail = |why: String| {
        format!(
            "line {n} of the output is a malformed {PREFIX} line: {why}: {}",
            quote(line)
        )
    };
    if json.is_empty() {
        return Err(fail(format!("no JSON object after {PREFIX}")).into());
    }
    let map = match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            return Err(fail(format!("expected one JSON object, found {}", kind(&other))).into())
        }
        Err(e) => return Err(fail(format!("not one JSON object ({e})")).into()),
    };
    figure(&map).map_err(|e| fail(e.0).into())
}

/// The figure an object describes.
fn figure(map: &Map<String, Value>) -> Result<Reported, SelfReportError> {
    if let Some(k) = map
        .keys()
        .find(|k| !FIELDS.split(", ").any(|f| f == k.as_str()))
    {
        return Err(format!("unknown field `{k}` (the fields are {FIELDS})").into());
    }
    let name = match map.get("name") {
        Some(Value::String(s)) => s,
        Some(other) => return Err(format!("`name` must be a string, not {}", kind(other)).into()),
        None => return Err("`name` is missing".into()),
    };
    valid_figure_name(name).map_err(|e| format!("`name`: {e}"))?;
    let value = match map.get("value") {
        Some(Value::Number(v)) => v
            .as_f64()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("`value` {v} is not a finite number"))?,
        Some(other) => {
            return Err(format!("`value` must be a JSON number, not {}", kind(other)).into())
        }
        None => return Err("`value` is missing".into()),
    };
    let text = |key: &str| -> Result<Option<String>, SelfReportError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => check_label(key, s).map(|()| Some(s.clone())),
            Some(other) => Err(format!("`{key}` must be a string, not {}", kind(other)).into()),
        }
    };
    let direction = text("direction")?
        .map(|d| Better::parse(&d).map_err(|e| format!("`direction`: {e}")))
        .transpose()?;
    let declaration = Declaration {
        unit: text("unit")?,
        direction,
        label: text("label")?,
        threshold_pct: None,
    };
    Ok(Reported {
        id: format!("cmd.{name}"),
        value,
        row: row(map.get("row"))?,
        declaration,
    })
}

/// A row number as its value reads: whole numbers without a fraction, others in the shortest
/// form that reads back the same.
fn number_text(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i.to_string(),
        (_, Some(u), _) => u.to_string(),
        (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
            (f as i64).to_string()
        }
        (_, _, Some(f)) => f.to_string(),
        _ => n.to_string(),
    }
}

/// The `row` object: names to strings or numbers (a number by its value, so `30` and `30.0` are
/// one row, `30`; `1.5` stays `1.5`).
fn row(v: Option<&Value>) -> Result<BTreeMap<String, String>, SelfReportError> {
    let map = match v {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(format!(
                "`row` must be an object such as {{\"clients\":\"30\"}}, not {}",
                kind(other)
            )
            .into())
        }
    };
    let mut out = BTreeMap::new();
    for (k, v) in map {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => number_text(n),
            other => {
                return Err(format!(
                    "`row.{k}` must be a string or a number, not {}",
                    kind(other)
                )
                .into())
            }
        };
        out.insert(k.clone(), text);
    }
    check_row(&out)?;
    Ok(out)
}

/// What a JSON value is, for an error: `the string "12"`, `null`, `an array`.
pub fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {}", quote(s)),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}
