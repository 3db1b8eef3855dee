//! The real runner and finish, driven by the scripted executor: scheduling, `--until-conclusive`,
//! giving up on a row, exclusions, build errors and exit codes on in-memory values.

use super::mock::{failed_after_start, failed_to_start, measured, warned, MockExecutor};
use super::progress::Progress;
use super::runner::Runner;
use super::{builds, finish, prepare, schedule};
use crate::cli::{Cli, Command};
use crate::config::{AppJob, LoadJob, Ready, RowPlan, Work};
use crate::exit::Exit;
use crate::options::run::RunOptions;
use crate::plan::{PlannedRow, RunPlan};
use crate::result::{
    Comparison, Exclusion, Iteration, MachineDuring, RowKey, RunResult, WarningKind,
};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SEED: u64 = 7;

fn options(flags: &[&str]) -> RunOptions {
    let argv = ["rigor", "run", "--seed", "7"];
    let cli = Cli::try_parse_from(argv.iter().chain(flags)).expect("flags parse");
    let Command::Run(args) = cli.command else {
        unreachable!("a run command")
    };
    RunOptions::from_args(&args).expect("good flags")
}

fn app(build: Option<&str>) -> AppJob {
    AppJob {
        name: "app".into(),
        dir: PathBuf::from("/nonexistent/rigor-mock"),
        build: build.map(Into::into),
        artifact: None,
        command: "serve".into(),
        ready: Ready::Tcp("127.0.0.1:1".into()),
        ready_timeout: Duration::from_secs(1),
        stop_timeout: Duration::from_secs(1),
        build_timeout: Duration::from_secs(1),
        env: Vec::new(),
        versions: Vec::new(),
        configuration: None,
        cpus: None,
        priority_high: false,
        metrics: None,
        git_ref: None,
        host: None,
        container: None,
    }
}

fn load() -> LoadJob {
    LoadJob {
        spec: rigor_load::LoadSpec {
            url: "http://127.0.0.1:1/".into(),
            ..Default::default()
        },
        addr: ([127, 0, 0, 1], 1).into(),
        priority_high: false,
        validate: None,
        hosts: Vec::new(),
        tool: None,
        find_rate: None,
        in_container: false,
    }
}

/// One scenario `s`, one row per variant (none: one row), each variant built by its own
/// command `build <variant>`.
fn plan(variants: &[&str], iterations: usize) -> RunPlan {
    let names: Vec<Option<String>> = match variants {
        [] => vec![None],
        v => v.iter().map(|v| Some(v.to_string())).collect(),
    };
    let rows = names
        .iter()
        .map(|variant| {
            let build = variant.as_ref().map(|v| format!("build {v}"));
            let row = RowPlan {
                variables: Default::default(),
                variant: variant.clone(),
                app: app(build.as_deref()),
                work: Work::Load(Box::new(load())),
            };
            PlannedRow::new("s", row, iterations)
        })
        .collect();
    let order = variants.iter().map(|v| v.to_string()).collect();
    RunPlan::new(vec!["s".into()], rows, order, Default::default())
}

/// What a driven run left: the result, the exit code, how many times it was saved, and the
/// progress bar's position and length.
struct Driven {
    result: RunResult,
    exit: Exit,
    saves: usize,
    /// The looks recorded in the last result saved during the run (before it was concluded).
    saved_looks: Option<Vec<usize>>,
    progress: (u64, Option<u64>),
}

/// Builds, runs and finishes `plan` with `executor`, as `rigor run` does, without output files.
fn drive(plan: &RunPlan, options: &RunOptions, executor: &mut MockExecutor) -> Driven {
    drive_after(plan, options, executor, None)
}

