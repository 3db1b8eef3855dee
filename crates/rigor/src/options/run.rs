//! `rigor run`: the flags checked and turned into values the run can use. Every bad flag is
//! found in one pass, each problem naming its flag; the config's own problems are listed with
//! them, so one run of rigor says everything that stops it.

use crate::cli::run::RunArgs;
use crate::config::{Problems, MAX_ITERATIONS};
use crate::duration::parse_duration;
use crate::failure::Failure;
use crate::measurements::ids::LOAD_RPS;
use std::path::PathBuf;
use std::time::Duration;

/// What the plan is made of: the config file and the rows, variables and variants selected
/// from it. Kept apart from the other options so the config can be planned (and its problems
/// listed) even when other flags are bad.
#[derive(Debug, Clone)]
pub struct Selection {
    pub file: PathBuf,
    /// Scenarios to run; empty means every scenario, in declared order.
    pub scenarios: Vec<String>,
    pub profile: String,
    /// Iterations per row; `None` leaves it to the scenario (else 3).
    pub iterations: Option<usize>,
    /// `--var NAME=VALUE` overrides, highest precedence.
    pub vars: Vec<(String, String)>,
    /// Variants to compare, baseline first; `None` means every declared variant.
    pub variants: Option<Vec<String>>,
    /// `(name, rev)`: replaces the selected scenarios' variants with one per commit, built
    /// from a worktree of it (how `rigor bisect` runs commits); empty leaves the config as is.
    pub refs: Vec<(String, String)>,
    /// `(variable, [(name, value)])`: replaces the selected scenarios' variants with one per
    /// value of the variable (how `rigor bisect --var` runs values); `None` leaves them.
    pub values: Option<(String, Vec<(String, String)>)>,
    /// `--cross-check TOOL`: each row run by the engine and by the tool, as two variants.
    pub cross_check: Option<crate::tools::ToolSpec>,
}

/// Where the result files go. The paths are only checked for writability once the plan is
/// known to be good, so a refused run writes nothing.
#[derive(Debug, Clone, Default)]
pub struct OutputPaths {
    /// Logs, and every result file without a path of its own, go in a folder under this one.
    pub out_dir: PathBuf,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub html: Option<PathBuf>,
}

/// Everything `rigor run` was asked to do, checked. Nothing past this type sees clap.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub selection: Selection,
    /// Drop the LOW lowest and HIGH highest iterations of each row.
    pub exclude: Option<(usize, usize)>,
    /// The measurement that orders iterations for `exclude`.
    pub exclude_order: String,
    /// Which of `primary`, `exclude_order` and `gated` the user named; the others follow
    /// what the plan runs ([`RunOptions::for_plan`]).
    pub named: Named,
    /// Seed of the shuffled interleaving; `None` draws one (recorded in the result).
    pub seed: Option<u64>,
    /// Add rounds until the primary measurement is conclusive, up to this many per row.
    pub until_conclusive: Option<usize>,
    /// The measurement verdicts and `until_conclusive` focus on.
    pub primary: String,
    /// Practical threshold, in percent, below which a change is no change.
    pub threshold: f64,
    /// `--threshold ID=PCT`: measurements judged at a threshold of their own (over the
    /// config's `[measurements.ID] threshold`).
    pub thresholds: Vec<(String, f64)>,
    /// `--limit ID<VALUE`, as given: read against the plan's declarations (a command's own
    /// figure takes the unit its `[measurements]` table declares).
    pub limits: Vec<String>,
    /// Run variants even when their iterations can never reach a verdict.
    pub allow_inconclusive: bool,
    /// The measurements `fail_on_regression` checks (the primary unless named).
    pub gated: Vec<String>,
    pub fail_on_regression: bool,
    /// How often the application probe samples.
    pub sample_interval: Duration,
    pub outputs: OutputPaths,
    pub description: Option<String>,
    pub drop_caches: bool,
    /// `--cpu-profile`, `--cpu-profile-hz`: CPU profiles of every row, or of the rows whose
    /// scenario or profile says `cpu_profile`, at this rate.
    pub cpu_profile: CpuProfileOptions,
    /// Which warnings fail the run (exit 4).
    pub strict: crate::analysis::gate::Strictness,
    /// Run every iteration of a row even after its application failed to start.
    pub keep_going: bool,
    /// Keep contaminated iterations (warned about) instead of excluding and re-running them.
    pub keep_noisy: bool,
    /// `--pivot`, `--pivot-by`, `--no-chart`: what the reports show beyond their tables.
    pub view: crate::report::View,
    /// The history store the finished run is appended to; `None` with `--no-store`.
    pub store: Option<crate::history::StoreSpec>,
}

