//! Runs each distinct build once (per variant when variants change it) and records it.

use super::build::{self, Built};
use super::plan::PlannedRow;
use super::progress::Progress;
use crate::interrupt;
use crate::result::{BuildRecord, RunResult};
use std::collections::BTreeMap;
use std::path::Path;

/// Builds keyed by `PlannedRow::build_key`; failures are kept as their message.
pub type Builds = BTreeMap<String, Result<Built, String>>;

/// Builds every distinct build of the planned rows, logs beside the results.
pub fn build_all(
    rows: &[PlannedRow],
    run_dir: &Path,
    progress: &Progress,
    result: &mut RunResult,
) -> Builds {
    let mut builds = Builds::new();
    for (i, p) in rows.iter().enumerate() {
        if builds.contains_key(&p.build_key) || interrupt::interrupted() {
            continue;
        }
        let app = &p.plan.app;
        let name = match &p.plan.variant {
            Some(v) => format!("build-{}-{v}.log", app.name),
            None => format!("build-{}-{i}.log", app.name),
        };
        progress.status(format!("building `{}`", app.name));
        let outcome = build::build(app, &run_dir.join(name));
        match &outcome {
            Ok(b) => {
                if let Some(n) = &b.note {
                    progress.note(&format!("note: {n}"));
                }
                result.builds.push(BuildRecord {
                    job: app.name.clone(),
                    variant: p.plan.variant.clone(),
                    command: app.build.clone(),
                    dir: app.dir.display().to_string(),
                    artifact: app.artifact.as_ref().map(|a| a.display().to_string()),
                    build_time_ms: b.build_time_ms,
                    size_kib: b.size_kib,
                    log: b.log.as_ref().map(|l| l.display().to_string()),
                });
            }
            Err(e) => progress.note(&format!("error: {e}")),
        }
        builds.insert(p.build_key.clone(), outcome);
    }
    builds
}
