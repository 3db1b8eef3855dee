//! Runs each distinct build once (per variant when variants change it), records it with its
//! artifact's hash, says once per build what looks unoptimised, and refuses what would make one
//! variant run another variant's build.

use super::build::Built;
use super::executor::Executor;
use super::progress::Progress;
use super::same_artifact::{identical_artifacts, same_bytes, Produced, Verdict};
use crate::config::AppJob;
use crate::guards;
use crate::interrupt;
use crate::plan::PlannedRow;
use crate::result::{BuildRecord, RunResult, Warning};
use std::collections::BTreeMap;
use std::path::Path;

/// Builds keyed by `PlannedRow::build_key`; failures are kept as their message.
pub type Builds = BTreeMap<String, anyhow::Result<Built>>;

/// Successful builds kept across the runs of this process once [`keep_builds`] was called (a
/// bisection's steps run the same values or commits again and again), keyed like [`Builds`]:
/// a key built once is not built again, and its snapshot still gives every start its bytes.
static KEPT: std::sync::Mutex<Option<BTreeMap<String, Built>>> = std::sync::Mutex::new(None);

/// From now on, every local build that succeeds is kept and reused by later runs of this
/// process instead of being built again.
pub fn keep_builds() {
    *KEPT.lock().unwrap_or_else(|e| e.into_inner()) = Some(BTreeMap::new());
}

/// The kept build of `key`, if builds are kept and it was built.
fn kept(key: &str) -> Option<Built> {
    KEPT.lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()?
        .get(key)
        .cloned()
}

/// Builds `app` alone (a bisection's check that a point builds), unless a kept build of it
/// exists; the build is kept for the runs that follow when builds are kept.
pub fn build_once(app: &AppJob, log: &Path, snapshots: &Path) -> anyhow::Result<()> {
    let key = crate::plan::build_key(app);
    if app.host.is_none() && kept(&key).is_some() {
        return Ok(());
    }
    let built = super::build::build(app, log, snapshots)?;
    if app.host.is_none() && built.snapshot.is_some() {
        keep(&key, &built);
    }
    Ok(())
}

/// Keeps `built` for later runs, when builds are kept.
fn keep(key: &str, built: &Built) {
    if let Some(map) = KEPT.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        map.insert(key.to_string(), built.clone());
    }
}

/// One distinct build of the plan and every variant that runs it.
struct Distinct<'a> {
    key: &'a str,
    app: &'a AppJob,
    variants: Vec<String>,
    row: usize,
    /// The matrix values of the first row, when builds of this job differ by row.
    values: Option<String>,
}

impl Distinct<'_> {
    /// "`app`", "`app` (variant `a`)", "`app` (variants `a`, `b`)".
    fn who(&self) -> String {
        let names: Vec<String> = self.variants.iter().map(|v| format!("`{v}`")).collect();
        match names.len() {
            0 => match &self.values {
                Some(v) => format!("`{}` ({v})", self.app.name),
                None => format!("`{}`", self.app.name),
            },
            1 => format!("`{}` (variant {})", self.app.name, names[0]),
            _ => format!("`{}` (variants {})", self.app.name, names.join(", ")),
        }
    }

    /// A file-name-safe label, unique among `taken`.
    fn label(&self, taken: &mut Vec<String>) -> String {
        let tail = match self.variants.first() {
            Some(v) => v.clone(),
            None => self.row.to_string(),
        };
        let base: String = format!("{}-{tail}", self.app.name)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut label = base.clone();
        let mut n = 2;
        while taken.contains(&label) {
            label = format!("{base}-{n}");
            n += 1;
        }
        taken.push(label.clone());
        label
    }
}