/// What the command line says of CPU profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuProfileOptions {
    /// Every row profiled with this stack walk (`--cpu-profile[=dwarf]`); `None` leaves it to
    /// the config's `cpu_profile`.
    pub every_row: Option<crate::config::StackWalk>,
    /// Samples per second (`--cpu-profile-hz`).
    pub hz: u32,
    /// Whether `--cpu-profile-hz` was given: a rate for profiles no row takes is a mistake.
    pub hz_given: bool,
}

/// perf's usual modest rate: 99 rather than 100, so sampling does not beat in step with a
/// timer of the application.
pub const DEFAULT_CPU_PROFILE_HZ: u32 = 99;

impl Default for CpuProfileOptions {
    fn default() -> Self {
        CpuProfileOptions {
            every_row: None,
            hz: DEFAULT_CPU_PROFILE_HZ,
            hz_given: false,
        }
    }
}

/// Measurement flags the user gave, as opposed to their defaults.
#[derive(Debug, Clone, Copy, Default)]
pub struct Named {
    pub primary: bool,
    pub exclude_order: bool,
    pub gated: bool,
}

impl RunOptions {
    /// These options with the measurement defaults of what `plan` runs: a command job has no
    /// `load.rps`, so its primary is its own figure (see [`crate::plan::RunPlan::default_primary`]).
    pub fn for_plan(&self, plan: &crate::plan::RunPlan) -> RunOptions {
        let mut o = self.clone();
        if !o.named.primary {
            o.primary = plan.default_primary();
        }
        if !o.named.exclude_order {
            o.exclude_order = o.primary.clone();
        }
        if !o.named.gated {
            o.gated = vec![o.primary.clone()];
        }
        o.view.primary = Some(o.primary.clone());
        if o.view.key.is_empty() {
            o.view.key = plan.report_key.clone();
        }
        o
    }

    /// A run a program asks for, as `rigor bisect` runs each step: `selection` measured with
    /// `primary` judged at `threshold` (in %), the files in `outputs`, every other option as
    /// `rigor run` leaves it, and no history store. Built from typed values, with no flag text
    /// made or parsed, so a path reaches the run byte for byte (non-UTF-8 included).
    pub fn for_program(
        selection: Selection,
        primary: &str,
        threshold: f64,
        outputs: OutputPaths,
    ) -> RunOptions {
        RunOptions {
            selection,
            exclude: None,
            exclude_order: primary.to_string(),
            named: Named {
                primary: true,
                exclude_order: false,
                gated: false,
            },
            seed: None,
            until_conclusive: None,
            primary: primary.to_string(),
            threshold,
            thresholds: Vec::new(),
            limits: Vec::new(),
            allow_inconclusive: false,
            gated: vec![primary.to_string()],
            fail_on_regression: false,
            sample_interval: DEFAULT_SAMPLE_INTERVAL,
            outputs,
            description: None,
            drop_caches: false,
            cpu_profile: CpuProfileOptions::default(),
            strict: crate::analysis::gate::Strictness::Off,
            keep_going: false,
            keep_noisy: false,
            view: crate::report::View {
                primary: Some(primary.to_string()),
                ..crate::report::View::default()
            },
            store: None,
        }
    }

    /// Checks every flag. When a flag is bad, the config is still read and planned, and its
    /// problems are listed after the flags' (by line), so one run names every problem.
    pub fn from_args(args: &RunArgs) -> Result<RunOptions, Failure> {
        let selection = Selection {
            file: args.file.clone(),
            scenarios: args.scenarios.clone(),
            profile: args.profile.clone(),
            iterations: args.iterations,
            vars: parse_vars(&args.vars).unwrap_or_default(),
            variants: args.variants.clone(),
            refs: Vec::new(),
            values: None,
            cross_check: args
                .cross_check
                .as_deref()
                .and_then(|t| crate::crosscheck::parse(t).ok()),
        };
        check(args, &selection).map_err(|mut problems| {
            if let Err(config) = crate::plan::prepare(&selection) {
                problems.extend(config);
            }
            refused(&problems)
        })
    }
}

/// The usage failure for a list of problems: one `error:` line each (the first gets its
/// prefix from `main`), and a count when there are several.
pub fn refused(problems: &Problems) -> Failure {
    let mut text = problems.messages().join("\nerror: ");
    if problems.len() > 1 {
        text.push_str(&format!(
            "\nrigor: {} problems; nothing was built or started",
            problems.len()
        ));
    }
    Failure::Usage(text)
}

/// How often the application probe samples when `--sample-interval` is not given (the flag's
/// default says the same).
pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_millis(250);