/// [`drive`] on a machine that was `busy_before` % busy just before the run, when given.
fn drive_after(
    plan: &RunPlan,
    options: &RunOptions,
    executor: &mut MockExecutor,
    busy_before: Option<f64>,
) -> Driven {
    let progress = Progress::silent(plan.total_iterations() as u64);
    let seed = options.seed.unwrap_or(SEED);
    let mut result = prepare::skeleton(plan, options, seed, serde_json::json!({}), Vec::new());
    let run_dir = Path::new("/nonexistent/rigor-mock-run");
    let builds = builds::build_all(executor, &plan.rows, run_dir, &progress, &mut result);
    let mut saves = 0;
    let mut saved_looks = None;
    let mut runner = Runner::new(plan, options, &builds, &progress, run_dir);
    if let Some(busy) = busy_before {
        runner = runner.with_machine_before(busy);
    }
    let failed = runner.run(executor, &mut result, seed, &mut |saved| {
        saves += 1;
        saved_looks = saved.sequential.as_ref().map(|s| s.looks.clone());
    });
    finish::conclude(&mut result, options, plan, failed);
    let exit = finish::exit_code(&result, options, failed);
    Driven {
        result,
        exit,
        saves,
        saved_looks,
        progress: progress.position(),
    }
}

/// The run's comparison of `load.rps`, which every two-variant plan here has.
fn rps_comparison(result: &RunResult) -> &Comparison {
    result
        .comparisons
        .iter()
        .find(|c| c.measurement == "load.rps")
        .expect("a comparison of load.rps")
}

fn variant(key: &RowKey) -> &str {
    key.variant.as_deref().unwrap_or("")
}

/// A clear difference: `b` serves 20% fewer requests than `a`, with a little noise.
fn b_is_slower(key: &RowKey, index: usize) -> crate::result::Iteration {
    let base = if variant(key) == "b" { 800.0 } else { 1000.0 };
    measured(&[("load.rps", base + (index % 3) as f64)])
}

/// No difference to find: both variants draw from one wide spread.
fn same_wide_spread(_: &RowKey, index: usize) -> crate::result::Iteration {
    let spread = [800.0, 1200.0, 1000.0, 1400.0, 700.0, 1100.0];
    measured(&[("load.rps", spread[index % spread.len()])])
}

/// No difference to find, round by round either: b's value in a round is another round's.
fn b_wanders(key: &RowKey, index: usize) -> crate::result::Iteration {
    let shift = usize::from(variant(key) == "b") * 2;
    same_wide_spread(key, index + shift)
}

#[test]
fn variants_run_interleaved_in_the_seeded_order_of_the_schedule() {
    let plan = plan(&["a", "b"], 3);
    let mut exec = MockExecutor::new(b_is_slower);
    let d = drive(&plan, &options(&["-i", "3"]), &mut exec);
    // The order is exactly the seeded schedule's: one round per iteration index, each round
    // running both variants.
    let expected = schedule::plan(&plan.groups, 0, 3, &mut schedule::rng(SEED));
    let ran: Vec<(usize, usize)> = exec
        .ran
        .iter()
        .map(|r| (usize::from(variant(&r.key) == "b"), r.index))
        .collect();
    let planned: Vec<(usize, usize)> = expected.iter().map(|s| (s.row, s.iteration)).collect();
    assert_eq!(ran, planned);
    for (round, pair) in exec.ran.chunks(2).enumerate() {
        assert_eq!([pair[0].index, pair[1].index], [round, round]);
        assert_ne!(pair[0].key.variant, pair[1].key.variant);
    }
    let sequences: Vec<usize> = exec.ran.iter().map(|r| r.sequence).collect();
    assert_eq!(sequences, [0, 1, 2, 3, 4, 5]);
    // Each row keeps its iterations in index order, with the sequence they ran at.
    for (row, name) in d.result.rows.iter().zip(["a", "b"]) {
        let indices: Vec<usize> = row.iterations.iter().map(|i| i.index).collect();
        assert_eq!(indices, [0, 1, 2], "{name}");
        for it in &row.iterations {
            let ran = exec
                .ran
                .iter()
                .find(|r| variant(&r.key) == name && r.index == it.index)
                .expect("ran");
            assert_eq!(it.sequence, ran.sequence);
        }
    }
    assert_eq!(exec.built, ["build a", "build b"]);
    assert_eq!((d.saves, d.progress), (6, (6, Some(6))));
    assert_eq!(d.result.seed, Some(SEED));
    assert_eq!(d.result.status, "complete");
    // Three per side can never be significant: said once, and no verdict.
    let kinds: Vec<&str> = d.result.warnings.iter().map(|w| w.kind.as_str()).collect();
    assert_eq!(kinds, ["too_few_iterations"]);
    let rps = rps_comparison(&d.result);
    assert_eq!((rps.baseline.as_str(), rps.candidate.as_str()), ("a", "b"));
    assert_eq!(rps.verdict, "inconclusive");
    // The same seed replays the same order.
    let mut again = MockExecutor::new(b_is_slower);
    drive(&plan, &options(&["-i", "3"]), &mut again);
    assert_eq!(again.ran, exec.ran);
}

