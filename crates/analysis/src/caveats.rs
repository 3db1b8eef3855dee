//! What makes saved results less comparable than variants of one run: they were not
//! interleaved (and their machines may differ), or they were recorded incomplete or with
//! warnings. Said as warnings of the comparison, so every rendering carries them.

use super::saved::Saved;
use rigor_model::environment;
use rigor_model::result::{Warning, WarningKind};

/// Environment differences listed by name before the rest are only counted.
const SHOWN: usize = 12;

/// The honest caveat of comparing saved results, with the machine differences that make it
/// worse; `names` are the inputs' column names, in order.
pub fn not_interleaved(inputs: &[Saved], names: &[String]) -> Warning {
    let envs: Vec<&serde_json::Value> = inputs.iter().map(|(_, r)| &r.environment).collect();
    let diffs = environment::differences(&envs);
    let mut message = "these results were recorded separately, not interleaved: drift of the \
                       machine between the runs (heat, other load, updates) counts as part of \
                       each change"
        .to_string();
    if !diffs.is_empty() {
        let listed: Vec<String> = diffs
            .iter()
            .take(SHOWN)
            .map(|(k, values)| {
                let vs: Vec<String> = values
                    .iter()
                    .map(|v| v.clone().unwrap_or_else(|| "—".into()))
                    .collect();
                format!("{k} ({})", vs.join(" / "))
            })
            .collect();
        message.push_str(&format!(
            "; the environment differs ({} order): {}",
            names.join(" / "),
            listed.join(", ")
        ));
        if diffs.len() > SHOWN {
            message.push_str(&format!(" and {} more", diffs.len() - SHOWN));
        }
    }
    Warning::of(WarningKind::NotInterleaved, message)
}

/// For each input that is not `complete` or was recorded with warnings, one warning naming it
/// (by its column name in `names`) and the kinds it carries.
pub fn as_recorded(inputs: &[Saved], names: &[String]) -> Vec<Warning> {
    let mut out = Vec::new();
    for ((_, r), name) in inputs.iter().zip(names) {
        if r.status.says_unfinished() {
            out.push(Warning::of(
                WarningKind::IncompleteResult,
                format!("{name} is `{}`, not complete", r.status),
            ));
        }
        let mut kinds: Vec<&str> = r
            .warnings
            .iter()
            .chain(r.rows.iter().flat_map(|row| row.warnings.iter()))
            .chain(
                r.rows
                    .iter()
                    .flat_map(|row| row.iterations.iter().flat_map(|it| it.warnings.iter())),
            )
            .map(|w| w.kind.as_str())
            .collect();
        kinds.sort();
        kinds.dedup();
        if !kinds.is_empty() {
            out.push(Warning::of(
                WarningKind::ResultWarnings,
                format!("{name} was recorded with warnings: {}", kinds.join(", ")),
            ));
        }
    }
    out
}
