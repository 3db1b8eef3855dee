//! `extract` rules: figures read from output nobody can change, one regular expression per
//! figure. Each line is matched against each rule; a rule with `row` makes one figure per value
//! of that capture (a table's lines), a rule without makes one figure. Several matches of one
//! rule (and one row) keep the last: programs print progress before their final figure.

use crate::selfreport::SelfReportError;

use super::text::{number, quote};
use super::{check_row, Reported};
use crate::config::ExtractRule;
use indexmap::IndexMap;
use rigor_model::declarations::Declaration;
use std::collections::BTreeMap;

/// What each rule has matched so far.
pub struct Matches<'a> {
    rules: &'a [ExtractRule],
    /// Per rule: value and line by row (`None`: the rule has no `row`), in order first seen.
    found: Vec<IndexMap<Option<String>, (usize, f64)>>,
}

impl<'a> Matches<'a> {
    pub fn new(rules: &'a [ExtractRule]) -> Self {
        Matches {
            rules,
            found: rules.iter().map(|_| IndexMap::new()).collect(),
        }
    }

    /// Matches line `n` against every rule; a match whose value is not a number is an error
    /// naming the rule and quoting the line.
    pub fn line(&mut self, n: usize, line: &str) -> Result<(), SelfReportError> {
        for (rule, found) in self.rules.iter().zip(&mut self.found) {
            let Some(caps) = rule.regex.captures(line) else {
                continue;
            };
            let fail = |why: String| {
                format!(
                    "extract rule `{}` (cmd.{}) matched line {n} of the output, but {why}: {}",
                    rule.name,
                    rule.name,
                    quote(line)
                )
            };
            let text = caps
                .name("value")
                .ok_or_else(|| fail("its `value` capture took no part in the match".into()))?;
            let value = number(text.as_str()).map_err(|e| fail(format!("the value {e}")))?;
            let row = match &rule.row {
                None => None,
                Some(key) => {
                    let cell = caps.name(key).map(|m| m.as_str().trim()).ok_or_else(|| {
                        fail(format!("its `{key}` capture took no part in the match"))
                    })?;
                    let row = BTreeMap::from([(key.clone(), cell.to_string())]);
                    check_row(&row).map_err(|e| fail(format!("the row {e}")))?;
                    Some(cell.to_string())
                }
            };
            found.insert(row, (n, value));
        }
        Ok(())
    }

    /// The figures with the line each came from; a rule that matched no line is an error.
    pub fn finish(self) -> Result<Vec<(String, usize, Reported)>, SelfReportError> {
        let mut out = Vec::new();
        for (rule, found) in self.rules.iter().zip(self.found) {
            if found.is_empty() {
                return Err(format!(
                    "extract rule `{}` (cmd.{}) matched no line of the output",
                    rule.name, rule.name
                )
                .into());
            }
            let declaration = Declaration {
                unit: rule.unit.clone(),
                direction: Some(rule.direction),
                label: rule.label.clone(),
                threshold_pct: None,
            };
            for (cell, (line, value)) in found {
                let row = match (&rule.row, cell) {
                    (Some(key), Some(cell)) => BTreeMap::from([(key.clone(), cell)]),
                    _ => BTreeMap::new(),
                };
                out.push((
                    rule.name.clone(),
                    line,
                    Reported {
                        id: format!("cmd.{}", rule.name),
                        value,
                        row,
                        declaration: declaration.clone(),
                    },
                ));
            }
        }
        Ok(out)
    }
}