#[test]
fn until_conclusive_adds_rounds_until_a_verdict() {
    let plan = plan(&["a", "b"], 2);
    let mut exec = MockExecutor::new(b_is_slower);
    let d = drive(
        &plan,
        &options(&["-i", "2", "--until-conclusive", "20"]),
        &mut exec,
    );
    // Every look tests at its own nominal confidence (the looks at 2, 3, … rounds of at most
    // 20), not a fresh 95%: 4 per side (p = 2/70 unpaired) no longer settles it. Fully
    // separated rounds settle at the first look whose level the test in use (paired from the
    // pairs it needs, unpaired below) can reach at all.
    let reachable = |r: usize| {
        let looks: Vec<usize> = (2..=r).collect();
        let level = rigor_stats::look_confidence(&looks, 20, 0.95);
        rigor_stats::can_ever_be_significant_paired(r, level)
            || rigor_stats::can_ever_be_significant(r, r, level)
    };
    let stop = (2..=20).find(|&r| reachable(r)).unwrap();
    assert!(stop > 4, "{stop}");
    let looks: Vec<usize> = (2..=stop).collect();
    for row in &d.result.rows {
        assert_eq!(row.iterations.len(), stop, "{:?}", row.variant);
    }
    assert_eq!(exec.variant_order().len(), 2 * stop);
    let rounds: Vec<usize> = exec.ran.iter().map(|r| r.index).collect();
    let want: Vec<usize> = (0..stop).flat_map(|r| [r, r]).collect();
    assert_eq!(rounds, want);
    let slots = 2 * stop as u64;
    assert_eq!(d.progress, (slots, Some(slots)));
    assert_eq!(d.result.sequential.as_ref().unwrap().looks, looks);
    // Every saved result carries the looks so far: one cut short (a second Ctrl-C writes the
    // last saved one) re-analyses at the level its looks earned, not at a fresh 95%.
    assert_eq!(d.saved_looks, Some(looks));
    let rps = rps_comparison(&d.result);
    assert_eq!(rps.verdict, "regression");
    assert_eq!(d.exit, Exit::Success);
}

#[test]
fn until_conclusive_decides_on_the_iterations_exclude_keeps() {
    // With --exclude 1:1 the looks decide on the kept iterations (two fewer per row than the
    // rounds run); deciding on all iterations would stop two rounds early, inconclusive.
    let reachable = |r: usize| {
        let looks: Vec<usize> = (2..=r).collect();
        let level = rigor_stats::look_confidence(&looks, 20, 0.95);
        let kept = r - 2;
        rigor_stats::can_ever_be_significant_paired(kept, level)
            || rigor_stats::can_ever_be_significant(kept, kept, level)
    };
    let stop = (3..=20).find(|&r| reachable(r)).unwrap();
    let plan = plan(&["a", "b"], 2);
    let mut exec = MockExecutor::new(b_is_slower);
    let d = drive(
        &plan,
        &options(&["-i", "2", "--exclude", "1:1", "--until-conclusive", "20"]),
        &mut exec,
    );
    for row in &d.result.rows {
        assert_eq!(row.iterations.len(), stop, "{:?}", row.variant);
        assert_eq!(row.kept(), stop - 2, "{:?}", row.variant);
    }
    assert_eq!(exec.ran.len(), 2 * stop);
    assert_eq!(rps_comparison(&d.result).verdict, "regression");
}

