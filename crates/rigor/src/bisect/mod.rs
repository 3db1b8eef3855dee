//! `rigor bisect`: the commit that changed a measurement, found by statistics rather than by a
//! script's exit code. Good and bad are first confirmed to differ beyond the threshold in one
//! interleaved run; then a binary search over the first-parent path between them measures each
//! commit interleaved with both ends (so drift between steps cancels) and judges it like good,
//! like bad, or unknown ([`decide`]); a commit that does not build is skipped. The first bad
//! commit is then run interleaved against its parent for the change it made.
//!
//! Every step is an ordinary `rigor run` whose variants are commits (`ref`), built in worktrees
//! that persist between steps and bisections, so a commit is built once.

mod decide;
mod git;
mod report;
mod search;
mod setup;
mod step_run;

use crate::cli::bisect::BisectArgs;
use crate::exit::Exit;
use crate::failure::Failure;
use crate::git::short;
use crate::{console, interrupt};
use decide::{decide, differs, Side};
use git::Commit;
use report::{Named, Report, Step};
use search::{Decision, Next, Search};
use setup::Setup;
use std::time::Instant;
use step_run::{first_line, Bench};

/// A step still inconclusive gets rounds until this many times `-i` per commit.
pub const CAP_FACTOR: usize = 4;

/// How the bisection ended.
enum Outcome {
    Culprit(usize),
    /// Skipped commits hide the culprit: these indices.
    Among(Vec<usize>),
    /// The commit `unknown` could not be judged between the two bounds.
    Inconclusive {
        good: usize,
        bad: usize,
        unknown: usize,
    },
    /// Good and bad do not differ beyond the threshold (or could not be told apart): why.
    NoDifference {
        verdict: &'static str,
        why: String,
    },
    Interrupted,
}

/// Runs `rigor bisect`: 0 with a culprit, 5 when there is none to stand behind, 1 on failure.
pub fn execute(args: &BisectArgs) -> Result<Exit, Failure> {
    // Forked while rigor is still single-threaded, as `rigor run` does.
    crate::exec::sentinel::start();
    interrupt::install();
    let started = Instant::now();
    let setup = setup::prepare(args)?;
    let folder = args
        .out_dir
        .join(format!("bisect-{}", crate::clock::now_compact()));
    std::fs::create_dir_all(&folder)
        .map_err(|e| Failure::usage(format!("cannot create {}: {e}", folder.display())))?;
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    let bench = Bench::new(
        &args.file,
        &args.scenario,
        &setup.measurement,
        args.threshold,
        args.iterations,
        folder,
    );
    let mut bisection = Bisection {
        setup,
        bench,
        steps: Vec::new(),
        culprit_vs_parent: None,
    };
    let outcome = bisection.run()?;
    let report = bisection.report(&outcome, started.elapsed().as_secs_f64());
    console::out(&report.text());
    if let Some(path) = &args.json {
        report
            .write_json(path)
            .map_err(|e| Failure::from(anyhow::anyhow!(e)))?;
    }
    Ok(match outcome {
        Outcome::Culprit(_) => Exit::Success,
        Outcome::Interrupted => Exit::Failed,
        _ => Exit::Inconclusive,
    })
}

/// A bisection under way: what it searches, its bench, and the steps so far.
struct Bisection {
    setup: Setup,
    bench: Bench,
    steps: Vec<Step>,
    culprit_vs_parent: Option<Side>,
}

impl Bisection {
    fn commit(&self, i: usize) -> &Commit {
        &self.setup.commits[i]
    }

    fn good(&self) -> &Commit {
        &self.setup.commits[0]
    }

    fn bad(&self) -> &Commit {
        self.setup.commits.last().expect("at least good and bad")
    }

    /// The whole search: the ends confirmed, the commits between them tested until the search
    /// ends, and the culprit measured against its parent.
    fn run(&mut self) -> Result<Outcome, Failure> {
        if let Some(end) = self.confirm_ends()? {
            return Ok(end);
        }
        let mut search = Search::new(self.setup.commits.len() - 1);
        loop {
            if interrupt::interrupted() {
                return Ok(Outcome::Interrupted);
            }
            match search.next() {
                Next::Test(i) => {
                    let decision = self.test(i, &search)?;
                    search.record(i, decision);
                }
                Next::Culprit(i) => {
                    self.culprit_vs_parent = self.against_parent(i)?;
                    if interrupt::interrupted() {
                        return Ok(Outcome::Interrupted);
                    }
                    return Ok(Outcome::Culprit(i));
                }
                Next::AmongSkipped(among) => return Ok(Outcome::Among(among)),
                Next::Inconclusive { good, bad, unknown } => {
                    return Ok(Outcome::Inconclusive { good, bad, unknown })
                }
            }
        }
    }

