//! Figures a command job reports about itself on stdout: rigor's `##rigor {json}` lines,
//! crank's `#StartJobStatistics … #EndJobStatistics` block, and `extract` rules for output
//! nobody can change.
//!
//! All three are read in one pass over the output. A figure reported twice for the same row
//! with different values, or declared two ways (one source says `higher`, another `lower`), is
//! an error naming both places: which one to believe is the user's call, not rigor's.

mod crank;
mod extract;
mod protocol;
#[cfg(test)]
mod tests;
mod text;

use crate::config::ExtractRule;
use indexmap::IndexMap;
use rigor_model::declarations::{Better, Declaration};
use std::collections::BTreeMap;
use std::fmt;

/// One figure read from a command's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Reported {
    /// The measurement id: `cmd.NAME`.
    pub id: String,
    pub value: f64,
    /// The row it belongs to beyond the one that ran the command (`clients = "30"`); empty
    /// for a figure of the run as a whole.
    pub row: BTreeMap<String, String>,
    /// What the output said about the figure (unit, direction, label); empty when it said
    /// nothing.
    pub declaration: Declaration,
}

/// Longest label, unit or row value a program may report: they are printed in table headers
/// and cells, so a runaway string is refused rather than shown.
const MAX_TEXT: usize = 200;

/// Most rows one run of a command may make: each becomes a row of the report, so a `row`
/// capture that matched a timestamp or a counter is refused rather than made into a
/// million-row report.
const MAX_ROWS: usize = 1000;

/// Reads every figure of `stdout`. A malformed protocol line or crank block, or a rule that
/// never matched, is an error naming the line or the rule.
pub fn read(stdout: &str, rules: &[ExtractRule]) -> Result<Vec<Reported>, SelfReportError> {
    let mut found: Vec<(Origin, Reported)> = Vec::new();
    let mut blocks = crank::Blocks::default();
    let mut matches = extract::Matches::new(rules);
    // A byte-order mark (some runtimes write one first) is not part of the first line.
    let stdout = stdout.strip_prefix('\u{feff}').unwrap_or(stdout);
    for (i, line) in stdout.lines().enumerate() {
        let n = i + 1;
        matches.line(n, line)?;
        if !blocks.is_open() && protocol::is_protocol(line) {
            found.push((Origin::Protocol(n), protocol::parse(n, line)?));
        } else {
            blocks.line(n, line)?;
        }
    }
    for (line, r) in blocks.finish()? {
        found.push((Origin::Crank(line), r));
    }
    for (rule, line, r) in matches.finish()? {
        found.push((Origin::Rule(rule, line), r));
    }
    merge(found)
}

/// Where a figure came from, for an error that names both places of a contradiction.
#[derive(Debug, Clone)]
enum Origin {
    Protocol(usize),
    Crank(usize),
    Rule(String, usize),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Protocol(n) => write!(f, "the {} line {n}", protocol::PREFIX),
            Origin::Crank(n) => write!(f, "the crank block at line {n}"),
            Origin::Rule(r, n) => write!(f, "extract rule `{r}` (line {n})"),
        }
    }
}

/// One figure per id and row, each carrying everything its sources declared about the id.
fn merge(found: Vec<(Origin, Reported)>) -> Result<Vec<Reported>, SelfReportError> {
    let mut declared: BTreeMap<String, Declared> = BTreeMap::new();
    let mut figures: IndexMap<(String, BTreeMap<String, String>), (Origin, Reported)> =
        IndexMap::new();
    for (origin, r) in found {
        declared
            .entry(r.id.clone())
            .or_default()
            .add(&r.id, &r.declaration, &origin)?;
        let key = (r.id.clone(), r.row.clone());
        match figures.get(&key) {
            Some((_, first)) if first.value == r.value => {}
            Some((at, first)) => {
                return Err(format!(
                    "{}{} is reported twice with different values: {} by {at} and {} by \
                     {origin}; report it once",
                    r.id,
                    row_text(&r.row),
                    first.value,
                    r.value
                )
                .into())
            }
            None => {
                figures.insert(key, (origin, r));
            }
        }
    }
    let rows: std::collections::BTreeSet<&BTreeMap<String, String>> = figures
        .keys()
        .map(|(_, row)| row)
        .filter(|row| !row.is_empty())
        .collect();
    let last = figures.iter().rev().find(|((_, row), _)| !row.is_empty());
    if let (true, Some((_, (at, r)))) = (rows.len() > MAX_ROWS, last) {
        return Err(format!(
            "the output makes {} rows of figures, more than {MAX_ROWS} (the last, {}{}, by \
             {at}): is the row the right capture or field?",
            rows.len(),
            r.id,
            row_text(&r.row)
        )
        .into());
    }
    Ok(figures
        .into_values()
        .map(|(_, mut r)| {
            r.declaration = declared[&r.id].declaration.clone();
            r
        })
        .collect())
}