#[test]
fn until_conclusive_stops_at_its_maximum() {
    let plan = plan(&["a", "b"], 2);
    // Rounds of one shared value would be paired as "no change": b wanders within each round.
    let mut exec = MockExecutor::new(b_wanders);
    let d = drive(
        &plan,
        &options(&["-i", "2", "--until-conclusive", "6"]),
        &mut exec,
    );
    for row in &d.result.rows {
        assert_eq!(row.iterations.len(), 6, "{:?}", row.variant);
    }
    assert_eq!(exec.ran.len(), 12);
    assert_eq!(exec.ran.last().map(|r| r.sequence), Some(11));
    assert_eq!(d.progress, (12, Some(12)));
    let rps = rps_comparison(&d.result);
    assert_eq!(rps.verdict, "inconclusive");
}

/// A change a little past the threshold, in noise that takes a few dozen rounds to settle.
fn b_a_little_slower(key: &RowKey, index: usize) -> crate::result::Iteration {
    let noise = [0.0, 30.0, -20.0, 25.0, -30.0, 10.0, -5.0];
    let (base, shift) = if variant(key) == "b" {
        (960.0, 3)
    } else {
        (1000.0, 0)
    };
    measured(&[("load.rps", base + noise[(index + shift) % noise.len()])])
}

#[test]
fn advice_past_the_until_conclusive_cap_says_the_cap_stood_in_the_way() {
    let plan = plan(&["a", "b"], 5);
    let mut exec = MockExecutor::new(b_a_little_slower);
    let d = drive(
        &plan,
        &options(&["-i", "5", "--until-conclusive", "6"]),
        &mut exec,
    );
    let rps = rps_comparison(&d.result);
    assert_eq!(rps.verdict, "inconclusive");
    assert_eq!(d.result.rows[0].iterations.len(), 6);
    let note = rps.note.as_deref().unwrap_or_default();
    assert!(
        note.contains("more than --until-conclusive=6 allows: raise it to"),
        "{note}"
    );
    assert!(!note.contains("-i "), "no -i past the cap: {note}");
}

#[test]
fn a_row_stops_after_its_first_failure_to_start() {
    let plan = plan(&[], 3);
    let mut exec = MockExecutor::new(|_, _| failed_to_start("exited before it was ready"));
    let d = drive(&plan, &options(&["-i", "3"]), &mut exec);
    assert_eq!(exec.ran.len(), 1);
    let row = &d.result.rows[0];
    assert_eq!(row.iterations.len(), 1);
    assert_eq!(
        row.iterations[0].error.as_deref(),
        Some("exited before it was ready")
    );
    let kinds: Vec<&str> = row.warnings.iter().map(|w| w.kind.as_str()).collect();
    assert_eq!(kinds, ["row_stopped"]);
    // The skipped iterations still count as done for the progress bar.
    assert_eq!(d.progress, (3, Some(3)));
    assert_eq!(d.result.status, "failed");
    assert_eq!(d.exit, Exit::Failed);
}

#[test]
fn keep_going_tries_every_iteration() {
    let plan = plan(&[], 3);
    let mut exec = MockExecutor::new(|_, _| failed_to_start("exited before it was ready"));
    let d = drive(&plan, &options(&["-i", "3", "--keep-going"]), &mut exec);
    assert_eq!(exec.ran.len(), 3);
    assert_eq!(d.result.rows[0].iterations.len(), 3);
    assert!(d.result.rows[0].warnings.is_empty());
    assert_eq!(d.exit, Exit::Failed);
}

