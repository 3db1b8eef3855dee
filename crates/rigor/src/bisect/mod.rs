//! `rigor bisect`: the commit that changed a measurement, found by statistics rather than by a
//! script's exit code. Good and bad are first confirmed to differ beyond the threshold in one
//! interleaved run (the only use of the threshold); then a binary search over the first-parent
//! path between them places each commit on the good → bad scale ([`position`]), measured
//! interleaved with both ends a round at a time until its interval is on one side of ½; a commit
//! that does not build is skipped. The ends' earlier rounds are reused while they agree with the
//! step's own, so a large step is decided in a couple of rounds. The culprit's change against its
//! parent comes from what the search measured, with a run of its own only when that is not
//! conclusive.
//!
//! Every step is an ordinary `rigor run` whose variants are commits (`ref`), built in worktrees
//! that persist between steps, so a commit is built once.

mod decide;
mod ends;
mod git;
mod position;
mod report;
mod search;
mod setup;
mod step_run;
mod values;

use crate::cli::bisect::BisectArgs;
use crate::exit::Exit;
use crate::failure::Failure;
use crate::{console, interrupt};
use decide::{differs, Side};
use ends::Ends;
use git::Commit;
use position::{first_rounds, position, Place};
use report::{Named, Report, Step};
use rigor_stats::{Direction, LookPlan};
use search::{Decision, Next, Search};
use setup::Setup;
use std::collections::BTreeMap;
use std::time::Instant;
use step_run::{first_line, Bench};

/// A step still inconclusive gets rounds until this many times `-i` per commit.
pub const CAP_FACTOR: usize = 4;

/// Values a side needs before an unpaired comparison can be conclusive at 95%.
const MIN_PER_SIDE: usize = 4;

/// The confidence of the whole sequence of looks at one commit.
const CONFIDENCE: f64 = 0.95;

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
    // Each commit or value is built once in a bisection: the ends and every tested point run
    // in several steps, each start from its build's snapshot. Not when the build time itself
    // is what is bisected.
    if setup.measurement != crate::measurements::ids::APP_BUILD_TIME {
        crate::exec::keep_builds();
    }
    // Its own folder, never one another bisection started in the same second.
    let stem = format!("bisect-{}", crate::clock::now_compact());
    let folder = crate::git::create_own_dir(&args.out_dir, &args.out_dir)
        .and_then(|()| crate::exec::run_folder::create(&args.out_dir, &stem))
        .map_err(|e| {
            Failure::usage(format!(
                "cannot create {}: {e}",
                args.out_dir.join(&stem).display()
            ))
        })?;
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    let mut bench = Bench::new(
        &args.file,
        &args.scenario,
        &setup.measurement,
        args.threshold,
        args.iterations,
        folder,
    );
    bench.var = setup.var.clone();
    let mut bisection = Bisection {
        setup,
        bench,
        steps: Vec::new(),
        culprit_vs_parent: None,
        started,
        ends: Ends::default(),
        seen: BTreeMap::new(),
        direction: None,
    };
    let outcome = bisection.run();
    if !args.keep_worktrees {
        for e in bisection.bench.remove_worktrees() {
            say(&format!("bisect: {e}"));
        }
    }
    let outcome = outcome?;
    let report = bisection.report(&outcome, started.elapsed().as_secs_f64());
    console::out(&report.text());
    if let Some(path) = &args.json {
        report.write_json(path)?;
    }
    Ok(match outcome {
        Outcome::Culprit(_) => Exit::Success,
        Outcome::Interrupted => Exit::Failed,
        _ => Exit::Inconclusive,
    })
}