fn distinct(rows: &[PlannedRow]) -> Vec<Distinct<'_>> {
    let mut out: Vec<Distinct> = Vec::new();
    for (i, p) in rows.iter().enumerate() {
        let d = match out.iter_mut().position(|d| d.key == p.build_key) {
            Some(at) => &mut out[at],
            None => {
                out.push(Distinct {
                    key: &p.build_key,
                    app: &p.plan.app,
                    variants: Vec::new(),
                    row: i,
                    values: None,
                });
                out.last_mut().expect("just pushed")
            }
        };
        if let Some(v) = &p.plan.variant {
            if !d.variants.contains(v) {
                d.variants.push(v.clone());
            }
        }
    }
    // A job built differently per matrix row: name the row's values.
    for i in 0..out.len() {
        let same_job = out.iter().filter(|o| o.app.name == out[i].app.name).count();
        let vars = &rows[out[i].row].plan.variables;
        if same_job > 1 && !vars.is_empty() {
            let values: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out[i].values = Some(values.join(" "));
        }
    }
    out
}

/// Refuses, before anything is built, a plan where two builds of one job write into the same
/// folder and no `artifact` says what they produce: the last build would be what every variant
/// runs, and rigor could not tell.
pub fn check_plan(rows: &[PlannedRow]) -> anyhow::Result<()> {
    let all = distinct(rows);
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            let same_place = a.app.name == b.app.name && a.app.dir == b.app.dir;
            let both_build = a.app.build.is_some() && b.app.build.is_some();
            let unnamed = a.app.artifact.is_none() || b.app.artifact.is_none();
            if same_place && both_build && unnamed {
                return Err(anyhow::anyhow!(
                    "{} and {} are built differently ({}) in the same folder {}, but [jobs.{}] \
                     has no `artifact`: rigor cannot make each run what its own build produced \
                     (the last build would serve both). Set `artifact = \"…\"` to the file or \
                     folder the command runs (rigor keeps a copy per build and checks it before \
                     every start), or give each variant its own `dir`",
                    a.who(),
                    b.who(),
                    difference(a.app, b.app),
                    a.app.dir.display(),
                    a.app.name
                ));
            }
        }
    }
    Ok(())
}

