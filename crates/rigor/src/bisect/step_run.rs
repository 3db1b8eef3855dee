//! One measured step of a bisection: an ordinary `rigor run` of the scenario whose variants are
//! commits (`ref`), interleaved, with `--until-conclusive` adding rounds up to the cap while a
//! comparison is still inconclusive. Its result file and logs stay in the bisection's folder;
//! nothing goes to stdout. Each commit's verified build is tried once on its own before it is
//! measured, so a commit that does not build is skipped without running anything.

use crate::cli::{Cli, Command};
use crate::exec;
use crate::failure::Failure;
use crate::options::run::{RunOptions, Selection};
use crate::result::{Comparison, RunResult};
use clap::Parser;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What every step shares: the config, scenario and measurement, where files go, and what was
/// built and spent so far.
pub struct Bench {
    pub file: PathBuf,
    pub scenario: String,
    pub measurement: String,
    pub threshold: f64,
    /// Iterations per commit and step, and the most `--until-conclusive` may reach.
    pub iterations: usize,
    pub cap: usize,
    /// The bisection's folder: a result file and a folder of logs per step.
    pub folder: PathBuf,
    /// Each commit's build outcome (the first line of its error when it failed).
    built: BTreeMap<String, Result<(), String>>,
    /// Iterations run so far, over every step.
    pub spent: usize,
    runs: usize,
    /// The worktrees made for the commits built: (repository, worktree).
    worktrees: Vec<(PathBuf, PathBuf)>,
    /// When the candidates are values of this variable rather than commits.
    pub var: Option<String>,
}

/// One step's run: its result, and where its file is.
pub struct StepRun {
    pub result: RunResult,
    pub json: PathBuf,
    /// Iterations this run made.
    pub iterations: usize,
}

impl Bench {
    /// A bench for `scenario` of the config `file`, writing into `folder`.
    pub fn new(
        file: &Path,
        scenario: &str,
        measurement: &str,
        threshold: f64,
        iterations: usize,
        folder: PathBuf,
    ) -> Bench {
        Bench {
            file: file.to_path_buf(),
            scenario: scenario.to_string(),
            measurement: measurement.to_string(),
            threshold,
            iterations,
            cap: iterations.saturating_mul(super::CAP_FACTOR),
            folder,
            built: BTreeMap::new(),
            spent: 0,
            runs: 0,
            worktrees: Vec::new(),
            var: None,
        }
    }

    /// Builds `sha` once with rigor's verified build in its worktree; later calls say what the
    /// first one found.
    pub fn build(&mut self, sha: &str) -> Result<(), String> {
        if let Some(done) = self.built.get(sha) {
            return done.clone();
        }
        let outcome = self.build_once(sha);
        self.built.insert(sha.to_string(), outcome.clone());
        outcome
    }

    fn build_once(&mut self, sha: &str) -> Result<(), String> {
        let selection = self.selection(&[("tested".into(), sha.into())]);
        let plan = crate::plan::prepare(&selection).map_err(|p| p.messages().join("; "))?;
        let Some(row) = plan.rows.first() else {
            return Err("the scenario has no row to build".into());
        };
        if let Some(r) = &row.plan.app.git_ref {
            self.worktrees.push((r.repo.clone(), r.worktree.clone()));
        }
        let short = match self.var {
            Some(_) => file_name(sha),
            None => crate::git::short(sha).to_string(),
        };
        let dir = self.folder.join("builds");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        exec::build_only(
            &row.plan.app,
            &dir.join(format!("{short}.log")),
            &dir.join(&short),
        )
        .map_err(|e| format!("{e:#}"))
    }

    /// The selection of a step: the scenario with `refs` as its variants, baseline first
    /// (commits, or values of the variable).
    fn selection(&self, refs: &[(String, String)]) -> Selection {
        let (refs, values) = match &self.var {
            Some(name) => (Vec::new(), Some((name.clone(), refs.to_vec()))),
            None => (refs.to_vec(), None),
        };
        Selection {
            file: self.file.clone(),
            scenarios: vec![self.scenario.clone()],
            profile: "local".into(),
            iterations: Some(self.iterations),
            vars: Vec::new(),
            variants: None,
            refs,
            values,
            cross_check: None,
        }
    }

