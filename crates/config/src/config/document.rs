//! The file read in two steps: its TOML syntax into a document (a syntax error is the only
//! problem that stops the reading), then each entry of each section (every job, scenario,
//! profile, measurement declaration and variable) deserialized on its own. So every wrong type
//! and unknown key of the file is listed with its line, and the entries that are right still
//! reach the semantic checks.

use super::problems::Problems;
use super::raw::RawConfig;
use super::syntax;
use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::path::Path;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

/// The sections `rigor.toml` may hold at its top level.
const SECTIONS: &[&str] = &[
    "variables",
    "jobs",
    "scenarios",
    "profiles",
    "measurements",
    "hosts",
    "report",
    "limits",
];

/// The file's entries that deserialized, and every problem of the others; `Err` only for a
/// syntax error, after which nothing of the file can be trusted.
pub fn read(path: &Path, text: &str) -> Result<(RawConfig, Problems), Problems> {
    let doc = DeTable::parse(text).map_err(|e| Problems::from(syntax::describe(path, text, &e)))?;
    let mut raw = RawConfig::default();
    let mut p = Problems::default();
    let reader = Reader { path, text };
    for (key, value) in doc.into_inner() {
        match key.get_ref().as_ref() {
            "variables" => reader.section(value, &mut raw.variables, &mut p),
            "jobs" => reader.section(value, &mut raw.jobs, &mut p),
            "scenarios" => reader.section(value, &mut raw.scenarios, &mut p),
            "profiles" => reader.section(value, &mut raw.profiles, &mut p),
            "measurements" => reader.section(value, &mut raw.measurements, &mut p),
            "hosts" => reader.section(value, &mut raw.hosts, &mut p),
            "report" => {
                if let Some(report) = reader.entry(value, &mut p) {
                    raw.report = report;
                }
            }
            "limits" => reader.list(value, &mut raw.limits, &mut p),
            other => p.add(syntax::describe_at(
                path,
                text,
                &format!(
                    "unknown field `{other}`, expected one of {}",
                    SECTIONS
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Some(key.span()),
            )),
        }
    }
    Ok((raw, p))
}

struct Reader<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Reader<'_> {
    /// Every entry of a `[section]` table that deserializes; the others' problems are recorded.
    fn section<T: DeserializeOwned>(
        &self,
        value: Spanned<DeValue<'_>>,
        out: &mut IndexMap<String, T>,
        p: &mut Problems,
    ) {
        let span = value.span();
        match value.into_inner() {
            DeValue::Table(table) => {
                for (key, entry) in table {
                    if let Some(t) = self.entry(entry, p) {
                        out.insert(key.into_inner().into_owned(), t);
                    }
                }
            }
            // Not a table: the map's own error says what was expected.
            other => {
                let whole = ValueDeserializer::from(Spanned::new(span, other));
                if let Err(e) = IndexMap::<String, T>::deserialize(whole) {
                    p.add(syntax::describe(self.path, self.text, &e));
                }
            }
        }
    }

    /// Every entry of a `[[section]]` array of tables that deserializes; the others' problems
    /// are recorded.
    fn list<T: DeserializeOwned>(
        &self,
        value: Spanned<DeValue<'_>>,
        out: &mut Vec<T>,
        p: &mut Problems,
    ) {
        let span = value.span();
        match value.into_inner() {
            DeValue::Array(items) => out.extend(items.into_iter().filter_map(|v| self.entry(v, p))),
            other => {
                let whole = ValueDeserializer::from(Spanned::new(span, other));
                if let Err(e) = Vec::<T>::deserialize(whole) {
                    p.add(syntax::describe(self.path, self.text, &e));
                }
            }
        }
    }

    /// One entry, deserialized; each key that is wrong is recorded and left out, and the rest
    /// tried again, so one entry with several wrong keys lists all of them.
    fn entry<T: DeserializeOwned>(
        &self,
        mut value: Spanned<DeValue<'_>>,
        p: &mut Problems,
    ) -> Option<T> {
        loop {
            let e = match T::deserialize(ValueDeserializer::from(value.clone())) {
                Ok(t) => return Some(t),
                Err(e) => e,
            };
            p.add(syntax::describe(self.path, self.text, &e));
            let (Some(at), DeValue::Table(table)) = (e.span(), value.get_mut()) else {
                return None;
            };
            // The key the error is about: its name or its value holds the error's position.
            let wrong = table
                .iter()
                .find(|(k, v)| {
                    k.span().start <= at.start && at.start < v.span().end.max(k.span().end)
                })
                .map(|(k, _)| k.clone());
            match wrong {
                Some(k) => {
                    table.remove(&k);
                }
                None => return None,
            }
        }
    }
}