/// What makes two builds of one job differ: the command, or the env it runs with.
fn difference(a: &AppJob, b: &AppJob) -> String {
    if a.build != b.build {
        return "their `build` commands differ".into();
    }
    let value = |j: &AppJob, k: &str| {
        j.env
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let mut keys: Vec<&str> = a
        .env
        .iter()
        .chain(&b.env)
        .map(|(k, _)| k.as_str())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.retain(|k| value(a, k) != value(b, k));
    let keys: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    format!("the build runs with a different env {}", keys.join(", "))
}

/// Builds every distinct build of the planned rows with `executor`; logs and artifact copies go
/// in `run_dir`.
pub fn build_all(
    executor: &mut dyn Executor,
    rows: &[PlannedRow],
    run_dir: &Path,
    progress: &Progress,
    result: &mut RunResult,
) -> Builds {
    let mut builds = Builds::new();
    let mut labels = Vec::new();
    let mut produced: Vec<Produced> = Vec::new();
    for d in distinct(rows) {
        if interrupt::interrupted() {
            break;
        }
        let app = d.app;
        let who = d.who();
        for w in build_warnings(&who, app) {
            warn_once(w, progress, result);
        }
        let label = d.label(&mut labels);
        // Built by an earlier run of this process (a bisection's earlier step): its snapshot
        // holds the bytes, so it is not built again. Builds on other hosts are not kept.
        if let Some(b) = kept(d.key).filter(|_| app.host.is_none()) {
            progress.note(&format!(
                "note: {who}: built by an earlier step, not built again"
            ));
            result.builds.push(record(&d, &b));
            builds.insert(d.key.to_string(), Ok(b));
            continue;
        }
        progress.status(format!("building {who}"));
        let mut outcome = executor.build(
            app,
            &run_dir.join(format!("build-{label}.log")),
            &run_dir.join("artifacts").join(&label),
        );
        if let Ok(b) = &outcome {
            if let Some(n) = &b.note {
                progress.note(&format!("note: {who}: {n}"));
            }
            let refused = b.snapshot.as_ref().and_then(|s| {
                let me = Produced {
                    key: d.key.to_string(),
                    path: s.artifact.clone(),
                    hash: s.hash.clone(),
                    build: app.build.clone(),
                    job: app.name.clone(),
                    command: app.command.clone(),
                    who: who.clone(),
                    rewritten: b.rewritten,
                };
                let refused = compare_artifact(&me, &produced, &mut builds, progress, result);
                produced.push(me);
                refused
            });
            result.builds.push(record(&d, b));
            if let Some(e) = refused {
                outcome = Err(anyhow::anyhow!(e));
            }
        }
        match &outcome {
            Err(e) => progress.note(&format!("error: {e}")),
            Ok(b) if app.host.is_none() && b.snapshot.is_some() => keep(d.key, b),
            Ok(_) => {}
        }
        builds.insert(d.key.to_string(), outcome);
    }
    executor.builds_done(progress);
    builds
}

/// A run-level warning, said and recorded once however many builds raise it.
fn warn_once(w: Warning, progress: &Progress, result: &mut RunResult) {
    if !result.warnings.contains(&w) {
        progress.note(&format!("warning: {}", crate::report::warning_text(&w)));
        result.warnings.push(w);
    }
}

/// What this build's artifact means next to what earlier builds of the run produced: the
/// refusal when it must not run (an earlier build it shares bytes with is refused as well),
/// a note, or a warning about byte-identical artifacts.
fn compare_artifact(
    me: &Produced,
    produced: &[Produced],
    builds: &mut Builds,
    progress: &Progress,
    result: &mut RunResult,
) -> Option<String> {
    match same_bytes(me, produced) {
        Some(Verdict::Refuse(e, earlier)) => {
            if let Some(k) = earlier {
                builds.insert(k, Err(anyhow::anyhow!(e.clone())));
            }
            return Some(e);
        }
        Some(Verdict::Note(n)) => progress.note(&format!("note: {n}")),
        None => {}
    }
    if let Some(w) = identical_artifacts(me, produced) {
        warn_once(w, progress, result);
    }
    None
}

/// The result's record of one successful build.
fn record(d: &Distinct, b: &Built) -> BuildRecord {
    let app = d.app;
    BuildRecord {
        job: app.name.clone(),
        variant: d.variants.first().cloned(),
        command: app.build.clone(),
        dir: app.dir.display().to_string(),
        artifact: app.artifact.as_ref().map(|a| a.display().to_string()),
        build_time_ms: b.build_time_ms,
        size_kib: b.size_kib,
        log: b.log.as_ref().map(|l| l.display().to_string()),
        variants: d.variants.clone(),
        artifact_hash: b.hash.clone(),
        artifact_snapshot: b.snapshot.as_ref().map(|s| s.copy.display().to_string()),
        rewritten: (b.hash.is_some() && app.build.is_some()).then_some(b.rewritten),
        optimisation: optimisation(app),
    }
}

/// The build's environment as the build sees it: the job's env over rigor's own.
fn build_env_of(app: &AppJob) -> impl Fn(&str) -> Option<String> + '_ {
    |k: &str| {
        app.env
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(k).ok())
    }
}

/// `release: opt-level 3 (cargo's built-in `release` profile)` per cargo invocation of the build.
fn optimisation(app: &AppJob) -> Vec<String> {
    let Some(b) = &app.build else {
        return Vec::new();
    };
    guards::cargo_opt_levels(b, &app.dir, &build_env_of(app))
        .into_iter()
        .map(|c| {
            format!(
                "{}: opt-level {} ({})",
                c.profile,
                c.opt_level.as_deref().unwrap_or("unknown"),
                c.source
            )
        })
        .collect()
}

/// Debug and unoptimised signs of one build, named after the build's job and variants.
fn build_warnings(who: &str, app: &AppJob) -> Vec<Warning> {
    let mut out = guards::debug_build_warnings(
        who,
        app.build.as_deref(),
        app.artifact.as_ref().and_then(|p| p.to_str()),
        &app.command,
        app.configuration.as_deref(),
    );
    if let Some(b) = &app.build {
        out.extend(guards::unoptimised_warnings(
            who,
            b,
            &app.dir,
            &build_env_of(app),
        ));
    }
    out
}