/// A bisection under way: what it searches, its bench, the steps so far and every value
/// measured (for reuse).
struct Bisection {
    setup: Setup,
    bench: Bench,
    steps: Vec<Step>,
    culprit_vs_parent: Option<Side>,
    started: Instant,
    /// The ends' values from every run so far.
    ends: Ends,
    /// Every value measured of each commit, whatever role it ran in.
    seen: BTreeMap<String, Vec<f64>>,
    /// Which way is better for the measurement (from step 0 when the catalogue does not say).
    direction: Option<Direction>,
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
            self.good().short(),
            self.bad().short(),
            self.bench.threshold
        ));
        let refs = [
            ("good".to_string(), self.good().sha.clone()),
            ("bad".to_string(), self.bad().sha.clone()),
        ];
        let rounds = self.bench.iterations;
        let run = self.bench.run("step-0", &refs, rounds, true)?;
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
        let (g, b) = (run.values("good", &m), run.values("bad", &m));
        self.note_values(&self.good().sha.clone(), &g);
        self.note_values(&self.bad().sha.clone(), &b);
        self.ends.add(&g, &b);
        self.direction = Some(direction_of(&m, &side));
        self.steps.push(Step {
            commit: self.bad().sha.clone(),
            subject: self.bad().subject.clone(),
            decision: if differ { "differ" } else { "no difference" }.into(),
            iterations: run.iterations,
            vs_good: Some(side.clone()),
            vs_bad: None,
            position: None,
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

    /// Measures the commit at `i` interleaved with both ends, a round at a time after the first
    /// look, until its position is on one side of ½ or the cap is reached.
    fn test(&mut self, i: usize, search: &Search) -> Result<Decision, Failure> {
        let c = self.commit(i).clone();
        let k = self.steps.len();
        let steps_left = search.steps_left();
        say(&format!(
            "bisect: step {k} of ~{}: {} commits left, testing {} ({} iterations so far{})",
            k - 1 + steps_left,
            search.left(),
            c.label(),
            self.bench.spent,
            self.eta(self.per_step() * steps_left)
        ));
        let built = self.bench.build(&c.sha);
        // Cut short by Ctrl-C, a build or a run says nothing about the commit: it is not
        // recorded as skipped (the caller stops at the interrupt).
        if interrupt::interrupted() {
            return Ok(Decision::Unknown);
        }
        if let Err(e) = built {
            return Ok(self.skipped(&c, first_line(&e.to_string()), None, 0));
        }
        let refs = [
            ("tested".to_string(), c.sha.clone()),
            ("good".to_string(), self.good().sha.clone()),
            ("bad".to_string(), self.bad().sha.clone()),
        ];
        let m = self.bench.measurement.clone();
        let cap = self.bench.cap;
        let mut plan = LookPlan::new(cap, CONFIDENCE);
        let (mut t, mut g, mut b) = (Vec::new(), Vec::new(), Vec::new());
        let (mut looks, mut iterations, mut json) = (Vec::new(), 0, None);
        let mut rounds = first_rounds(&self.ends.good, &self.ends.bad, self.bench.iterations);
        let (decision, at) = loop {
            let label = match looks.len() {
                0 => format!("step-{k}"),
                n => format!("step-{k}-look-{}", n + 1),
            };
            let run = self.bench.run(&label, &refs, rounds, false)?;
            iterations += run.iterations;
            if interrupt::interrupted() {
                return Ok(Decision::Unknown);
            }
            json.get_or_insert_with(|| run.json.display().to_string());
            if let Some(why) = run.not_measured("tested") {
                let json = Some(run.json.display().to_string());
                return Ok(self.skipped(&c, why, json, iterations));
            }
            t.extend(run.values("tested", &m));
            g.extend(run.values("good", &m));
            b.extend(run.values("bad", &m));
            looks.push(t.len());
            let confidence = plan.confidence_at(&looks);
            let seed = position::seed(&c.sha, looks.len());
            let (pg, pb) = self.ends.pooled(&g, &b);
            let at = position(&t, &pg, &pb, confidence, seed);
            let place = at.as_ref().map(|p| p.place()).unwrap_or(Place::Straddles);
            let decision = match place {
                Place::Good => Some(Decision::Good),
                Place::Bad => Some(Decision::Bad),
                Place::Straddles if t.len() >= cap => Some(Decision::Unknown),
                Place::Straddles => None,
            };
            if let Some(d) = decision {
                break (d, at);
            }
            let more = cap.saturating_sub(t.len()) * 3 + self.per_step() * (steps_left - 1);
            say(&format!(
                "bisect: {} at {} of the way from good to bad after {} rounds: one more round{}",
                c.short(),
                at.as_ref().map(|p| p.text()).unwrap_or_else(|| "?".into()),
                t.len(),
                self.eta(more)
            ));
            rounds = 1;
        };
        self.note_values(&c.sha, &t);
        self.ends.add(&g, &b);
        let word = match decision {
            Decision::Good => "good",
            Decision::Bad => "bad",
            Decision::Skip => "skipped",
            Decision::Unknown => "unknown",
        };
        say(&format!(
            "bisect: {} is {word}: at {} of the way from good to bad ({iterations} iterations)",
            c.short(),
            at.as_ref().map(|p| p.text()).unwrap_or_else(|| "?".into()),
        ));
        let side = |end: &[f64]| self.side(end, &t);
        let (vs_good, vs_bad) = (side(&g), side(&b));
        self.steps.push(Step {
            commit: c.sha.clone(),
            subject: c.subject.clone(),
            decision: word.into(),
            iterations,
            vs_good,
            vs_bad,
            position: at,
            note: None,
            result: json,
        });
        Ok(decision)
    }

    /// `candidate` against `baseline`, judged as a run's comparison would be.
    fn side(&self, baseline: &[f64], candidate: &[f64]) -> Option<Side> {
        let direction = self.direction.unwrap_or(Direction::LowerIsBetter);
        Side::between(baseline, candidate, self.bench.threshold, direction)
    }

    /// Keeps the values measured of `sha`.
    fn note_values(&mut self, sha: &str, values: &[f64]) {
        self.seen
            .entry(sha.to_string())
            .or_default()
            .extend_from_slice(values);
    }

    /// Iterations a step is expected to take: the mean of the steps measured so far, else the
    /// first look's three variants.
    fn per_step(&self) -> usize {
        let done: Vec<usize> = self.steps[1..]
            .iter()
            .filter(|s| s.position.is_some())
            .map(|s| s.iterations)
            .collect();
        if done.is_empty() {
            3 * first_rounds(&self.ends.good, &self.ends.bad, self.bench.iterations)
        } else {
            done.iter().sum::<usize>().div_ceil(done.len())
        }
    }

    /// `, ETA ~2m10s` for `iterations` more at the pace so far (empty before the first).
    fn eta(&self, iterations: usize) -> String {
        if self.bench.spent == 0 {
            return String::new();
        }
        let pace = self.started.elapsed().as_secs_f64() / self.bench.spent as f64;
        format!(
            ", {} elapsed, ETA ~{}",
            report::elapsed(self.started.elapsed().as_secs_f64()),
            report::elapsed(pace * iterations as f64)
        )
    }

    /// Records a commit that could not be measured, and says so.
    fn skipped(&mut self, c: &Commit, why: String, json: Option<String>, n: usize) -> Decision {
        say(&format!("bisect: {} skipped: {why}", c.short()));
        self.steps.push(Step {
            commit: c.sha.clone(),
            subject: c.subject.clone(),
            decision: "skipped".into(),
            iterations: n,
            vs_good: None,
            vs_bad: None,
            position: None,
            note: Some(why),
            result: json,
        });
        Decision::Skip
    }

    /// The culprit at `i` against its parent: the change it made, from the values the search
    /// measured of both, with rounds of the two interleaved added (a few at a time, up to the
    /// cap) only while that change is inconclusive.
    fn against_parent(&mut self, i: usize) -> Result<Option<Side>, Failure> {
        let (parent, culprit) = (self.commit(i - 1).clone(), self.commit(i).clone());
        let seen = |c: &Commit| self.seen.get(&c.sha).cloned().unwrap_or_default();
        let (mut p, mut c) = (seen(&parent), seen(&culprit));
        let refs = [
            ("parent".to_string(), parent.sha.clone()),
            ("culprit".to_string(), culprit.sha.clone()),
        ];
        let m = self.bench.measurement.clone();
        let mut added = 0;
        loop {
            let side = self.side(&p, &c);
            let settled = side
                .as_ref()
                .is_some_and(|s| s.verdict != crate::result::Verdict::Inconclusive);
            if settled || added >= self.bench.cap {
                say(&format!(
                    "bisect: first bad commit {}; against its parent {}: {m} {}",
                    culprit.label(),
                    parent.short(),
                    side.as_ref().map(Side::text).unwrap_or_else(|| "?".into())
                ));
                return Ok(side);
            }
            // The fewest values a side needs before a comparison can be conclusive.
            let rounds = MIN_PER_SIDE.saturating_sub(p.len().min(c.len())).max(1);
            say(&format!(
                "bisect: first bad commit {}; measuring it against its parent {} ({rounds} more \
                 rounds{})",
                culprit.label(),
                parent.short(),
                self.eta(2 * rounds)
            ));
            let label = match added {
                0 => "culprit".to_string(),
                n => format!("culprit-{n}"),
            };
            let run = self.bench.run(&label, &refs, rounds, false)?;
            if interrupt::interrupted() {
                return Ok(None);
            }
            added += rounds;
            p.extend(run.values("parent", &m));
            c.extend(run.values("culprit", &m));
        }
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
            var: self.setup.var.clone(),
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
            Outcome::Culprit(i) if commits[*i].value => (
                "culprit",
                format!("first bad value: {}", commits[*i].subject),
            ),
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
                    commits[*unknown].short(),
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

/// Which way is better for `m`: the catalogue's, else the way that makes bad's change against
/// good the regression step 0 found (an improvement when it found one).
fn direction_of(m: &str, bad_vs_good: &Side) -> Direction {
    if let Some(info) = crate::measurements::info(m) {
        return info.direction;
    }
    let up = bad_vs_good.change_pct.unwrap_or(0.0) > 0.0;
    let improvement = bad_vs_good.verdict == crate::result::Verdict::Improvement;
    if up != improvement {
        Direction::LowerIsBetter
    } else {
        Direction::HigherIsBetter
    }
}

/// A progress line on stderr.
fn say(text: &str) {
    console::err(text);
}