#[test]
fn a_row_that_started_once_is_never_given_up() {
    let plan = plan(&[], 3);
    let mut exec = MockExecutor::new(|_, index| match index {
        0 => measured(&[("load.rps", 1000.0)]),
        _ => failed_to_start("port taken"),
    });
    let d = drive(&plan, &options(&["-i", "3"]), &mut exec);
    assert_eq!(exec.ran.len(), 3);
    let errors: Vec<Option<&str>> = d.result.rows[0]
        .iterations
        .iter()
        .map(|i| i.error.as_deref())
        .collect();
    assert_eq!(errors, [None, Some("port taken"), Some("port taken")]);
    assert!(d.result.rows[0].warnings.is_empty());
}

#[test]
fn exclude_drops_the_lowest_and_highest_by_the_order_measurement() {
    let plan = plan(&[], 5);
    let values = [50.0, 10.0, 30.0, 40.0, 20.0];
    let mut exec = MockExecutor::new(move |_, index| measured(&[("load.rps", values[index])]));
    let d = drive(&plan, &options(&["-i", "5", "--exclude", "1:1"]), &mut exec);
    let row = &d.result.rows[0];
    let excluded: Vec<bool> = row
        .iterations
        .iter()
        .map(|i| i.excluded.is_excluded())
        .collect();
    assert_eq!(excluded, [true, true, false, false, false]);
    let s = &row.summary["load.rps"];
    assert_eq!((s.n, s.median), (3, 30.0));
    assert_eq!(d.exit, Exit::Success);
}

#[test]
fn a_failed_build_is_the_rows_build_error_and_its_iterations_never_run() {
    let plan = plan(&["a", "b"], 2);
    let mut exec = MockExecutor::new(b_is_slower).failing_build("build b");
    let d = drive(&plan, &options(&["-i", "2"]), &mut exec);
    assert!(exec.ran.iter().all(|r| variant(&r.key) == "a"));
    assert_eq!(exec.ran.len(), 2);
    let [a, b] = &d.result.rows[..] else {
        panic!("two rows")
    };
    assert_eq!(a.build_error, None);
    assert_eq!(a.iterations.len(), 2);
    assert_eq!(
        b.build_error.as_deref(),
        Some("build of `app` failed: build b")
    );
    assert!(b.iterations.is_empty());
    assert_eq!(d.result.status, "failed");
    assert_eq!(d.exit, Exit::Failed);
}

#[test]
fn exit_codes_follow_failures_regressions_and_strict_warnings() {
    let steady = |_: &RowKey, _: usize| measured(&[("load.rps", 1000.0)]);
    // Nothing wrong, even under --strict.
    let d = drive(
        &plan(&[], 3),
        &options(&["-i", "3", "--strict"]),
        &mut MockExecutor::new(steady),
    );
    assert_eq!(
        (d.exit, d.result.status.as_str()),
        (Exit::Success, "complete")
    );
    // An iteration that failed after the start fails the run.
    let d = drive(
        &plan(&[], 3),
        &options(&["-i", "3"]),
        &mut MockExecutor::new(|_, index| match index {
            1 => failed_after_start("load failed: connection refused"),
            _ => measured(&[("load.rps", 1000.0)]),
        }),
    );
    assert_eq!((d.exit, d.result.status.as_str()), (Exit::Failed, "failed"));
    // A regression of the gated measurement, only with --fail-on-regression.
    let slower = plan(&["a", "b"], 6);
    let d = drive(
        &slower,
        &options(&["-i", "6"]),
        &mut MockExecutor::new(b_is_slower),
    );
    assert_eq!(d.exit, Exit::Success);
    let d = drive(
        &slower,
        &options(&["-i", "6", "--fail-on-regression"]),
        &mut MockExecutor::new(b_is_slower),
    );
    assert_eq!(d.exit, Exit::Regression);
    let verdicts: Vec<(&str, &str)> = d
        .result
        .comparisons
        .iter()
        .map(|c| (c.measurement.as_str(), c.verdict.as_str()))
        .collect();
    // The start time is the same on both sides (100 ms each time): no change.
    assert_eq!(
        verdicts,
        [("app.start_time", "no change"), ("load.rps", "regression")]
    );
    // Gating another measurement than the one that regressed passes.
    let d = drive(
        &slower,
        &options(&[
            "-i",
            "6",
            "--fail-on-regression",
            "--measurements",
            "app.rss",
        ]),
        &mut MockExecutor::new(b_is_slower),
    );
    assert_eq!(d.exit, Exit::Success);
    // A warning fails the run under --strict only.
    let warns = |_: &RowKey, index: usize| {
        let it = measured(&[("load.rps", 1000.0)]);
        if index == 2 {
            warned(it, "ignored_sigterm")
        } else {
            it
        }
    };
    let d = drive(
        &plan(&[], 3),
        &options(&["-i", "3"]),
        &mut MockExecutor::new(warns),
    );
    assert_eq!(d.exit, Exit::Success);
    let d = drive(
        &plan(&[], 3),
        &options(&["-i", "3", "--strict"]),
        &mut MockExecutor::new(warns),
    );
    assert_eq!(
        (d.exit, d.result.status.as_str()),
        (Exit::Strict, "complete")
    );
}

