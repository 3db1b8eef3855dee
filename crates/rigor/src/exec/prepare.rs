//! Before anything is built: the plan (refused when it cannot work), the run folder and the
//! result files proven writable, and the result's skeleton with the machine's story.

use super::output::Outputs;
use super::{environment, reaper};
use crate::console;
use crate::failure::Failure;
use crate::options::run::{refused, RunOptions};
use crate::plan::RunPlan;
use crate::result::{Row, RunResult, RunStatus, Warning, WarningKind, SCHEMA};
use crate::{guards, plan};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A run ready to build: its plan, where its files go, its seed and its result so far.
pub struct Prepared {
    pub plan: RunPlan,
    pub outputs: Outputs,
    pub run_dir: PathBuf,
    pub seed: u64,
    pub result: RunResult,
    /// How busy the machine was just before the run (steal and other processes: nothing of
    /// the run was running yet), in % of its CPU time: the first iterations' baseline.
    pub busy_before_pct: f64,
}

/// Plans the run and checks everything that can be checked before building; a plan that
/// cannot work is a usage failure and leaves nothing behind.
pub fn prepare(options: &RunOptions) -> Result<Prepared, Failure> {
    let mut plan = plan::prepare(&options.selection).map_err(|p| refused(&p))?;
    check_plan(&plan, options)?;
    // The flags' limits after the file's; a command's figure takes its declared unit.
    for text in &options.limits {
        let limit = crate::analysis::limits::parse_flag(text, &plan.declarations)
            .map_err(Failure::usage)?;
        plan.limits.push(limit);
    }
    crate::declarations::set_thresholds(&mut plan.declarations, &options.thresholds);
    // Variants with `ref` run from worktrees, made before anything reads their folders.
    crate::config::ensure_worktrees(plan.rows.iter().map(|r| &r.plan.app))
        .map_err(|e| Failure::from(anyhow::anyhow!(e)))?;
    let (outputs, run_dir) = outputs(options)?;
    let seed = options.seed.unwrap_or_else(rand::random);
    let (cgroup_note, housekeeping) = housekeeping();
    let env = rigor_probe::environment();
    let apps: Vec<&crate::config::AppJob> = plan.rows.iter().map(|p| &p.plan.app).collect();
    let environment = environment::collect(&env, &apps, &cgroup_note);
    // Debug-build warnings come per build, from the builds themselves.
    let busy_before_pct = guards::busy_now_pct();
    let mut warnings = guards::noisy_machine_before_run(&env, busy_before_pct);
    warnings.extend(housekeeping);
    let result = skeleton(&plan, options, seed, environment, warnings);
    Ok(Prepared {
        plan,
        outputs,
        run_dir,
        seed,
        result,
        busy_before_pct,
    })
}

/// `--cpu-profile-hz` for a run that profiles no row would be silently ignored.
fn check_cpu_profile_hz(plan: &RunPlan, options: &RunOptions) -> Result<(), Failure> {
    let cpu = &options.cpu_profile;
    if !cpu.hz_given || cpu.every_row.is_some() || plan.rows.iter().any(|r| r.cpu_profile.is_some())
    {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "--cpu-profile-hz {} needs --cpu-profile: no row of this run is profiled (no scenario \
         or profile of the config says `cpu_profile`); add --cpu-profile, or drop \
         --cpu-profile-hz",
        cpu.hz
    )))
}

/// What the plan cannot do, refused before anything is built.
fn check_plan(plan: &RunPlan, options: &RunOptions) -> Result<(), Failure> {
    let until_conclusive = options.until_conclusive.is_some();
    if let Some(e) = plan.exclusions_leave_nothing(options.exclude, until_conclusive) {
        return Err(Failure::usage(e));
    }
    check_gated(plan, options)?;
    check_key(plan, options)?;
    check_cpu_profile_hz(plan, options)?;
    // A cap below the planned rounds could add none: the flag would do nothing, silently.
    if let Some(max) = options.until_conclusive {
        let planned = plan.rows.iter().map(|r| r.iterations).max().unwrap_or(0);
        if max < planned {
            return Err(Failure::usage(format!(
                "--until-conclusive={max} is below the {planned} iterations per row this run \
                 plans (-i or `iterations`), so it could never add a round: give a MAX above \
                 {planned}, or fewer iterations"
            )));
        }
    }
    // Two builds whose outputs rigor could not tell apart.
    super::builds::check_plan(&plan.rows).map_err(Failure::usage)?;
    // Last: a plan right in every other way that can never conclude.
    if !options.allow_inconclusive {
        if let Some(w) = plan.never_enough(options.exclude, until_conclusive) {
            return Err(Failure::usage(format!(
                "{}: refused before building anything; {}, or pass --allow-inconclusive to \
                 run it anyway",
                w.message, w.advice
            )));
        }
    }
    Ok(())
}

