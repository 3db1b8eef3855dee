//! `rigor compare` of results that carry CPU profiles: each compared pair's merged stacks are
//! read back from the run folders the results name and diffed again, as `rigor run` diffs its
//! own variants, so two runs made apart (yesterday's and today's, two versions) say which
//! functions grew. The differential flame graphs go next to the report files asked for.

use crate::analysis::saved::Saved;
use crate::result::{Comparison, ProfileComparison, Row};
use rigor_profile::Folded;
use std::path::{Path, PathBuf};

/// The compared pairs whose two rows both have a readable profile, diffed; `svg_dir` (with
/// `stem`) is where their differential flame graphs are written, none when `None`. What could
/// not be read is said in `notes`.
pub fn rediff(
    inputs: &[Saved],
    names: &[String],
    comparisons: &[Comparison],
    svg_at: Option<(&Path, &str)>,
    notes: &mut Vec<String>,
) -> Vec<ProfileComparison> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for c in comparisons {
        let sides = (&c.scenario, &c.row, &c.baseline, &c.candidate);
        if seen.contains(&sides) {
            continue;
        }
        seen.push(sides);
        let (Some(base), Some(cand)) = (
            side(inputs, names, c, &c.baseline),
            side(inputs, names, c, &c.candidate),
        ) else {
            continue;
        };
        let (Some(bp), Some(cp)) = (&base.1.profile, &cand.1.profile) else {
            continue;
        };
        let (Some(b), Some(k)) = (
            folded(base.0, &bp.folded, notes),
            folded(cand.0, &cp.folded, notes),
        ) else {
            continue;
        };
        let detail: Vec<String> = c.row.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let title = format!("{} vs {} · {}", c.candidate, c.baseline, detail.join(" "));
        let svg =
            svg_at.map(|(dir, stem)| dir.join(format!("{stem}.profile{}.diff.svg", out.len() + 1)));
        out.push(crate::exec::cpu_profile_rows::pair(
            c,
            (&b, &k),
            &title,
            svg.as_deref(),
            notes,
        ));
    }
    out
}

/// The result file and row on one side of `c` (`name` a file's column name, or with one file
/// one of its variants).
fn side<'a>(
    inputs: &'a [Saved],
    names: &[String],
    c: &Comparison,
    name: &str,
) -> Option<(&'a Path, &'a Row)> {
    let mut row = c.row.clone();
    let (file, variant) = if inputs.len() == 1 {
        (0, Some(name.to_string()))
    } else {
        // Rows matched across files carry their scenario and variant beside the matrix.
        row.remove("scenario");
        (names.iter().position(|n| n == name)?, row.remove("variant"))
    };
    let (path, result) = &inputs[file];
    let found = result.rows.iter().find(|r| {
        r.key_in(&result.scenario).scenario == c.scenario
            && r.variables == row
            && r.variant == variant
    })?;
    Some((path.as_path(), found))
}

/// A row's merged stacks: at the path the result names, else relative to the result file's
/// folder (a run folder moved with its result).
fn folded(result_file: &Path, path: &str, notes: &mut Vec<String>) -> Option<Folded> {
    let named = PathBuf::from(path);
    let beside = result_file
        .parent()
        .map(|d| d.join(named.file_name().unwrap_or_default()));
    let found = std::iter::once(named.clone())
        .chain(beside)
        .find(|p| p.is_file());
    let Some(found) = found else {
        notes.push(format!(
            "the CPU profile {path} that {} names is gone: that pair is not diffed",
            result_file.display()
        ));
        return None;
    };
    match std::fs::read_to_string(&found)
        .map_err(|e| e.to_string())
        .and_then(|t| Folded::parse(&t).map_err(|e| e.to_string()))
    {
        Ok(f) => Some(f),
        Err(e) => {
            notes.push(format!("the CPU profile {}: {e}", found.display()));
            None
        }
    }
}
