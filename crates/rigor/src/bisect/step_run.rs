//! One measured step of a bisection: an ordinary `rigor run` of the scenario whose variants are
//! commits (`ref`), interleaved, with `--until-conclusive` adding rounds up to the cap while a
//! comparison is still inconclusive. Its result file and logs stay in the bisection's folder;
//! nothing goes to stdout. Each commit's verified build is tried once on its own before it is
//! measured, so a commit that does not build is skipped without running anything.

use crate::config::MAX_ITERATIONS;
use crate::exec;
use crate::failure::Failure;
use crate::options::run::{OutputPaths, RunOptions, Selection};
use crate::result::{Comparison, RunResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a commit did not build; kept per commit, so a later ask gets the same answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuildError {
    /// The scenario could not be planned for the commit (the plan's problems, joined).
    #[error("{0}")]
    Plan(String),
    /// The plan has no row, so nothing to build.
    #[error("the scenario has no row to build")]
    NoRow,
    /// The builds' folder could not be made.
    #[error("{}: {source}", .dir.display())]
    Folder {
        dir: PathBuf,
        source: std::sync::Arc<std::io::Error>,
    },
    /// The verified build failed (its whole chain of causes).
    #[error("{0}")]
    Build(String),
}

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
    built: BTreeMap<String, Result<(), BuildError>>,
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
    pub fn build(&mut self, sha: &str) -> Result<(), BuildError> {
        if let Some(done) = self.built.get(sha) {
            return done.clone();
        }
        let outcome = self.build_once(sha);
        self.built.insert(sha.to_string(), outcome.clone());
        outcome
    }

    fn build_once(&mut self, sha: &str) -> Result<(), BuildError> {
        let selection = self.selection(&[("tested".into(), sha.into())]);
        let plan = crate::plan::prepare(&selection)
            .map_err(|p| BuildError::Plan(p.messages().join("; ")))?;
        let Some(row) = plan.rows.first() else {
            return Err(BuildError::NoRow);
        };
        if let Some(r) = &row.plan.app.git_ref {
            self.worktrees.push((r.repo.clone(), r.worktree.clone()));
        }
        let short = match self.var {
            Some(_) => file_name(sha),
            None => crate::git::short(sha).to_string(),
        };
        let dir = self.folder.join("builds");
        std::fs::create_dir_all(&dir).map_err(|e| BuildError::Folder {
            dir: dir.clone(),
            source: std::sync::Arc::new(e),
        })?;
        exec::build_only(
            &row.plan.app,
            &dir.join(format!("{short}.log")),
            &dir.join(&short),
        )
        .map_err(|e| BuildError::Build(format!("{e:#}")))
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
                    failed.push(e.to_string());
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

    /// `rigor run` options for one step: the options `rigor run` would make of this bench's
    /// flags (`-s`, `-i`, `--primary`, `--threshold`, `--json`, `--out-dir`, `--no-store`,
    /// `--allow-inconclusive`, `--until-conclusive`), built as values so paths pass unchanged.
    fn options(
        &self,
        json: &Path,
        out_dir: &Path,
        rounds: usize,
        until_conclusive: bool,
    ) -> Result<RunOptions, Failure> {
        crate::measurements::validate(&self.measurement).map_err(Failure::usage)?;
        for (flag, n) in [
            ("-i/--iterations", rounds),
            ("--until-conclusive", self.cap),
        ] {
            if n > MAX_ITERATIONS {
                return Err(Failure::usage(format!(
                    "{flag} {n} is more than the limit of {MAX_ITERATIONS} iterations per row"
                )));
            }
        }
        let mut selection = self.selection(&[]);
        selection.iterations = Some(rounds);
        let outputs = OutputPaths {
            out_dir: out_dir.to_path_buf(),
            json: Some(json.to_path_buf()),
            ..OutputPaths::default()
        };
        // A step measures commits against each other, not the project's history: no store.
        let mut options =
            RunOptions::for_program(selection, &self.measurement, self.threshold, outputs);
        // A step's few rounds are judged by the bisection's own position test, not by the
        // run's verdicts: a run too short to conclude on its own is expected here.
        options.allow_inconclusive = true;
        options.until_conclusive = until_conclusive.then_some(self.cap);
        Ok(options)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    fn bench(folder: &Path) -> Bench {
        Bench::new(
            Path::new("/nonexistent/rigor.toml"),
            "api",
            "app.rss",
            2.5,
            3,
            folder.to_path_buf(),
        )
    }

    /// The options `rigor run` makes of the flags a step stands for.
    fn from_flags(b: &Bench, json: &Path, out_dir: &Path, until: bool) -> RunOptions {
        let mut argv: Vec<String> = [
            "rigor",
            "run",
            "-f",
            &b.file.display().to_string(),
            "-s",
            &b.scenario,
            "-i",
            "2",
            "--primary",
            &b.measurement,
            "--threshold",
            &b.threshold.to_string(),
            "--json",
            &json.display().to_string(),
            "--out-dir",
            &out_dir.display().to_string(),
            "--no-store",
            "--allow-inconclusive",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if until {
            argv.extend(["--until-conclusive".to_string(), b.cap.to_string()]);
        }
        let Command::Run(args) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!("a run command")
        };
        RunOptions::from_args(&args).unwrap()
    }

    #[test]
    fn a_step_runs_what_rigor_run_makes_of_its_flags() {
        let b = bench(Path::new("/tmp/rigor-bisect-steps"));
        let (json, out) = (b.folder.join("s1.json"), b.folder.join("s1"));
        for until in [false, true] {
            let typed = b.options(&json, &out, 2, until).unwrap();
            assert_eq!(
                format!("{typed:?}"),
                format!("{:?}", from_flags(&b, &json, &out, until))
            );
        }
    }

    #[test]
    fn a_step_keeps_a_non_utf8_folder_byte_for_byte() {
        let folder = Path::new(OsStr::from_bytes(b"/tmp/rigor-bisect-\xff\xfe"));
        assert!(folder.to_str().is_none());
        let b = bench(folder);
        let (json, out) = (folder.join("s1.json"), folder.join("s1"));
        let o = b.options(&json, &out, 2, false).unwrap();
        assert_eq!(o.outputs.json.as_deref(), Some(json.as_path()));
        assert_eq!(o.outputs.out_dir, out);
        assert!(o.outputs.out_dir.as_os_str().as_bytes().contains(&0xff));
        // Through text, as steps were started before, the bytes were lost.
        assert_ne!(Path::new(&out.display().to_string()), out.as_path());
    }

    #[test]
    fn a_step_over_the_iteration_limit_is_refused_as_the_flag_would_be() {
        let mut b = bench(Path::new("/tmp/rigor-bisect-steps"));
        b.cap = MAX_ITERATIONS + 1;
        let (json, out) = (b.folder.join("s1.json"), b.folder.join("s1"));
        let e = b.options(&json, &out, 2, true).err().unwrap();
        assert!(format!("{e:?}").contains("--until-conclusive"), "{e:?}");
    }
}
