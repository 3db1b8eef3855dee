//! `rigor run`: plans every selected scenario, builds once per distinct build, runs every
//! iteration in a fresh process in a (for variants, interleaved) order, writes results as it
//! goes, then summarises, compares and reports.

mod app;
mod build;
mod environment;
mod iteration;
mod logtail;
mod output;
mod progress;
mod schedule;
mod target;

use crate::cmd_run::{parse_exclude, parse_threshold, parse_vars, RunArgs};
use crate::config::{Config, PlanRequest, RowPlan};
use crate::duration::parse_duration;
use crate::result::{BuildRecord, Iteration, Row, RunResult, Warning, SCHEMA};
use crate::{comparison, guards, interrupt, report, summarize};
use build::Built;
use iteration::{run_iteration, IterationContext};
use output::Outputs;
use progress::Progress;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Exit codes of DESIGN.md.
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_REGRESSION: i32 = 3;
pub const EXIT_STRICT: i32 = 4;

/// A planned row with where it sits in the result and how it was built.
struct PlannedRow {
    plan: RowPlan,
    scenario: String,
    build_key: String,
}

/// Runs `rigor run`; returns the process exit code.
pub fn execute(args: &RunArgs) -> anyhow::Result<i32> {
    interrupt::install();
    app::become_subreaper();
    let usage = |e: String| -> anyhow::Result<i32> {
        eprintln!("error: {e}");
        Ok(EXIT_USAGE)
    };
    let cli_vars = match parse_vars(&args.vars) {
        Ok(v) => v,
        Err(e) => return usage(e),
    };
    let exclude = match args.exclude.as_deref().map(parse_exclude).transpose() {
        Ok(v) => v,
        Err(e) => return usage(e),
    };
    let threshold = match parse_threshold(&args.threshold) {
        Ok(v) => v,
        Err(e) => return usage(e),
    };
    let sample_interval = match parse_duration(&args.sample_interval) {
        Ok(d) if !d.is_zero() => d,
        Ok(_) => return usage("--sample-interval must be more than 0".into()),
        Err(e) => return usage(format!("--sample-interval: {e}")),
    };
    for id in std::iter::once(&args.primary)
        .chain(args.measurements.iter().flatten())
        .chain(std::iter::once(&args.exclude_order))
    {
        if let Err(e) = crate::measurements::validate(id) {
            return usage(e);
        }
    }
    if args.iterations == Some(0) {
        return usage("-i/--iterations must be at least 1".into());
    }

    let config = match Config::load(&args.file) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(EXIT_FAILED);
        }
    };
    let scenarios = if args.scenarios.is_empty() {
        config.scenario_names()
    } else {
        args.scenarios.clone()
    };
    let request = PlanRequest {
        profile: args.profile.clone(),
        cli_vars,
        variants: args.variants.clone(),
    };
    let mut planned = Vec::new();
    let mut iterations_of = Vec::new();
    let mut variant_order: Vec<String> = Vec::new();
    for s in &scenarios {
        let plan = match config.plan(s, &request) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(EXIT_FAILED);
            }
        };
        for v in plan.variants.iter().flatten() {
            if !variant_order.contains(v) {
                variant_order.push(v.clone());
            }
        }
        let n = args.iterations.or(plan.iterations).unwrap_or(3);
        for row in plan.rows {
            let build_key = format!(
                "{}\u{0}{:?}\u{0}{:?}\u{0}{:?}",
                row.app.dir.display(),
                row.app.build,
                row.app.artifact,
                row.app.env
            );
            iterations_of.push(n);
            planned.push(PlannedRow {
                plan: row,
                scenario: s.clone(),
                build_key,
            });
        }
    }

    // Where logs and results go.
    let stamp = crate::clock::now_compact();
    let run_dir = args.out_dir.join(&stamp);
    if let Err(e) = std::fs::create_dir_all(&run_dir) {
        eprintln!("error: cannot create {}: {e}", run_dir.display());
        return Ok(EXIT_FAILED);
    }
    let run_dir = std::fs::canonicalize(&run_dir).unwrap_or(run_dir);
    let outputs = Outputs {
        json: args
            .json
            .clone()
            .unwrap_or_else(|| run_dir.join("result.json")),
        markdown: args.markdown.clone(),
        csv: args.csv.clone(),
        html: args.html.clone(),
    };

    // The machine's story and the run-level guards.
    let env = rigor_probe::environment();
    let cgroup_note =
        match rigor_probe::Cgroup::create(&format!("rigor-{}-check", std::process::id())) {
            Ok(c) => {
                let d = c.describe();
                let _ = c.remove();
                d
            }
            Err(why) => format!("unavailable: {why}"),
        };
    let apps: Vec<&crate::config::AppJob> = planned.iter().map(|p| &p.plan.app).collect();
    let mut run_warnings = guards::noisy_machine_before_run(&env);
    let mut seen_debug = std::collections::BTreeSet::new();
    for a in &apps {
        for w in guards::debug_build_warnings(
            &a.name,
            a.build.as_deref(),
            a.artifact.as_ref().and_then(|p| p.to_str()),
            &a.command,
            a.configuration.as_deref(),
        ) {
            if seen_debug.insert(w.message.clone()) {
                run_warnings.push(w);
            }
        }
    }
    let seed = args.seed.unwrap_or_else(rand::random);
    let mut result = RunResult {
        schema: SCHEMA.into(),
        rigor_version: env!("CARGO_PKG_VERSION").into(),
        scenario: scenarios.join(","),
        profile: args.profile.clone(),
        description: args.description.clone(),
        started_at: crate::clock::now_rfc3339(),
        finished_at: None,
        status: "running".into(),
        seed: (variant_order.len() > 1).then_some(seed),
        environment: environment::collect(&env, &apps, &cgroup_note),
        warnings: run_warnings,
        builds: Vec::new(),
        rows: planned
            .iter()
            .map(|p| Row {
                scenario: p.scenario.clone(),
                variables: p.plan.variables.clone(),
                variant: p.plan.variant.clone(),
                iterations: Vec::new(),
                summary: BTreeMap::new(),
                warnings: Vec::new(),
            })
            .collect(),
        comparisons: Vec::new(),
    };
    let total: usize = iterations_of.iter().sum();
    let progress = Progress::new(total as u64);
    for w in &result.warnings {
        progress.note(&format!("warning: {}", report::warning_text(w)));
    }

    // Build once per distinct build.
    let mut builds: BTreeMap<String, Result<Built, String>> = BTreeMap::new();
    for (i, p) in planned.iter().enumerate() {
        if builds.contains_key(&p.build_key) || interrupt::interrupted() {
            continue;
        }
        let name = match &p.plan.variant {
            Some(v) => format!("build-{}-{v}.log", p.plan.app.name),
            None => format!("build-{}-{i}.log", p.plan.app.name),
        };
        progress.status(format!("building `{}`", p.plan.app.name));
        let outcome = build::build(&p.plan.app, &run_dir.join(name));
        match &outcome {
            Ok(b) => {
                if let Some(n) = &b.note {
                    progress.note(&format!("note: {n}"));
                }
                result.builds.push(BuildRecord {
                    job: p.plan.app.name.clone(),
                    variant: p.plan.variant.clone(),
                    command: p.plan.app.build.clone(),
                    dir: p.plan.app.dir.display().to_string(),
                    artifact: p
                        .plan
                        .app
                        .artifact
                        .as_ref()
                        .map(|a| a.display().to_string()),
                    build_time_ms: b.build_time_ms,
                    size_kib: b.size_kib,
                    log: b.log.as_ref().map(|l| l.display().to_string()),
                });
            }
            Err(e) => progress.note(&format!("error: {e}")),
        }
        builds.insert(p.build_key.clone(), outcome);
    }
    let mut failed = false;
    for (i, p) in planned.iter().enumerate() {
        if let Some(Err(e)) = builds.get(&p.build_key) {
            failed = true;
            result.rows[i].iterations.push(failed_iteration(0, e));
        }
    }

    // Iterations, in schedule order.
    let keys: Vec<String> = planned
        .iter()
        .map(|p| format!("{}\u{0}{:?}", p.scenario, p.plan.variables))
        .collect();
    let groups = schedule::groups(&keys);
    let mut rng = schedule::rng(seed);
    let max_n = iterations_of.iter().copied().max().unwrap_or(0);
    let mut slots: Vec<schedule::Slot> = schedule::plan(&groups, 0, max_n, &mut rng)
        .into_iter()
        .filter(|s| s.iteration < iterations_of[s.row])
        .collect();
    let mut done_rounds = max_n;
    let rows_total = planned.len();
    let mut sequence = 0usize;
    loop {
        for slot in std::mem::take(&mut slots) {
            if interrupt::interrupted() {
                break;
            }
            let p = &planned[slot.row];
            let Some(Ok(built)) = builds.get(&p.build_key) else {
                continue;
            };
            let label = format!(
                "{} row {}/{}{}",
                p.scenario,
                slot.row + 1,
                rows_total,
                match result.rows[slot.row].label() {
                    l if l == p.scenario => String::new(),
                    l => format!(" ({l})"),
                }
            );
            let log = run_dir.join(format!(
                "row{}-iter{}.log",
                slot.row + 1,
                slot.iteration + 1
            ));
            let ctx = IterationContext {
                row: &p.plan,
                built,
                index: slot.iteration,
                sequence,
                log,
                sample_interval,
                progress: &progress,
                label: label.clone(),
            };
            let it = run_iteration(&ctx);
            sequence += 1;
            progress.advance();
            match &it.error {
                Some(e) => {
                    failed = true;
                    progress.note(&format!(
                        "error: {label} iteration {} failed: {e}",
                        slot.iteration + 1
                    ));
                }
                None => progress.note(&iteration_line(&label, &it)),
            }
            result.rows[slot.row].iterations.push(it);
            if let Err(e) = outputs.write(&result) {
                progress.note(&format!("error: {e}"));
            }
        }
        // --until-conclusive: more rounds while the primary measurement is inconclusive.
        let Some(max) = args.until_conclusive else {
            break;
        };
        if interrupt::interrupted() || done_rounds >= max || variant_order.len() < 2 {
            break;
        }
        let mut again = Vec::new();
        for g in &groups {
            let rows: Vec<Row> = g.iter().map(|i| result.rows[*i].clone()).collect();
            let cmp = comparison::compare_variants(
                &rows,
                &variant_order,
                std::slice::from_ref(&args.primary),
                threshold,
            );
            if cmp.iter().any(|c| c.verdict == "inconclusive") {
                again.push(g.clone());
            }
        }
        if again.is_empty() {
            break;
        }
        slots = schedule::plan(&again, done_rounds, done_rounds + 1, &mut rng);
        progress.grow(slots.len() as u64);
        done_rounds += 1;
    }
    progress.finish();

    // Summaries, comparisons, row warnings.
    for row in &mut result.rows {
        row.iterations.sort_by_key(|i| i.index);
        if let Some((low, high)) = exclude {
            if let Some(w) = summarize::apply_exclusions(row, low, high, &args.exclude_order) {
                row.warnings.push(w);
            }
        }
        summarize::summarize_row(row);
        if let Some(w) = guards::noisy_row(&args.primary, row.summary.get(&args.primary)) {
            row.warnings.push(w);
        }
    }
    if variant_order.len() > 1 {
        let ids = comparison::default_measurements(&result.rows);
        for g in &groups {
            let rows: Vec<Row> = g.iter().map(|i| result.rows[*i].clone()).collect();
            result.comparisons.extend(comparison::compare_variants(
                &rows,
                &variant_order,
                &ids,
                threshold,
            ));
        }
    }
    if variant_order.len() > 1 {
        let sizes: Vec<usize> = result
            .rows
            .iter()
            .map(|r| r.values(&args.primary).len())
            .collect();
        let smallest = sizes.iter().copied().min().unwrap_or(0);
        if !rigor_stats::can_ever_be_significant(smallest, smallest, comparison::CONFIDENCE) {
            let need = (2..100)
                .find(|n| rigor_stats::can_ever_be_significant(*n, *n, comparison::CONFIDENCE))
                .unwrap_or(5);
            result.warnings.push(Warning::new(
                "too_few_iterations",
                format!(
                    "{smallest} iteration(s) per variant can never show a significant difference at 95% confidence"
                ),
                format!("run at least {need} iterations per variant (-i {need}), or use --until-conclusive"),
            ));
        }
    }
    let interrupted = interrupt::interrupted();
    result.status = if interrupted {
        "interrupted"
    } else if failed {
        "failed"
    } else {
        "complete"
    }
    .into();
    result.finished_at = Some(crate::clock::now_rfc3339());
    if let Err(e) = outputs.write(&result) {
        eprintln!("error: {e}");
        failed = true;
    }
    let color =
        std::io::stdout().is_terminal() && std::env::var("NO_COLOR").map_or(true, |v| v.is_empty());
    print!("{}", report::terminal::render(&result, color));
    eprintln!(
        "results: {} (logs in {})",
        outputs.json.display(),
        run_dir.display()
    );
    if !result.comparisons.is_empty() {
        if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY") {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(PathBuf::from(summary))
            {
                let _ = writeln!(f, "{}", report::markdown::render(&result));
            }
        }
    }

    if interrupted {
        eprintln!(
            "rigor: interrupted; finished iterations are kept in {}",
            outputs.json.display()
        );
        return Ok(EXIT_FAILED);
    }
    if failed {
        return Ok(EXIT_FAILED);
    }
    if args.fail_on_regression {
        let ids = args
            .measurements
            .clone()
            .unwrap_or_else(|| vec![args.primary.clone()]);
        let regs = comparison::regressions(&result.comparisons, &ids);
        if !regs.is_empty() {
            for r in regs {
                eprintln!(
                    "regression: {} {} vs {}: {:+.1}%",
                    r.measurement,
                    r.candidate,
                    r.baseline,
                    r.change_pct.unwrap_or(f64::NAN)
                );
            }
            return Ok(EXIT_REGRESSION);
        }
    }
    if args.strict && has_warnings(&result) {
        eprintln!("rigor: --strict: warnings were raised (see above)");
        return Ok(EXIT_STRICT);
    }
    Ok(0)
}

fn has_warnings(r: &RunResult) -> bool {
    !r.warnings.is_empty()
        || r.rows.iter().any(|row| {
            !row.warnings.is_empty() || row.iterations.iter().any(|i| !i.warnings.is_empty())
        })
}

fn failed_iteration(index: usize, error: &str) -> Iteration {
    let mut it = Iteration::new(index, 0);
    it.error = Some(error.to_string());
    it
}

/// One line per finished iteration, so progress survives in a non-terminal log.
fn iteration_line(label: &str, it: &Iteration) -> String {
    let m = |id: &str| it.measurements.get(id).copied();
    let mut s = format!("{label} iteration {}:", it.index + 1);
    if let Some(v) = m("load.rps") {
        s.push_str(&format!(" {} rps", report::format::number(v)));
    }
    if let Some(v) = m("load.latency.p99") {
        s.push_str(&format!(", p99 {v:.2} ms"));
    }
    if let Some(v) = m("app.rss") {
        s.push_str(&format!(", rss {v:.1} MiB"));
    }
    if let Some(v) = m("app.cpu") {
        s.push_str(&format!(", cpu {v:.0}%"));
    }
    for w in &it.warnings {
        s.push_str(&format!("\n  warning: {}", report::warning_text(w)));
    }
    s
}
