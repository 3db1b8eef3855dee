//! crank's statistics block, so programs written for crank run unchanged:
//! `#StartJobStatistics {"Metadata":[…],"Measurements":[…]} #EndJobStatistics`, anywhere in the
//! output (on lines of its own or sharing them), as often as the program likes.
//!
//! As crank's agent does, every block a run prints belongs to that run: metadata from any block
//! describes measurements in every block (a later one wins), and each name's `Aggregate`
//! combines all its measurements into the run's figure. `Reduce` combines the figures of
//! several instances of a job; one run of a command is one instance, so it is checked but has
//! nothing to combine.

use crate::selfreport::SelfReportError;

use super::protocol::kind;
use super::text::{number, quote};
use super::{check_label, Reported};
use crate::config::valid_figure_name;
use indexmap::IndexMap;
use rigor_model::declarations::Declaration;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

/// The marker that opens a block (matched ignoring case, as crank does).
pub const START: &str = "#StartJobStatistics";
/// The marker that closes it.
pub const END: &str = "#EndJobStatistics";
/// crank's separator between groups of measurements: not a figure.
const DELIMITER: &str = "$$Delimiter$$";

/// The blocks of an output, collected line by line.
#[derive(Debug, Default)]
pub struct Blocks {
    open: Option<Block>,
    done: Vec<Block>,
}

/// One block's JSON text, the line its start marker is on, and whether the text so far ends
/// inside a JSON string (a marker there is part of a value, not the block's end).
#[derive(Debug)]
struct Block {
    line: usize,
    text: String,
    in_string: bool,
    escaped: bool,
}

impl Blocks {
    /// Whether a block has started and not yet ended (its lines are JSON, not protocol lines).
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Takes line `n`: the parts between markers join the open block.
    pub fn line(&mut self, n: usize, line: &str) -> Result<(), SelfReportError> {
        let mut rest = line;
        if let Some(b) = self.open.as_mut() {
            // A JSON string cannot hold a line break: a quote left open is the JSON's error,
            // reported once the block ends, not a reason to miss its end.
            b.in_string = false;
            b.escaped = false;
        }
        loop {
            let Some(block) = self.open.as_mut() else {
                let Some(at) = find(rest, START) else {
                    return Ok(());
                };
                self.open = Some(Block {
                    line: n,
                    text: String::new(),
                    in_string: false,
                    escaped: false,
                });
                rest = &rest[at + START.len()..];
                continue;
            };
            match block.next_marker(rest) {
                Some((_, false)) => {
                    return Err(format!(
                        "line {n} of the output starts a crank block ({START}) inside the one \
                         started at line {} that has not ended ({END})",
                        block.line
                    )
                    .into())
                }
                Some((at, true)) => {
                    block.text.push_str(&rest[..at]);
                    rest = &rest[at + END.len()..];
                    self.done.extend(self.open.take());
                }
                None => {
                    block.text.push_str(rest);
                    block.text.push('\n');
                    return Ok(());
                }
            }
        }
    }

    /// The figures of every block, once the output has ended: a block still open is an error
    /// naming the line it started on.
    pub fn finish(self) -> Result<Vec<(usize, Reported)>, SelfReportError> {
        if let Some(b) = self.open {
            return Err(format!(
                "the crank block started ({START}) at line {} of the output never ends: \
                 no {END} follows",
                b.line
            )
            .into());
        }
        let mut run = Run::default();
        for b in &self.done {
            run.add(b)?;
        }
        run.figures()
    }
}

/// How crank combines several values of one measurement into one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    First,
    Last,
    Avg,
    Sum,
    Median,
    Max,
    Min,
    Count,
    All,
    Delta,
    /// `percentile50` … `percentile99`: crank's result functions of those names.
    Percentile(u8),
}

/// The operations as crank spells them, in the order of its `Operation` enum (a number in the
/// JSON is an index into this list).
const OPS: [(&str, Op); 10] = [
    ("first", Op::First),
    ("last", Op::Last),
    ("avg", Op::Avg),
    ("sum", Op::Sum),
    ("median", Op::Median),
    ("max", Op::Max),
    ("min", Op::Min),
    ("count", Op::Count),
    ("all", Op::All),
    ("delta", Op::Delta),
];

/// The percentiles crank defines result functions for.
const PERCENTILES: [u8; 5] = [50, 75, 90, 95, 99];