    /// Step 0: both ends build, and differ beyond the threshold in one interleaved run.
    /// `Some` ends the bisection there.
    fn confirm_ends(&mut self) -> Result<Option<Outcome>, Failure> {
        let failed = |e: String| Failure::from(anyhow::anyhow!(e));
        for (name, c) in [("good", self.good().clone()), ("bad", self.bad().clone())] {
            let built = self.bench.build(&c.sha);
            // A build cut short by Ctrl-C says nothing about the commit.
            if interrupt::interrupted() {
                return Ok(Some(Outcome::Interrupted));
            }
            built.map_err(|e| {
                failed(format!(
                    "the {name} commit {} does not build: {e}",
                    c.label()
                ))
            })?;
        }
        say(&format!(
            "bisect: step 0: do good {} and bad {} differ beyond {}%?",
            short(&self.good().sha),
            short(&self.bad().sha),
            self.bench.threshold
        ));
        let refs = [
            ("good".to_string(), self.good().sha.clone()),
            ("bad".to_string(), self.bad().sha.clone()),
        ];
        let run = self.bench.run("step-0", &refs)?;
        if interrupt::interrupted() {
            return Ok(Some(Outcome::Interrupted));
        }
        for end in ["good", "bad"] {
            if let Some(why) = run.not_measured(end) {
                return Err(failed(format!("the {end} commit did not run: {why}")));
            }
        }
        let m = self.bench.measurement.clone();
        let Some(cmp) = run.comparison("good", "bad", &m) else {
            return Err(failed(format!(
                "{m} was not measured in {}: name one the scenario measures with -m",
                run.json.display()
            )));
        };
        let side = Side::of(cmp);
        let differ = differs(side.verdict);
        self.steps.push(Step {
            commit: self.bad().sha.clone(),
            subject: self.bad().subject.clone(),
            decision: if differ { "differ" } else { "no difference" }.into(),
            iterations: run.iterations,
            vs_good: Some(side.clone()),
            vs_bad: None,
            note: None,
            result: Some(run.json.display().to_string()),
        });
        if differ {
            say(&format!("bisect: bad against good: {m} {}", side.text()));
            return Ok(None);
        }
        Ok(Some(no_difference(
            &m,
            self.bench.threshold,
            &side,
            run.iterations,
        )))
    }

    /// Measures the commit at `i` against both ends (after its build) and judges it.
    fn test(&mut self, i: usize, search: &Search) -> Result<Decision, Failure> {
        let c = self.commit(i).clone();
        let k = self.steps.len();
        say(&format!(
            "bisect: step {k} of ~{}: {} commits left, testing {} ({} iterations so far)",
            k - 1 + search.steps_left(),
            search.left(),
            c.label(),
            self.bench.spent
        ));
        let built = self.bench.build(&c.sha);
        // Cut short by Ctrl-C, a build or a run says nothing about the commit: it is not
        // recorded as skipped (the caller stops at the interrupt).
        if interrupt::interrupted() {
            return Ok(Decision::Unknown);
        }
        if let Err(e) = built {
            return Ok(self.skipped(&c, first_line(&e), None, 0));
        }
        let refs = [
            ("tested".to_string(), c.sha.clone()),
            ("good".to_string(), self.good().sha.clone()),
            ("bad".to_string(), self.bad().sha.clone()),
        ];
        let run = self.bench.run(&format!("step-{k}"), &refs)?;
        if interrupt::interrupted() {
            return Ok(Decision::Unknown);
        }
        let json = Some(run.json.display().to_string());
        if let Some(why) = run.not_measured("tested") {
            return Ok(self.skipped(&c, why, json, run.iterations));
        }
        let m = &self.bench.measurement;
        let side = |end: &str| run.comparison("tested", end, m).map(Side::reversed);
        let (vs_good, vs_bad) = (side("good"), side("bad"));
        let decision = match (&vs_good, &vs_bad) {
            (Some(g), Some(b)) => decide(g, b),
            _ => Decision::Unknown,
        };
        let word = match decision {
            Decision::Good => "good",
            Decision::Bad => "bad",
            Decision::Skip => "skipped",
            Decision::Unknown => "unknown",
        };
        say(&format!("bisect: {} is {word}", short(&c.sha)));
        self.steps.push(Step {
            commit: c.sha.clone(),
            subject: c.subject.clone(),
            decision: word.into(),
            iterations: run.iterations,
            vs_good,
            vs_bad,
            note: None,
            result: json,
        });
        Ok(decision)
    }