/// `it` with the machine's interference at `pct` (1% of it from other processes, the rest steal).
fn interfered(mut it: Iteration, pct: f64) -> Iteration {
    it.machine = Some(MachineDuring {
        steal_pct: pct - 1.0,
        busy_pct: 50.0,
        foreign_pct: Some(1.0),
        interference_pct: Some(pct),
        app_wait_per_cpu: None,
        client_wait_per_cpu: None,
        ..Default::default()
    });
    it
}

/// A script whose `n`th call (from 0, re-runs included) measured the interference `pcts[n]`
/// (2% past their end) and an RPS that tells the calls apart (1000 + n).
fn by_call(pcts: &'static [f64]) -> impl FnMut(&RowKey, usize) -> Iteration {
    let mut calls = 0;
    move |_, _| {
        let n = calls;
        calls += 1;
        let pct = pcts.get(n).copied().unwrap_or(2.0);
        interfered(measured(&[("load.rps", 1000.0 + n as f64)]), pct)
    }
}

fn log_name(r: &super::mock::Ran) -> String {
    r.log.file_name().unwrap().to_string_lossy().into_owned()
}

fn contaminated_messages(row: &crate::result::Row) -> Vec<(usize, String)> {
    row.iterations
        .iter()
        .flat_map(|it| {
            it.warnings
                .iter()
                .filter(|w| w.kind == WarningKind::Contaminated)
                .map(|w| (it.number(), w.message.clone()))
        })
        .collect()
}