impl Op {
    /// Reads an `Aggregate` or `Reduce`: a name (any case) or the enum's number; absent or
    /// null is crank's default, `first`.
    fn parse(v: Option<&Value>) -> Result<Op, SelfReportError> {
        let names = || {
            let mut all: Vec<String> = OPS.iter().map(|(n, _)| n.to_string()).collect();
            all.extend(PERCENTILES.iter().map(|p| format!("percentile{p}")));
            all.join(", ")
        };
        match v {
            None | Some(Value::Null) => Ok(Op::First),
            Some(Value::String(s)) => {
                let lower = s.trim().to_ascii_lowercase();
                if let Some((_, op)) = OPS.iter().find(|(n, _)| *n == lower) {
                    return Ok(*op);
                }
                lower
                    .strip_prefix("percentile")
                    .and_then(|p| p.parse::<u8>().ok())
                    .filter(|p| PERCENTILES.contains(p))
                    .map(Op::Percentile)
                    .ok_or_else(|| {
                        format!(
                            "{} is not an operation crank defines ({})",
                            quote(s),
                            names()
                        )
                        .into()
                    })
            }
            Some(Value::Number(n)) => n
                .as_u64()
                .and_then(|i| OPS.get(i as usize))
                .map(|(_, op)| *op)
                .ok_or_else(|| {
                    format!("{n} is not an operation crank defines ({})", names()).into()
                }),
            Some(other) => Err(format!(
                "{} is not an operation crank defines ({})",
                kind(other),
                names()
            )
            .into()),
        }
    }

    /// Whether the operation does arithmetic on the values (so each must be a number).
    fn numeric(self) -> bool {
        !matches!(self, Op::First | Op::Last | Op::Count | Op::All)
    }
}

/// What the metadata says about one name.
#[derive(Debug)]
struct Meta {
    aggregate: Op,
    label: Option<String>,
}

/// One measurement's value: a number (JSON or a numeric string), or something else (described
/// for an error).
#[derive(Debug)]
enum Val {
    Num(f64),
    Other(String),
}

/// Every block of one run, merged.
#[derive(Debug, Default)]
struct Run {
    meta: HashMap<String, Meta>,
    /// Values by name in the order first seen, with the line of the block that first had it.
    values: IndexMap<String, (usize, Vec<Val>)>,
}

impl Run {
    /// Adds one block; an error names the line it started on.
    fn add(&mut self, b: &Block) -> Result<(), SelfReportError> {
        let at = |why: String| format!("the crank block at line {} of the output {why}", b.line);
        let root = match serde_json::from_str::<Value>(&strip_comments(&b.text)) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                return Err(at(format!("is not a JSON object but {}", kind(&other))).into())
            }
            Err(e) => {
                return Err(at(format!("is not valid JSON: {}", json_error(&e, b.line))).into())
            }
        };
        for (i, m) in list(&root, "Metadata")
            .map_err(|e| at(e.0))?
            .iter()
            .enumerate()
        {
            let (name, meta) = metadata(m).map_err(|e| at(format!("Metadata[{i}]: {e}")))?;
            self.meta.insert(name, meta);
        }
        for (i, m) in list(&root, "Measurements")
            .map_err(|e| at(e.0))?
            .iter()
            .enumerate()
        {
            let Some((name, val)) =
                measurement(m).map_err(|e| at(format!("Measurements[{i}]: {e}")))?
            else {
                continue;
            };
            self.values
                .entry(name)
                .or_insert_with(|| (b.line, Vec::new()))
                .1
                .push(val);
        }
        Ok(())
    }

    /// Each measured name's figure: its metadata's `Aggregate` over all its values, else its
    /// last number.
    fn figures(self) -> Result<Vec<(usize, Reported)>, SelfReportError> {
        let mut out = Vec::new();
        for (name, (line, values)) in &self.values {
            let meta = self.meta.get(name);
            let op = meta.map_or(Op::Last, |m| m.aggregate);
            let at = |why: String| {
                format!("the crank block at line {line} of the output: `{name}`: {why}")
            };
            let Some(value) = aggregate(op, values).map_err(|e| at(e.0))? else {
                continue;
            };
            valid_figure_name(name).map_err(|e| at(format!("cannot be a measurement id: {e}")))?;
            out.push((
                *line,
                Reported {
                    id: format!("cmd.{name}"),
                    value,
                    row: BTreeMap::new(),
                    declaration: Declaration {
                        label: meta.and_then(|m| m.label.clone()),
                        ..Default::default()
                    },
                },
            ));
        }
        Ok(out)
    }
}

/// `op` over `values`; `None` when it yields no number (`all`, or `first`/`last` of values
/// none of which is a number).
fn aggregate(op: Op, values: &[Val]) -> Result<Option<f64>, SelfReportError> {
    let nums: Vec<f64> = values
        .iter()
        .filter_map(|v| match v {
            Val::Num(x) => Some(*x),
            Val::Other(_) => None,
        })
        .collect();
    if op.numeric() {
        if let Some(Val::Other(what)) = values.iter().find(|v| matches!(v, Val::Other(_))) {
            return Err(format!(
                "its Aggregate `{}` needs numbers, but one value is {what}",
                op_name(op)
            )
            .into());
        }
    }
    let max = || nums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = || nums.iter().copied().fold(f64::INFINITY, f64::min);
    let v = match op {
        Op::All => return Ok(None),
        Op::Count => values.len() as f64,
        Op::First => return Ok(nums.first().copied()),
        Op::Last => return Ok(nums.last().copied()),
        _ if nums.is_empty() => return Ok(None),
        Op::Sum => nums.iter().sum(),
        Op::Avg => nums.iter().sum::<f64>() / nums.len() as f64,
        Op::Max => max(),
        Op::Min => min(),
        Op::Delta => max() - min(),
        Op::Median => percentile(&nums, 50),
        Op::Percentile(p) => percentile(&nums, p),
    };
    if v.is_finite() {
        Ok(Some(v))
    } else {
        Err(format!(
            "its Aggregate `{}` of {} values is not a finite number",
            op_name(op),
            nums.len()
        )
        .into())
    }
}