/// `--fail-on-regression` on an id this run can never judge would pass whatever happened: an
/// id needs a direction, from the catalogue, a `[measurements]` table, an extract rule, or (for
/// `cmd.*`) a command job of the run that may declare it in its output.
fn check_gated(plan: &RunPlan, options: &RunOptions) -> Result<(), Failure> {
    use crate::config::Work;
    if !options.fail_on_regression {
        return Ok(());
    }
    let commands: Vec<&crate::config::CommandWork> = plan
        .rows
        .iter()
        .filter_map(|r| match &r.plan.work {
            Work::Command(c) => Some(c),
            Work::Load(_) => None,
        })
        .collect();
    for id in &options.gated {
        let judged = crate::measurements::info(id).is_some()
            || plan
                .declarations
                .get(id)
                .is_some_and(|d| d.direction.is_some())
            || commands.iter().any(|c| {
                c.extract
                    .iter()
                    .any(|e| id.strip_prefix("cmd.") == Some(e.name.as_str()))
            })
            || (!commands.is_empty() && id.starts_with("cmd."));
        if !judged {
            return Err(Failure::usage(format!(
                "unknown measurement `{id}` for --fail-on-regression: no job of this run \
                 reports it with a direction, so it could never be a regression; declare it \
                 in rigor.toml (`[measurements.\"{id}\"]` with `direction = \"higher\"` or \
                 \"lower\"), or watch another id"
            )));
        }
    }
    Ok(())
}