/// Checks the flags other than the selection's; every bad flag is one problem.
fn check(args: &RunArgs, selection: &Selection) -> Result<RunOptions, Problems> {
    let mut p = Problems::default();
    let sample_interval = sample_interval(&args.sample_interval, &mut p);
    let cpu_profile = cpu_profile(args, &mut p);
    for id in args
        .primary
        .iter()
        .chain(args.measurements.iter().flatten())
        .chain(args.exclude_order.iter())
    {
        p.take(crate::measurements::validate(id).map_err(String::from));
    }
    for (flag, n) in [
        ("-i/--iterations", args.iterations),
        ("--until-conclusive", args.until_conclusive),
    ] {
        match n {
            Some(0) => p.add(format!("{flag} must be at least 1")),
            Some(n) if n > MAX_ITERATIONS => p.add(format!(
                "{flag} {n} is more than the limit of {MAX_ITERATIONS} iterations per row"
            )),
            _ => {}
        }
    }
    for (flag, names) in [
        ("-s/--scenario", Some(&args.scenarios)),
        ("--variants", args.variants.as_ref()),
    ] {
        check_names(flag, names.map(Vec::as_slice), &mut p);
    }
    p.take(parse_vars(&args.vars));
    let strict = p
        .take(crate::analysis::gate::Strictness::parse(
            args.strict.as_deref(),
        ))
        .unwrap_or_default();
    let (threshold, thresholds) = crate::threshold::split_thresholds(&args.threshold);
    for (id, _) in &thresholds {
        p.take(crate::measurements::validate(id).map_err(|e| format!("--threshold {id}=…: {e}")));
    }
    for text in &args.limits {
        // A catalogue id is checked now; a command's own figure once the plan says its unit.
        let none = crate::declarations::Declarations::new();
        if let Err(e) = crate::analysis::limits::parse_flag(text, &none) {
            let e = e.to_string();
            let open = text
                .split(['<', '>'])
                .next()
                .is_some_and(|id| crate::measurements::info(id.trim()).is_none())
                && !e.contains("unknown measurement")
                && !e.contains("expected ID<VALUE");
            if !open {
                p.add(e);
            }
        }
    }
    if let Some(t) = &args.cross_check {
        p.take(crate::crosscheck::parse(t));
    }
    let view = p.take(args.view.view());
    let exclude = p
        .take(args.exclude.as_deref().map(parse_exclude).transpose())
        .flatten();
    if let Some((low, high)) = exclude {
        if low.max(high) > MAX_ITERATIONS {
            p.add(format!(
                "--exclude {low}:{high}: more than the limit of {MAX_ITERATIONS} iterations per row"
            ));
        }
    }
    let store = (!args.no_store)
        .then(|| crate::history::StoreSpec::choose(args.store.as_deref(), &selection.file));
    if let Some(e) = store.as_ref().and_then(|s| {
        s.unusable()
            .or_else(|| crate::options::store::cannot_write(s))
    }) {
        p.add(e);
    }
    if !p.is_empty() {
        return Err(p);
    }
    let primary = args.primary.clone().unwrap_or_else(|| LOAD_RPS.to_string());
    Ok(RunOptions {
        selection: selection.clone(),
        exclude,
        exclude_order: (args.exclude_order.as_ref())
            .or(args.primary.as_ref())
            .cloned()
            .unwrap_or_else(|| LOAD_RPS.to_string()),
        named: Named {
            primary: args.primary.is_some(),
            exclude_order: args.exclude_order.is_some(),
            gated: args.measurements.is_some(),
        },
        seed: args.seed,
        until_conclusive: args.until_conclusive,
        primary: primary.clone(),
        threshold,
        thresholds,
        limits: args.limits.clone(),
        allow_inconclusive: args.allow_inconclusive,
        gated: args
            .measurements
            .clone()
            .unwrap_or_else(|| vec![primary.clone()]),
        fail_on_regression: args.fail_on_regression,
        sample_interval,
        outputs: OutputPaths {
            out_dir: args.out_dir.clone(),
            json: args.json.clone(),
            markdown: args.markdown.clone(),
            csv: args.csv.clone(),
            html: args.html.clone(),
        },
        description: args.description.clone(),
        drop_caches: args.drop_caches,
        cpu_profile,
        strict,
        keep_going: args.keep_going,
        keep_noisy: args.keep_noisy,
        view: crate::report::View {
            primary: Some(primary.clone()),
            ..view.unwrap_or_default()
        },
        store,
    })
}