    /// Runs the commits `refs` (variant name, full hash; the first is the baseline) interleaved
    /// for `rounds` rounds as step `label`, and counts its iterations. `until_conclusive` adds
    /// rounds while the run's own comparison is inconclusive, up to the cap.
    pub fn run(
        &mut self,
        label: &str,
        refs: &[(String, String)],
        rounds: usize,
        until_conclusive: bool,
    ) -> Result<StepRun, Failure> {
        self.runs += 1;
        let json = self.folder.join(format!("{label}.json"));
        let mut options =
            self.options(&json, &self.folder.join(label), rounds, until_conclusive)?;
        let selection = self.selection(refs);
        options.selection.refs = selection.refs;
        options.selection.values = selection.values;
        let measured = exec::measure(&options)?;
        let iterations = measured
            .result
            .rows
            .iter()
            .map(|r| r.iterations.len())
            .sum();
        self.spent += iterations;
        Ok(StepRun {
            result: measured.result,
            json,
            iterations,
        })
    }

    /// Removes the worktrees made for the commits, each by its path, and their folder when
    /// nothing else is left in it; what could not be removed, said as a warning line each.
    pub fn remove_worktrees(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        for (repo, path) in self.worktrees.drain(..) {
            if path.exists() {
                if let Err(e) = crate::git::remove_worktree(&repo, &path) {
                    failed.push(e);
                }
            }
            if let Some(parent) = path.parent() {
                // Only succeeds once the folder is empty.
                let _ = std::fs::remove_dir(parent);
            }
        }
        failed
    }

    /// How many runs the bisection made so far.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// `rigor run` options for one step, made from the flags a user would type, so a step is
    /// exactly the run `rigor run` would make of them.
    fn options(
        &self,
        json: &Path,
        out_dir: &Path,
        rounds: usize,
        until_conclusive: bool,
    ) -> Result<RunOptions, Failure> {
        let mut argv: Vec<String> = [
            "rigor",
            "run",
            "-f",
            &self.file.display().to_string(),
            "-s",
            &self.scenario,
            "-i",
            &rounds.to_string(),
            "--primary",
            &self.measurement,
            "--threshold",
            &self.threshold.to_string(),
            "--json",
            &json.display().to_string(),
            "--out-dir",
            &out_dir.display().to_string(),
            // A step measures commits against each other, not the project's history.
            "--no-store",
            // A step's few rounds are judged by the bisection's own position test, not by the
            // run's verdicts: a run too short to conclude on its own is expected here.
            "--allow-inconclusive",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if until_conclusive {
            argv.extend(["--until-conclusive".to_string(), self.cap.to_string()]);
        }
        let cli = Cli::try_parse_from(argv).map_err(|e| Failure::usage(e.to_string()))?;
        let Command::Run(args) = cli.command else {
            return Err(Failure::usage("not a run"));
        };
        RunOptions::from_args(&args)
    }
}

impl StepRun {
    /// The comparison of `candidate` against `baseline` on `measurement`.
    pub fn comparison(
        &self,
        baseline: &str,
        candidate: &str,
        measurement: &str,
    ) -> Option<&Comparison> {
        self.result.comparisons.iter().find(|c| {
            c.baseline == baseline && c.candidate == candidate && c.measurement == measurement
        })
    }

    /// The measurement's values over the variant's kept iterations, in round order.
    pub fn values(&self, variant: &str, measurement: &str) -> Vec<f64> {
        self.result
            .rows
            .iter()
            .find(|r| r.variant.as_deref() == Some(variant))
            .map(|r| r.values(measurement))
            .unwrap_or_default()
    }

    /// Why the variant's row did not measure: its build error, or that no iteration of it
    /// succeeded.
    pub fn not_measured(&self, variant: &str) -> Option<String> {
        let row = self
            .result
            .rows
            .iter()
            .find(|r| r.variant.as_deref() == Some(variant))?;
        if let Some(e) = &row.build_error {
            return Some(first_line(e));
        }
        if row.kept_iterations().next().is_none() {
            let why = row
                .iterations
                .iter()
                .find_map(|it| it.error.clone())
                .unwrap_or_else(|| "no iteration ran".into());
            return Some(first_line(&why));
        }
        None
    }
}

/// A value as a file name: characters other than letters, digits, `.`, `-` and `_` as `_`.
fn file_name(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The first line of a (possibly long) error.
pub fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}