    /// Records a commit that could not be measured, and says so.
    fn skipped(&mut self, c: &Commit, why: String, json: Option<String>, n: usize) -> Decision {
        say(&format!("bisect: {} skipped: {why}", short(&c.sha)));
        self.steps.push(Step {
            commit: c.sha.clone(),
            subject: c.subject.clone(),
            decision: "skipped".into(),
            iterations: n,
            vs_good: None,
            vs_bad: None,
            note: Some(why),
            result: json,
        });
        Decision::Skip
    }

    /// The culprit at `i` run interleaved against its parent: the change it made.
    fn against_parent(&mut self, i: usize) -> Result<Option<Side>, Failure> {
        let (parent, culprit) = (self.commit(i - 1).clone(), self.commit(i).clone());
        say(&format!(
            "bisect: first bad commit {}; measuring it against its parent {}",
            culprit.label(),
            short(&parent.sha)
        ));
        let refs = [
            ("parent".to_string(), parent.sha.clone()),
            ("culprit".to_string(), culprit.sha.clone()),
        ];
        let run = self.bench.run("culprit", &refs)?;
        Ok(run
            .comparison("parent", "culprit", &self.bench.measurement)
            .map(Side::of))
    }

    /// The report of how the bisection ended.
    fn report(&self, outcome: &Outcome, seconds: f64) -> Report {
        let commits = &self.setup.commits;
        let (verdict, message) = self.verdict(outcome);
        let culprit = match outcome {
            Outcome::Culprit(i) => Some(&commits[*i]),
            _ => None,
        };
        Report {
            schema: report::SCHEMA,
            culprit: culprit.map(|c| c.sha.clone()),
            verdict: verdict.into(),
            message,
            subject: culprit.map(|c| c.subject.clone()),
            culprit_vs_parent: culprit.and(self.culprit_vs_parent.clone()),
            parent: match outcome {
                Outcome::Culprit(i) => Some(commits[i - 1].sha.clone()),
                _ => None,
            },
            measurement: self.bench.measurement.clone(),
            threshold_pct: self.bench.threshold,
            good: Named::from(self.good()),
            bad: Named::from(self.bad()),
            candidates: commits.len() - 1,
            between: match outcome {
                Outcome::Inconclusive { good, bad, .. } => {
                    Some([commits[*good].sha.clone(), commits[*bad].sha.clone()])
                }
                _ => None,
            },
            among: match outcome {
                Outcome::Among(among) => among.iter().map(|i| Named::from(&commits[*i])).collect(),
                _ => Vec::new(),
            },
            steps: self.steps.clone(),
            iterations: self.bench.spent,
            runs: self.bench.runs(),
            seconds,
            folder: self.bench.folder.display().to_string(),
        }
    }

    /// The verdict word and the sentence saying what was found.
    fn verdict(&self, outcome: &Outcome) -> (&'static str, String) {
        let commits = &self.setup.commits;
        match outcome {
            Outcome::Culprit(i) => (
                "culprit",
                format!(
                    "first bad commit: {} {}",
                    commits[*i].sha, commits[*i].subject
                ),
            ),
            Outcome::Among(among) => (
                "inconclusive",
                format!(
                    "inconclusive: the first bad commit is one of {} commits that could not all \
                     be measured (skipped ones and the first bad one after them):",
                    among.len()
                ),
            ),
            Outcome::Inconclusive { good, bad, unknown } => (
                "inconclusive",
                format!(
                    "inconclusive between {} and {}: {} measured like neither end after up to \
                     {} iterations; the change is after the first and up to the second",
                    commits[*good].label(),
                    commits[*bad].label(),
                    short(&commits[*unknown].sha),
                    self.bench.cap
                ),
            ),
            Outcome::NoDifference { verdict, why } => (*verdict, why.clone()),
            Outcome::Interrupted => (
                "interrupted",
                "interrupted: the bisection stopped before it could name a commit".into(),
            ),
        }
    }
}

/// Why good and bad are not worth bisecting: the same within the threshold, or not told apart.
fn no_difference(m: &str, threshold: f64, side: &Side, iterations: usize) -> Outcome {
    let verdict = if side.verdict == crate::result::Verdict::NoChange {
        "no difference"
    } else {
        "inconclusive"
    };
    Outcome::NoDifference {
        verdict,
        why: format!(
            "good and bad do not differ beyond {threshold}%: {m} {} (after {iterations} \
             iterations); nothing to bisect",
            side.text()
        ),
    }
}

/// A progress line on stderr.
fn say(text: &str) {
    console::err(text);
}