/// An id's declaration gathered from every place that said something, with where each field
/// was first said.
#[derive(Default)]
struct Declared {
    declaration: Declaration,
    unit_at: Option<Origin>,
    direction_at: Option<Origin>,
    label_at: Option<Origin>,
}

impl Declared {
    /// Adds what `origin` declared; a field said two different ways is an error.
    fn add(&mut self, id: &str, d: &Declaration, origin: &Origin) -> Result<(), SelfReportError> {
        let mine = &mut self.declaration;
        let text = |s: &String| s.clone();
        settle(
            id,
            "unit",
            &d.unit,
            &mut mine.unit,
            &mut self.unit_at,
            origin,
            text,
        )?;
        settle(
            id,
            "label",
            &d.label,
            &mut mine.label,
            &mut self.label_at,
            origin,
            text,
        )?;
        let dir = |b: &Better| b.as_str().to_string();
        settle(
            id,
            "direction",
            &d.direction,
            &mut mine.direction,
            &mut self.direction_at,
            origin,
            dir,
        )
    }
}

/// Records `new` for one field unless it contradicts what an earlier place said.
fn settle<T: PartialEq + Clone>(
    id: &str,
    key: &str,
    new: &Option<T>,
    old: &mut Option<T>,
    at: &mut Option<Origin>,
    origin: &Origin,
    show: impl Fn(&T) -> String,
) -> Result<(), SelfReportError> {
    match (new, old.as_ref(), at.as_ref()) {
        (Some(new), Some(was), Some(first)) if was != new => Err(format!(
            "{id} is declared with {key} `{}` by {first} but `{}` by {origin}; \
             declare it one way",
            show(was),
            show(new)
        )
        .into()),
        (Some(new), None, _) => {
            *old = Some(new.clone());
            *at = Some(origin.clone());
            Ok(())
        }
        _ => Ok(()),
    }
}

/// ` (row clients=30)`, or nothing for a figure of the whole run.
fn row_text(row: &BTreeMap<String, String>) -> String {
    if row.is_empty() {
        return String::new();
    }
    let cells: Vec<String> = row.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(" (row {})", cells.join(", "))
}

/// A label, unit or direction a program reported: short enough for a table, no control
/// characters.
fn check_label(key: &str, text: &str) -> Result<(), SelfReportError> {
    let n = text.chars().count();
    if n > MAX_TEXT {
        return Err(format!("`{key}` is {n} characters long; at most {MAX_TEXT}").into());
    }
    if text.chars().any(char::is_control) {
        return Err(format!("`{key}` {} holds a control character", text::quote(text)).into());
    }
    Ok(())
}

/// A row a figure belongs to: names like variables (letters, digits, `_`, `-`, `.`), values
/// that can be shown in a table cell.
fn check_row(row: &BTreeMap<String, String>) -> Result<(), SelfReportError> {
    for (k, v) in row {
        if k.is_empty()
            || k.len() > 64
            || !k
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        {
            return Err(format!(
                "name {} is not a variable name (1 to 64 letters, digits, _ - .)",
                text::quote(k)
            )
            .into());
        }
        if v.trim().is_empty() {
            return Err(format!("`{k}` is empty").into());
        }
        check_label(k, v)?;
    }
    Ok(())
}

/// Why a command's reported figures were refused: the message names the output line and the
/// figure, as the run's failure shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelfReportError(pub String);

impl From<String> for SelfReportError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for SelfReportError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// The message alone, for the callers that still report errors as text.
impl From<SelfReportError> for String {
    fn from(e: SelfReportError) -> String {
        e.0
    }
}