#[test]
fn a_contaminated_iteration_is_excluded_and_re_run_in_its_slot() {
    let plan = plan(&[], 5);
    // The third call (iteration 3) had 20.4% steal + 1% other processes.
    let mut exec = MockExecutor::new(by_call(&[2.0, 2.0, 21.4]));
    let d = drive(&plan, &options(&["-i", "5"]), &mut exec);
    let indices: Vec<usize> = exec.ran.iter().map(|r| r.index).collect();
    assert_eq!(indices, [0, 1, 2, 2, 3, 4]);
    let logs: Vec<String> = exec.ran.iter().map(log_name).collect();
    assert_eq!(logs[2..4], ["row1-iter3.log", "row1-iter3-rerun1.log"]);
    let row = &d.result.rows[0];
    let slots: Vec<(usize, usize, Exclusion)> = row
        .iterations
        .iter()
        .map(|i| (i.index, i.sequence, i.excluded.clone()))
        .collect();
    assert_eq!(
        slots,
        [
            (0, 0, Exclusion::Kept),
            (1, 1, Exclusion::Kept),
            (2, 2, Exclusion::Interference),
            (2, 3, Exclusion::Kept),
            (3, 4, Exclusion::Kept),
            (4, 5, Exclusion::Kept),
        ]
    );
    assert_eq!(
        contaminated_messages(row),
        [(
            3,
            "interference 21.4% (steal 20.4% + other processes 1.0%) vs the run's 2.0%: \
             excluded and re-run"
                .to_string()
        )]
    );
    // The summary stands on the five kept iterations: the contaminated call (1002) is out.
    let s = &row.summary["load.rps"];
    assert_eq!((s.n, s.min, s.max), (5, 1000.0, 1005.0));
    assert!(!row.values("load.rps").contains(&1002.0));
    // Saved after every iteration, the excluded one included.
    assert_eq!((d.saves, d.progress), (6, (6, Some(6))));
    // The JSON keeps the excluded iteration with its reason.
    let json = serde_json::to_value(&d.result).unwrap();
    let excluded: Vec<&serde_json::Value> = json["rows"][0]["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["excluded"])
        .collect();
    assert_eq!(excluded[2], "interference");
    assert_eq!(excluded[3], false);
    // The report says it, once for the run.
    let doc = crate::report::run_document(&d.result);
    assert!(
        doc.texts()
            .iter()
            .any(|t| t.starts_with("replaced: 1 iteration (s: 1)")),
        "{:?}",
        doc.texts()
    );
    assert_eq!(d.exit, Exit::Success);
}

#[test]
fn a_re_run_keeps_the_variants_rounds_paired() {
    let plan = plan(&["a", "b"], 4);
    // Call 5 is the second of round 2: its re-run comes right after it, before round 3.
    let mut exec = MockExecutor::new(by_call(&[2.0, 2.0, 2.0, 2.0, 2.0, 30.0]));
    let d = drive(&plan, &options(&["-i", "4"]), &mut exec);
    let rounds: Vec<usize> = exec.ran.iter().map(|r| r.index).collect();
    assert_eq!(rounds, [0, 0, 1, 1, 2, 2, 2, 3, 3]);
    assert_eq!(exec.ran[5].key, exec.ran[6].key);
    for row in &d.result.rows {
        let kept: Vec<usize> = row.kept_iterations().map(|i| i.index).collect();
        assert_eq!(kept, [0, 1, 2, 3], "{:?}", row.variant);
    }
}

#[test]
fn re_runs_stop_when_the_budget_is_spent_and_a_replacement_can_be_contaminated_again() {
    let plan = plan(&[], 4);
    // Budget: ceil(4 / 2) = 2 re-runs. Iteration 4 and both its replacements are contaminated.
    let mut exec = MockExecutor::new(by_call(&[2.0, 2.0, 2.0, 30.0, 31.0, 32.0]));
    let d = drive(&plan, &options(&["-i", "4"]), &mut exec);
    let logs: Vec<String> = exec.ran.iter().map(log_name).collect();
    assert_eq!(
        logs[3..],
        [
            "row1-iter4.log",
            "row1-iter4-rerun1.log",
            "row1-iter4-rerun2.log"
        ]
    );
    let row = &d.result.rows[0];
    let last: Vec<(usize, Exclusion)> = row.iterations[3..]
        .iter()
        .map(|i| (i.index, i.excluded.clone()))
        .collect();
    assert_eq!(
        last,
        [
            (3, Exclusion::Interference),
            (3, Exclusion::Interference),
            (3, Exclusion::Kept)
        ]
    );
    let messages: Vec<String> = contaminated_messages(row)
        .into_iter()
        .map(|(_, m)| m)
        .collect();
    assert_eq!(
        messages[2],
        "interference 32.0% (steal 31.0% + other processes 1.0%) vs the run's 2.0%: kept: the \
         run's re-run budget (2) is spent"
    );
    assert!(messages[..2]
        .iter()
        .all(|m| m.ends_with("excluded and re-run")));
    assert_eq!(row.kept(), 4);
    assert_eq!(d.progress, (6, Some(6)));
    let doc = crate::report::run_document(&d.result);
    let line = doc
        .texts()
        .into_iter()
        .find(|t| t.starts_with("replaced: "))
        .expect("a replaced line");
    assert!(
        line.contains("replaced: 2 iterations (s: 2)")
            && line.contains(
                "kept despite interference far above the run's baseline: 1 iteration (s: 1)"
            ),
        "{line}"
    );
}

#[test]
fn keep_noisy_only_warns() {
    let plan = plan(&[], 4);
    let mut exec = MockExecutor::new(by_call(&[2.0, 2.0, 2.0, 30.0]));
    let d = drive(&plan, &options(&["-i", "4", "--keep-noisy"]), &mut exec);
    assert_eq!(exec.ran.len(), 4);
    let row = &d.result.rows[0];
    assert!(row.iterations.iter().all(|i| !i.excluded.is_excluded()));
    assert_eq!(
        contaminated_messages(row),
        [(
            4,
            "interference 30.0% (steal 29.0% + other processes 1.0%) vs the run's 2.0%: kept \
             (--keep-noisy)"
                .to_string()
        )]
    );
    assert_eq!(row.summary["load.rps"].n, 4);
}

#[test]
fn the_baseline_is_the_runs_own_across_rows_and_early_iterations_need_15_percent() {
    // A machine that always has about 20% steal: only the first iteration, judged before
    // there was any baseline, is re-run; after that 20% is this run's normal.
    let variants = plan(&["a", "b"], 3);
    let mut exec = MockExecutor::new(by_call(&[20.0, 20.5, 19.5, 21.0, 20.0, 20.0, 22.0]));
    let d = drive(&variants, &options(&["-i", "3"]), &mut exec);
    assert_eq!(exec.ran.len(), 7);
    // Three kept per side can never be significant, and the replaced iteration is not one
    // --exclude left out.
    let too_few = &d.result.warnings[0];
    assert_eq!(too_few.kind, WarningKind::TooFewIterations);
    assert!(
        too_few.message.starts_with("3 iteration(s) per variant"),
        "{}",
        too_few.message
    );
    let first =
        contaminated_messages(&d.result.rows[usize::from(variant(&exec.ran[0].key) == "b")]);
    assert_eq!(
        first,
        [(
            1,
            "interference 20.0% (steal 19.0% + other processes 1.0%) above 15% before the run \
             had a baseline: excluded and re-run"
                .to_string()
        )]
    );
    // A machine already that busy before the run: its first iteration is the run's normal.
    let mut busy = MockExecutor::new(by_call(&[20.0, 21.0, 19.0]));
    let d = drive_after(&plan(&[], 3), &options(&["-i", "3"]), &mut busy, Some(19.5));
    assert_eq!(busy.ran.len(), 3);
    assert!(contaminated_messages(&d.result.rows[0]).is_empty());
    // Quiet before the run, 20% in the first iteration: still contaminated.
    let mut noisy = MockExecutor::new(by_call(&[20.0]));
    let d = drive_after(&plan(&[], 3), &options(&["-i", "3"]), &mut noisy, Some(1.0));
    assert_eq!(noisy.ran.len(), 4);
    let messages = contaminated_messages(&d.result.rows[0]);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].1.contains("vs the run's 1.0%"), "{messages:?}");
    // 12% early on is not enough, and neither is any figure without a baseline's spread yet.
    let mut quiet = MockExecutor::new(by_call(&[12.0, 2.0, 2.0]));
    let d = drive(&plan(&[], 3), &options(&["-i", "3"]), &mut quiet);
    assert_eq!(quiet.ran.len(), 3);
    assert!(contaminated_messages(&d.result.rows[0]).is_empty());
    // An iteration without a machine figure is never judged, nor counted in the baseline.
    let mut calls = 0;
    let mut blind = MockExecutor::new(move |_, _| {
        calls += 1;
        let it = measured(&[("load.rps", 1000.0)]);
        match calls {
            1..=3 => it,
            _ => interfered(it, 40.0),
        }
    });
    let d = drive(&plan(&[], 5), &options(&["-i", "5"]), &mut blind);
    // The 4th is the first with a figure (40%, above 15%: re-run); the re-run's 40% then has
    // a baseline of one figure (40%), so it and the 5th are this run's normal.
    assert_eq!(blind.ran.len(), 6);
    let excluded: Vec<bool> = d.result.rows[0]
        .iterations
        .iter()
        .map(|i| i.excluded.is_excluded())
        .collect();
    assert_eq!(excluded, [false, false, false, true, false, false]);
}