/// crank's percentile: the value at rank round(n·p/100) of the sorted values (at least the
/// first), so the median of an even count is the lower middle value, as crank reports it.
fn percentile(nums: &[f64], p: u8) -> f64 {
    let mut sorted = nums.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (sorted.len() as f64 * f64::from(p) / 100.0 + 0.5).floor() as usize;
    sorted[rank.saturating_sub(1).min(sorted.len() - 1)]
}

/// An operation's name as crank spells it.
fn op_name(op: Op) -> String {
    match op {
        Op::Percentile(p) => format!("percentile{p}"),
        other => OPS
            .iter()
            .find(|(_, o)| *o == other)
            .map_or_else(String::new, |(n, _)| n.to_string()),
    }
}

/// A field of a JSON object, its name matched ignoring case (crank's JSON reader does).
fn field<'a>(m: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    m.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// The array `name` of the block (absent or null: empty).
fn list<'a>(root: &'a Map<String, Value>, name: &str) -> Result<&'a [Value], SelfReportError> {
    match field(root, name) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(format!("has `{name}` {}, not an array", kind(other)).into()),
    }
}

/// A `Name` field.
fn name_of(m: &Map<String, Value>) -> Result<String, SelfReportError> {
    match field(m, "Name") {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        Some(Value::String(_)) => Err("`Name` is empty".into()),
        Some(other) => Err(format!("`Name` must be a string, not {}", kind(other)).into()),
        None => Err("no `Name`".into()),
    }
}

/// One metadata entry.
fn metadata(v: &Value) -> Result<(String, Meta), SelfReportError> {
    let Value::Object(m) = v else {
        return Err(format!("expected an object, found {}", kind(v)).into());
    };
    let name = name_of(m)?;
    let aggregate =
        Op::parse(field(m, "Aggregate")).map_err(|e| format!("`{name}`: Aggregate {e}"))?;
    Op::parse(field(m, "Reduce")).map_err(|e| format!("`{name}`: Reduce {e}"))?;
    let label = match field(m, "ShortDescription") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            check_label("ShortDescription", s.trim()).map_err(|e| format!("`{name}`: {e}"))?;
            Some(s.trim().to_string())
        }
        _ => None,
    };
    Ok((name, Meta { aggregate, label }))
}

/// One measurement: its name and value, or `None` for crank's delimiter.
fn measurement(v: &Value) -> Result<Option<(String, Val)>, SelfReportError> {
    let Value::Object(m) = v else {
        return Err(format!("expected an object, found {}", kind(v)).into());
    };
    let name = name_of(m)?;
    if name.eq_ignore_ascii_case(DELIMITER) {
        return Ok(None);
    }
    let val = match field(m, "Value") {
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|x| x.is_finite())
            .map_or_else(|| Val::Other(format!("the number {n}")), Val::Num),
        Some(Value::String(s)) => {
            number(s).map_or_else(|_| Val::Other(kind(&Value::String(s.clone()))), Val::Num)
        }
        Some(other) => Val::Other(kind(other)),
        None => Val::Other("missing".into()),
    };
    Ok(Some((name, val)))
}

/// A JSON error with its line counted in the whole output (the block's text starts on the
/// marker's line).
fn json_error(e: &serde_json::Error, first_line: usize) -> String {
    let text = e.to_string();
    if e.line() == 0 {
        return text;
    }
    let what = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(w, _)| w);
    format!(
        "{what} at line {}, column {}",
        first_line + e.line() - 1,
        e.column()
    )
}

/// `text` without `//` and `/* */` comments outside strings (crank's JSON reader skips them,
/// and crank's own samples write them); line breaks are kept so error lines stay true.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

impl Block {
    /// The first marker in `rest` outside JSON strings, as (where, whether it is the end),
    /// carrying the string state along (`"`, `\\` and `#` are ASCII, so bytes will do).
    fn next_marker(&mut self, rest: &str) -> Option<(usize, bool)> {
        let bytes = rest.as_bytes();
        for (i, &c) in bytes.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if c == b'\\' {
                    self.escaped = true;
                } else if c == b'"' {
                    self.in_string = false;
                }
            } else if c == b'"' {
                self.in_string = true;
            } else if c == b'#' {
                let at = |m: &str| {
                    bytes
                        .get(i..i + m.len())
                        .is_some_and(|w| w.eq_ignore_ascii_case(m.as_bytes()))
                };
                if at(END) {
                    return Some((i, true));
                }
                if at(START) {
                    return Some((i, false));
                }
            }
        }
        None
    }
}

/// Where `needle` (ASCII) starts in `hay`, ignoring ASCII case.
fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    hay.match_indices('#').map(|(i, _)| i).find(|&i| {
        h.get(i..i + n.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(n))
    })
}
