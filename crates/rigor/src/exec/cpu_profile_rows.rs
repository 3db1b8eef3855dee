//! A finished run's CPU profiles: each row's folded stacks merged over its kept iterations
//! with its flame graph, and for each compared pair a differential flame graph and the
//! functions whose share of the samples changed most, all written in the run folder.

use crate::result::{
    FunctionShare, ProfileComparison, RowProfile, RunResult, Warning, WarningKind,
};
use rigor_profile::Folded;
use std::collections::BTreeMap;
use std::path::Path;

/// Fills `rows[].profile` and `profiles` from the iterations' folded files; files go in
/// `run_dir`. A run without profiles is left as it is.
pub fn conclude(result: &mut RunResult, run_dir: &Path) {
    let mut merged: BTreeMap<usize, Folded> = BTreeMap::new();
    let mut warnings = Vec::new();
    for (i, row) in result.rows.iter_mut().enumerate() {
        let mut all = Folded::default();
        let mut iterations = 0;
        for it in row.kept_iterations() {
            let Some(log) = &it.log else { continue };
            let path = super::cpu_profile::folded_path(Path::new(log));
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            match Folded::parse(&text) {
                Ok(f) => {
                    all.merge(&f);
                    iterations += 1;
                }
                Err(e) => warnings.push(format!("{}: {e}", path.display())),
            }
        }
        if iterations == 0 {
            continue;
        }
        let folded = run_dir.join(format!("row{}.folded", i + 1));
        if let Err(e) = std::fs::write(&folded, all.to_text()) {
            warnings.push(format!("{}: {e}", folded.display()));
            continue;
        }
        let title = format!("CPU profile · {}", row.key_in(&result.scenario).label());
        let flame_graph = match rigor_profile::flame_graph(&all, &title) {
            Ok(svg) => write(run_dir, &format!("row{}.svg", i + 1), &svg, &mut warnings),
            Err(_) => None,
        };
        row.profile = Some(RowProfile {
            samples: all.total(),
            iterations,
            folded: folded.display().to_string(),
            flame_graph,
        });
        merged.insert(i, all);
    }
    result.profiles = compare(result, &merged, run_dir, &mut warnings);
    for w in warnings {
        result.warnings.push(Warning::of(
            WarningKind::CpuProfile,
            format!("a CPU profile could not be kept: {w}"),
        ));
    }
}

/// One [`ProfileComparison`] per compared pair whose two rows have profiles.
fn compare(
    result: &RunResult,
    merged: &BTreeMap<usize, Folded>,
    run_dir: &Path,
    warnings: &mut Vec<String>,
) -> Vec<ProfileComparison> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for c in &result.comparisons {
        let sides = (&c.scenario, &c.row, &c.baseline, &c.candidate);
        if seen.contains(&sides) {
            continue;
        }
        seen.push(sides);
        let find = |variant: &str| {
            result.rows.iter().position(|r| {
                r.key_in(&result.scenario).scenario == c.scenario
                    && r.variables == c.row
                    && r.variant.as_deref() == Some(variant)
            })
        };
        let (Some(b), Some(k)) = (find(&c.baseline), find(&c.candidate)) else {
            continue;
        };
        let (Some(base), Some(cand)) = (merged.get(&b), merged.get(&k)) else {
            continue;
        };
        let title = format!(
            "{} vs {} · {}",
            c.candidate,
            c.baseline,
            result.rows[k].key_in(&result.scenario).label()
        );
        let svg = run_dir.join(format!("row{}-vs-row{}.diff.svg", k + 1, b + 1));
        out.push(pair(c, (base, cand), &title, Some(&svg), warnings));
    }
    out
}

/// The profiles of one compared pair (`c`'s scenario, row and sides): the functions whose share
/// changed most, and the differential flame graph written at `svg` when given.
pub fn pair(
    c: &crate::result::Comparison,
    (base, cand): (&Folded, &Folded),
    title: &str,
    svg: Option<&Path>,
    warnings: &mut Vec<String>,
) -> ProfileComparison {
    let diff_flame_graph = svg.and_then(|path| {
        let text = rigor_profile::diff_flame_graph(base, cand, title).ok()?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path.file_name()?.to_string_lossy();
        write(dir, &name, &text, warnings)
    });
    ProfileComparison {
        scenario: c.scenario.clone(),
        row: c.row.clone(),
        baseline: c.baseline.clone(),
        candidate: c.candidate.clone(),
        baseline_samples: base.total(),
        candidate_samples: cand.total(),
        diff_flame_graph,
        profile_diff: rigor_profile::profile_diff(base, cand)
            .into_iter()
            .map(|s| FunctionShare {
                function: s.function,
                baseline_pct: s.baseline_pct,
                candidate_pct: s.candidate_pct,
            })
            .collect(),
    }
}

/// Writes `name` in `dir`; its path, or a warning.
fn write(dir: &Path, name: &str, text: &str, warnings: &mut Vec<String>) -> Option<String> {
    let path = dir.join(name);
    match std::fs::write(&path, text) {
        Ok(()) => Some(path.display().to_string()),
        Err(e) => {
            warnings.push(format!("{}: {e}", path.display()));
            None
        }
    }
}