/// `--key` and `[report] key` name only ids this run can show: a catalogue id, a declared one
/// (`[measurements.ID]`), an extract rule's `cmd.NAME`, any `cmd.*` when a command job runs
/// (it may report figures of its own), or a runtime metric `app.metric.*`. A typo would
/// otherwise only read "not compared" after the whole run.
fn check_key(plan: &RunPlan, options: &RunOptions) -> Result<(), Failure> {
    use crate::config::Work;
    let commands: Vec<&crate::config::CommandWork> = plan
        .rows
        .iter()
        .filter_map(|r| match &r.plan.work {
            Work::Command(c) => Some(c),
            Work::Load(_) => None,
        })
        .collect();
    let rules: Vec<String> = commands
        .iter()
        .flat_map(|c| c.extract.iter().map(|e| format!("cmd.{}", e.name)))
        .collect();
    let known = |id: &str| {
        crate::measurements::info(id).is_some()
            || plan.declarations.contains_key(id)
            || rules.iter().any(|r| r == id)
            || (!commands.is_empty() && id.strip_prefix("cmd.").is_some_and(|n| !n.is_empty()))
            || id
                .strip_prefix("app.metric.")
                .is_some_and(|n| !n.is_empty())
    };
    let file = options.selection.file.display();
    let named = (options.view.key.iter().map(|id| (id, "--key".to_string())))
        .chain((plan.report_key.iter()).map(|id| (id, format!("[report] key in {file}"))));
    let mut problems = crate::config::Problems::default();
    for (id, whence) in named {
        if known(id) {
            continue;
        }
        let candidates = (crate::measurements::CATALOGUE.iter().map(|m| m.id))
            .chain(plan.declarations.keys().map(String::as_str))
            .chain(rules.iter().map(String::as_str));
        let cmd = if id.starts_with("cmd.") {
            " (no command job of this run reports figures of its own)"
        } else {
            ""
        };
        problems.add(format!(
            "{whence}: unknown measurement `{id}`{cmd}{}",
            crate::measurements::closest_note(id, candidates)
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(refused(&problems))
    }
}

/// The run folder (made now) and every result file's path, proven writable.
fn outputs(options: &RunOptions) -> Result<(Outputs, PathBuf), Failure> {
    let paths = &options.outputs;
    let stem = crate::clock::now_compact();
    // `rigor-results` made now gets its `.gitignore`; the run's folder inside it is its own.
    let made = crate::git::create_own_dir(&paths.out_dir, &paths.out_dir)
        .and_then(|()| super::run_folder::create(&paths.out_dir, &stem));
    let run_dir = made.map_err(|e| {
        Failure::usage(format!(
            "cannot create {}: {e}",
            paths.out_dir.join(&stem).display()
        ))
    })?;
    let run_dir = std::fs::canonicalize(&run_dir).unwrap_or(run_dir);
    let outputs = Outputs {
        json: paths
            .json
            .clone()
            .unwrap_or_else(|| run_dir.join("result.json")),
        markdown: paths.markdown.clone(),
        csv: paths.csv.clone(),
        html: paths.html.clone(),
        run_dir: run_dir.clone(),
        view: options.view.in_file(),
    };
    if let Err(e) = outputs.check() {
        let _ = std::fs::remove_dir(&run_dir);
        return Err(Failure::usage(e));
    }
    Ok((outputs, run_dir))
}

/// The result before the first build: the machine's story, run-level warnings, one empty row
/// per planned row.
pub fn skeleton(
    plan: &RunPlan,
    options: &RunOptions,
    seed: u64,
    environment: serde_json::Value,
    mut warnings: Vec<Warning>,
) -> RunResult {
    let until_conclusive = options.until_conclusive.is_some();
    warnings.extend(plan.never_enough(options.exclude, until_conclusive));
    RunResult {
        schema: SCHEMA.into(),
        rigor_version: env!("CARGO_PKG_VERSION").into(),
        scenario: plan.scenarios.join(","),
        profile: options.selection.profile.clone(),
        description: options.description.clone(),
        started_at: crate::clock::now_rfc3339(),
        finished_at: None,
        status: RunStatus::Running,
        seed: (plan.variant_order.len() > 1).then_some(seed),
        environment,
        warnings,
        builds: Vec::new(),
        rows: plan
            .rows
            .iter()
            .map(|p| Row {
                scenario: p.key.scenario.clone(),
                variables: p.key.variables.clone(),
                variant: p.key.variant.clone(),
                iterations: Vec::new(),
                summary: BTreeMap::new(),
                warnings: Vec::new(),
                build_error: None,
                profile: None,
            })
            .collect(),
        comparisons: Vec::new(),
        measurements: plan.declarations.clone(),
        sequential: None,
        noise_floor: Vec::new(),
        cross_check: None,
        limits: Vec::new(),
        profiles: Vec::new(),
    }
}

/// Before the first iteration: makes (and removes) one cgroup, so the result says where
/// iterations' cgroups go or why there are none; removes cgroups of rigor runs that died
/// beside it; kills processes a dead rigor left running. Returns the cgroup note and warnings.
fn housekeeping() -> (String, Vec<Warning>) {
    let mut warnings = Vec::new();
    let left = reaper::previous_leftovers();
    if !left.is_empty() {
        warnings.push(Warning::of(
            WarningKind::Leftovers,
            format!(
                "processes of an earlier rigor run that ended abnormally were still running \
                 (killed now): {}",
                left.join(", ")
            ),
        ));
    }
    let probe_name = format!("rigor-{}-check", std::process::id());
    let note = match rigor_probe::Cgroup::create(&probe_name) {
        Ok(c) => {
            let parents: Vec<PathBuf> = c
                .procs_path()
                .iter()
                .filter_map(|p| p.parent()?.parent().map(Path::to_path_buf))
                .collect();
            let d = c.describe().replace(&format!("/{probe_name}"), "");
            let _ = c.remove();
            let stale = reaper::stale_cgroups(&parents);
            if !stale.is_empty() {
                let names: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
                console::err(&format!(
                    "note: removed cgroups of rigor runs that ended abnormally: {}",
                    names.join(", ")
                ));
            }
            format!("{d} (a new cgroup per iteration)")
        }
        Err(why) => format!("unavailable: {why}"),
    };
    (note, warnings)
}