/// `--cpu-profile[=WALK]` and `--cpu-profile-hz`: a rate from 1 to 10000 per second.
/// Whether the config profiles any row is known only once it is planned
/// ([`CpuProfileOptions::hz_given`]).
fn cpu_profile(args: &RunArgs, p: &mut Problems) -> CpuProfileOptions {
    let hz = args.cpu_profile_hz.unwrap_or(DEFAULT_CPU_PROFILE_HZ);
    if !(1..=10_000).contains(&hz) {
        p.add(format!(
            "--cpu-profile-hz {hz}: must be from 1 to 10000 samples per second"
        ));
    }
    CpuProfileOptions {
        every_row: args.cpu_profile.as_deref().map(|w| match w {
            "dwarf" => crate::config::StackWalk::Dwarf,
            _ => crate::config::StackWalk::FramePointer,
        }),
        hz: hz.clamp(1, 10_000),
        hz_given: args.cpu_profile_hz.is_some(),
    }
}

/// `--sample-interval`: a duration above zero.
fn sample_interval(text: &str, p: &mut Problems) -> Duration {
    match parse_duration(text) {
        Ok(d) if !d.is_zero() => d,
        Ok(_) => {
            p.add("--sample-interval must be more than 0".into());
            Duration::ZERO
        }
        Err(e) => {
            p.add(format!("--sample-interval: {e}"));
            Duration::ZERO
        }
    }
}

/// A list of names: none empty, none twice.
fn check_names(flag: &str, names: Option<&[String]>, p: &mut Problems) {
    let Some(names) = names else {
        return;
    };
    for (i, name) in names.iter().enumerate() {
        if name.trim().is_empty() {
            p.add(format!("{flag}: an empty name in the list"));
        } else if names[..i].contains(name) {
            p.add(format!("{flag}: `{name}` is selected twice"));
        }
    }
}

/// Parses `K=V` pairs given with --var.
pub fn parse_vars(vars: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    vars.iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(anyhow::anyhow!("--var `{kv}`: expected NAME=VALUE")),
        })
        .collect()
}

/// Parses `LOW:HIGH` for --exclude.
pub fn parse_exclude(text: &str) -> anyhow::Result<(usize, usize)> {
    let bad = || anyhow::anyhow!("--exclude `{text}`: expected LOW:HIGH, e.g. 1:1");
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn args(flags: &[&str]) -> RunArgs {
        let argv = ["rigor", "run", "-f", "/nonexistent/rigor.toml"];
        let cli = Cli::try_parse_from(argv.iter().chain(flags)).expect("flags parse");
        match cli.command {
            Command::Run(a) => *a,
            _ => unreachable!("a run command"),
        }
    }

    #[test]
    fn good_flags_become_values() {
        let o = RunOptions::from_args(&args(&[
            "--exclude",
            "1:2",
            "--var",
            "port=6000",
            "--sample-interval",
            "50ms",
            "--threshold",
            "5%",
        ]))
        .expect("good flags");
        assert_eq!(o.exclude, Some((1, 2)));
        assert_eq!(o.selection.vars, vec![("port".into(), "6000".into())]);
        assert_eq!(o.sample_interval, Duration::from_millis(50));
        assert_eq!(o.threshold, 5.0);
        assert_eq!(o.gated, vec!["load.rps".to_string()]);
    }

    #[test]
    fn pivot_flags_become_the_report_view() {
        let o = RunOptions::from_args(&args(&["--pivot", " cmd.mps ", "--no-chart"])).unwrap();
        assert_eq!(o.view.pivot.as_deref(), Some("cmd.mps"));
        assert_eq!(o.view.pivot_by, None);
        assert!(!o.view.charts);
        let o = RunOptions::from_args(&args(&["--pivot-by", "clients"])).unwrap();
        assert_eq!(o.view.pivot_by.as_deref(), Some("clients"));
        assert!(o.view.charts);
        let e = RunOptions::from_args(&args(&["--pivot", " "])).unwrap_err();
        assert!(
            e.text().starts_with("--pivot: an empty name"),
            "{}",
            e.text()
        );
    }

    #[test]
    fn every_bad_flag_is_one_line_and_the_config_follows() {
        let failure = RunOptions::from_args(&args(&[
            "--exclude",
            "x",
            "--var",
            "novalue",
            "--sample-interval",
            "0s",
            "-i",
            "0",
        ]))
        .expect_err("bad flags");
        let text = failure.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..4],
            [
                "--sample-interval must be more than 0",
                "error: -i/--iterations must be at least 1",
                "error: --var `novalue`: expected NAME=VALUE",
                "error: --exclude `x`: expected LOW:HIGH, e.g. 1:1",
            ],
            "{text}"
        );
        // The missing config is the fifth problem.
        assert!(lines[4].starts_with("error: "), "{text}");
        assert_eq!(
            lines.last(),
            Some(&"rigor: 5 problems; nothing was built or started"),
            "{text}"
        );
        assert_eq!(failure.exit(), crate::exit::Exit::Usage);
    }
}
