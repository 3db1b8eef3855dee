//! The `rigor.run.v1` result document: what `--json` writes and `rigor compare` reads back.
//! Field names are a contract scripts rely on; add fields, never rename them.

mod coded;
mod cross_check;
mod exclusion;
mod limit;
mod profile;
mod series;
mod status;
mod warning;
#[cfg(test)]
mod warning_docs;

pub use cross_check::{CrossCheck, Finding};
pub use exclusion::Exclusion;
pub use limit::Outcome as LimitOutcome;
pub use profile::{FunctionShare, ProfileComparison, RowProfile};
pub use series::{LoadSeries, RowFigure, Series};
pub use status::{RunStatus, UnknownVerdict, Verdict};
pub use warning::{Warning, WarningKind};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Schema tag written into every result so readers can refuse what they do not understand.
pub const SCHEMA: &str = "rigor.run.v1";

/// One `rigor run` invocation: every row of every selected scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub rigor_version: String,
    /// Scenario name; several names joined by `,` when one invocation ran several scenarios.
    pub scenario: String,
    pub profile: String,
    pub description: Option<String>,
    pub started_at: String,
    #[serde(default)]
    pub finished_at: Option<String>,
    /// `running` while iterations are still being written, then `complete`, `interrupted` or `failed`.
    #[serde(default)]
    pub status: RunStatus,
    /// Seed of the shuffled variant order, so `--seed` can replay it.
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub environment: serde_json::Value,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    #[serde(default)]
    pub builds: Vec<BuildRecord>,
    pub rows: Vec<Row>,
    #[serde(default)]
    pub comparisons: Vec<Comparison>,
    /// The config's `[measurements.ID]` declarations, so `rigor compare` judges self-reported
    /// ids the way the run did.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub measurements: crate::declarations::Declarations,
    /// With `--until-conclusive`: the rounds done at each look and the most allowed, so the
    /// comparisons (and a re-analysis of the saved result) judge at the last look's confidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<Sequential>,
    /// The smallest change each compared group could tell from no change, on the primary
    /// measurement, said up front and kept with the result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise_floor: Vec<NoiseFloor>,
    /// With `--cross-check TOOL`: each compared measurement of the engine against the tool,
    /// agreeing, disagreeing beyond noise, or undecided, with the known cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_check: Option<CrossCheck>,
    /// Each limit (`[[limits]]`, `--limit`) checked against each row that measured it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<LimitOutcome>,
    /// With CPU profiles: each candidate's profile against its baseline's, per compared row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<ProfileComparison>,
}

/// The looks of a `--until-conclusive` run: each look tests at a nominal confidence above the
/// overall one, so repeated looks keep the false-alarm rate of a single test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sequential {
    /// Rounds done at each look, ascending (the planned rounds, then one more per added round).
    pub looks: Vec<usize>,
    /// `--until-conclusive MAX`: the rounds the run may grow to.
    pub max: usize,
}

/// The noise floor of one compared group on one measurement: the smallest change its pairs (or,
/// without variants, its iterations) tell from no change 4 times in 5 at 95% confidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseFloor {
    pub scenario: String,
    /// The matrix values of the group.
    pub row: BTreeMap<String, String>,
    pub measurement: String,
    /// `paired` (spread of within-round ratios of the first two variants) or `unpaired` (spread
    /// of one row's iterations, as two independent samples of that spread would compare).
    pub method: Method,
    /// Pairs (paired) or kept iterations per side (unpaired) the floor is quoted for.
    pub pairs: usize,
    /// Robust spread of the log ratios (or log values), as a % change.
    pub spread_pct: f64,
    /// The smallest change told from no change 4 times in 5 at this n; infinite (null in the
    /// JSON) when no change can be at this n (fewer pairs than the test can ever call).
    #[serde(deserialize_with = "null_as_infinity")]
    pub detectable_pct: f64,
    /// `--threshold` of the run, in %.
    pub threshold_pct: f64,
    /// The smallest change that earns a verdict beyond `--threshold` 4 times in 5 at this n;
    /// infinite (null) like `detectable_pct`.
    #[serde(deserialize_with = "null_as_infinity")]
    pub verdict_pct: f64,
    /// Pairs (or iterations per side) needed to tell a change of the threshold; null when the
    /// spread is unknown or the threshold is 0.
    pub pairs_for_threshold: Option<usize>,
}

/// A figure JSON wrote as null because it was infinite (JSON has no infinity), read back as
/// infinite: without this a run of a few pairs, whose floor is infinite, could not be read
/// again by `rigor compare` or `rigor history import`.
fn null_as_infinity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// How one application job was built for one variant (built once, not per iteration).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildRecord {
    pub job: String,
    pub variant: Option<String>,
    pub command: Option<String>,
    pub dir: String,
    pub artifact: Option<String>,
    pub build_time_ms: Option<f64>,
    pub size_kib: Option<f64>,
    pub log: Option<String>,
    /// Every variant that runs this build (`variant` is the first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// The artifact's content hash (`sha256:…`): every start of these variants ran exactly it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_hash: Option<String>,
    /// Where the copy of the artifact every start is checked against is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_snapshot: Option<String>,
    /// Whether the build rewrote the artifact (false: it was up to date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten: Option<bool>,
    /// How each cargo invocation of the build is optimised: `release: opt-level 3 (…)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub optimisation: Vec<String>,
}

/// What identifies a row wherever rows meet (the plan, the schedule, saved files compared with
/// each other): its scenario, its matrix values and its variant. One key, so grouping and
/// matching cannot disagree.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey {
    pub scenario: String,
    pub variables: BTreeMap<String, String>,
    pub variant: Option<String>,
}

impl RowKey {
    /// The same row in every variant: variants of one group are compared with each other.
    pub fn group(&self) -> RowKey {
        RowKey {
            variant: None,
            ..self.clone()
        }
    }

    /// The matrix values and variant for people (`connections=64 slow`); empty when the row has
    /// neither.
    pub fn detail(&self) -> String {
        let mut parts: Vec<String> = self
            .variables
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        parts.extend(self.variant.clone());
        parts.join(" ")
    }

    /// The key a comparison's `row` map names: its matrix values, plus the `scenario` and
    /// `variant` entries `rigor compare` writes into it; `scenario` stands in when the map has
    /// no scenario of its own.
    pub fn of_map(scenario: &str, row: &BTreeMap<String, String>) -> RowKey {
        RowKey {
            scenario: row
                .get("scenario")
                .cloned()
                .unwrap_or_else(|| scenario.to_string()),
            variables: row
                .iter()
                .filter(|(k, _)| *k != "scenario" && *k != "variant")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            variant: row.get("variant").cloned(),
        }
    }

    /// The whole key for people: `plaintext connections=64 slow`.
    pub fn label(&self) -> String {
        match self.detail() {
            d if d.is_empty() => self.scenario.clone(),
            d if self.scenario.is_empty() => d,
            d => format!("{} {d}", self.scenario),
        }
    }
}

/// One combination of matrix values (and variant): N fresh iterations and their summary.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    #[serde(default)]
    pub scenario: String,
    pub variables: BTreeMap<String, String>,
    pub variant: Option<String>,
    pub iterations: Vec<Iteration>,
    #[serde(default)]
    pub summary: BTreeMap<String, Summary>,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// Why the row's build failed; such a row ran no iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_error: Option<String>,
    /// Its CPU profile, when profiles were taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<RowProfile>,
}

impl Row {
    /// The row's key; `scenario` names it when the row does not (results written before rows
    /// carried their scenario).
    pub fn key_in(&self, scenario: &str) -> RowKey {
        RowKey {
            scenario: if self.scenario.is_empty() {
                scenario.to_string()
            } else {
                self.scenario.clone()
            },
            variables: self.variables.clone(),
            variant: self.variant.clone(),
        }
    }

    /// A short human name: its matrix values and variant (`connections=64 slow`), or its
    /// scenario when it has neither.
    pub fn label(&self) -> String {
        match self.key_in("").detail() {
            d if d.is_empty() => self.scenario.clone(),
            d => d,
        }
    }

    /// The iterations every statistic stands on: included and successful.
    pub fn kept_iterations(&self) -> impl Iterator<Item = &Iteration> {
        self.iterations
            .iter()
            .filter(|it| !it.excluded.is_excluded() && it.error.is_none())
    }

    /// How many iterations count: neither excluded nor failed.
    pub fn kept(&self) -> usize {
        self.kept_iterations().count()
    }

    /// How many iterations `--exclude` left out (failed ones aside).
    pub fn excluded_count(&self) -> usize {
        self.iterations
            .iter()
            .filter(|it| it.excluded.is_excluded() && it.error.is_none())
            .count()
    }

    /// Values of one measurement over the included, successful iterations.
    pub fn values(&self, id: &str) -> Vec<f64> {
        self.kept_iterations()
            .filter_map(|it| it.measurements.get(id).copied())
            .collect()
    }
}

/// One fresh start of the application plus one measured load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Iteration {
    /// 0-based position within its row (the JSON contract); people see [`Iteration::number`].
    pub index: usize,
    /// Position in the run's execution order (shows the interleaving; `--seed` replays it).
    #[serde(default)]
    pub sequence: usize,
    /// `false` when it counts, else why not (`order`, `interference`).
    pub excluded: Exclusion,
    /// Why the iteration failed; failed iterations carry what was measured before the fault.
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub pid: Option<i32>,
    #[serde(default)]
    pub log: Option<String>,
    pub measurements: BTreeMap<String, f64>,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    pub outside_window: OutsideWindow,
    /// The load engine's full report (histogram percentiles, timeline, status codes…).
    #[serde(default)]
    pub load: Option<serde_json::Value>,
    /// Where the load went: the path to the target and who owned the listening socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkPath>,
    /// What the machine did during this iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineDuring>,
    /// Outcome of `priority = "high"`: `raised` or why it could not be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// With `--drop-caches`: whether the page cache was dropped before this iteration started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caches_dropped: Option<bool>,
    /// The application's and the load's figures over time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// With `metrics = URL`: how many times the page was requested (failed attempts included).
    /// These requests reach the application but are in neither the load's figures nor
    /// `outside_window`, which counts only what rigor sent to the load's own URL around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_scrapes: Option<u64>,
    /// With `tool = "…"` on the load job: the tool that drove the load, its version, command
    /// line and raw output ([`crate::tool::ToolReport`]); `load` is then null.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::tool::sorted"
    )]
    pub tool: Option<crate::tool::ToolRecord>,
    /// With `find_rate` on the load job: the search for the rate the service holds (the
    /// objective, the answer and its interval, every probe); `load` is then null.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<rigor_load::capacity::Capacity>,
    /// Figures a command reported for rows of their own; the runner moves each into its row.
    #[serde(skip)]
    pub row_figures: Vec<RowFigure>,
    /// What a command's output said about its figures (unit, direction, label); the runner
    /// adds them to the run's declarations where the config is silent.
    #[serde(skip)]
    pub declared: crate::declarations::Declarations,
}

/// Where the load went, relative to the application (a proxy or another host changes what is measured).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NetworkPath {
    /// `loopback`, `local interface` or `other host`.
    pub path: String,
    pub target: String,
    /// `PID (comm)` of each process holding the listening socket.
    pub owners: Vec<String>,
    /// Whether the owner is the application or one of its descendants.
    pub owned_by_app: bool,
}

/// Machine counters across one iteration: CPU stolen by a hypervisor, thermal throttling.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MachineDuring {
    pub steal_pct: f64,
    pub busy_pct: f64,
    #[serde(default)]
    pub throttle_events: Option<u64>,
    /// CPU used by processes other than the application and rigor, in % of the machine's CPU
    /// time over the iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreign_pct: Option<f64>,
    /// Share of the iteration some task waited for a CPU (PSI `cpu some`), in %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_pct: Option<f64>,
    /// Mean number of runnable tasks over the iteration (rigor's and the application's included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_queue: Option<f64>,
    /// Mean CPU clock over the iteration, in MHz, where the kernel exposes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freq_mhz: Option<f64>,
    /// One figure for how much the rest of the machine interfered: steal + foreign CPU, in %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interference_pct: Option<f64>,
    /// Time the application's threads waited in a run queue for a CPU, per unit of CPU time
    /// they got (/proc/PID/task/TID/schedstat): unlike a share of the machine it keeps rising
    /// when the machine is already fully busy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_wait_per_cpu: Option<f64>,
    /// The same for the load client (rigor's engine or the load tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_wait_per_cpu: Option<f64>,
}

impl Iteration {
    /// The 1-based number people see for this iteration: progress lines, log file names,
    /// reports, warnings and the CSV `iteration` column all use it.
    pub fn number(&self) -> usize {
        self.index + 1
    }

    /// An iteration about to run (or that failed before it could): nothing measured yet.
    pub fn new(index: usize, sequence: usize) -> Self {
        Iteration {
            index,
            sequence,
            excluded: Exclusion::Kept,
            error: None,
            pid: None,
            log: None,
            measurements: BTreeMap::new(),
            warnings: Vec::new(),
            outside_window: OutsideWindow::default(),
            load: None,
            network: None,
            machine: None,
            priority: None,
            caches_dropped: None,
            series: None,
            metrics_scrapes: None,
            tool: None,
            capacity: None,
            row_figures: Vec::new(),
            declared: Default::default(),
        }
    }
}

/// Requests the app received outside the measured window: readiness probes, validation, warmup.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct OutsideWindow {
    pub requests: u64,
    pub bytes: u64,
}

/// Every summary carries its noise: n, mean, median, stdev, CV, min, max.
pub use rigor_stats::Summary;

/// One measurement of one candidate against the baseline, with its interval and verdict.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    /// The scenario both rows belong to, so comparisons of several scenarios stay apart.
    #[serde(default)]
    pub scenario: String,
    /// The matrix values of the compared rows.
    #[serde(default)]
    pub row: BTreeMap<String, String>,
    pub measurement: String,
    pub baseline: String,
    pub candidate: String,
    pub baseline_median: Option<f64>,
    pub candidate_median: Option<f64>,
    /// candidate median / baseline median − 1, in %: the change of the two medians beside it.
    pub change_pct: Option<f64>,
    /// Hodges–Lehmann interval of the ratio (the typical pairwise change), in %.
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// The Hodges–Lehmann point estimate the interval is built around, in %.
    #[serde(default)]
    pub shift_pct: Option<f64>,
    /// Mann–Whitney two-sided p-value (exact for small samples, ties included).
    pub p_value: Option<f64>,
    /// `higher` or `lower` is better; `null` when the id is neither known nor declared (then the
    /// verdict is `inconclusive` and the note says how to declare it).
    #[serde(default)]
    pub direction: Option<String>,
    /// `regression`, `improvement`, `no change` or `inconclusive`.
    pub verdict: Verdict,
    /// Why the verdict is what it is (too few iterations, how many more would settle it…).
    #[serde(default)]
    pub note: Option<String>,
    /// `paired` (variants of one run compared round by round: `change_pct` is then the median
    /// within-round change, the interval and p the Wilcoxon signed-rank ones) or `unpaired`
    /// (two independent samples, Mann–Whitney); absent in results older than the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    /// How many rounds were paired (paired comparisons only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// Confidence of the interval and the verdict (0.95, or the nominal level of the last look
    /// of `--until-conclusive`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// A paired comparison adjusted for the rounds' measured interference, shown beside the
    /// verdict (which stays on the unadjusted figures); absent when interference was not
    /// measured in every paired round or did not vary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjusted: Option<Adjusted>,
    /// The absolute floor, in the measurement's unit, the verdict was judged on when it is wider
    /// than the threshold at this baseline (a page cache of a few KiB, a thread or two): the
    /// change is then shown in the unit, not as a percentage. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<f64>,
}

/// The within-round change at equal interference on both sides: the part of the log ratios
/// that the candidate's minus the baseline's interference explains removed (CUPED-style).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adjusted {
    /// Change of the log ratio per percentage point of interference difference.
    pub theta: f64,
    /// Hodges–Lehmann estimate of the adjusted within-round change, in %.
    pub change_pct: f64,
    /// Its signed-rank interval at the comparison's confidence, in %; null when unbounded.
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Share of the log ratios' variance the adjustment removed (out of sample): negative when
    /// interference explains nothing and the adjustment only adds noise.
    pub variance_reduction: f64,
}

/// How a comparison's two samples were compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Round by round: within-round ratios of one run's interleaved variants.
    Paired,
    /// Two independent samples.
    Unpaired,
}

impl Comparison {
    /// The compared row (for `rigor compare`, with its variant): what a table heading or a
    /// regression line names.
    pub fn row_key(&self) -> RowKey {
        RowKey::of_map(&self.scenario, &self.row)
    }

    /// A comparison that carries only its verdict (tests of what reports do with one build it).
    pub fn verdict_only(
        row: &[(&str, &str)],
        measurement: &str,
        baseline: &str,
        candidate: &str,
        verdict: Verdict,
    ) -> Comparison {
        Comparison {
            scenario: String::new(),
            row: row
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            measurement: measurement.into(),
            baseline: baseline.into(),
            candidate: candidate.into(),
            baseline_median: None,
            candidate_median: None,
            change_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
            shift_pct: None,
            p_value: None,
            direction: None,
            verdict,
            note: None,
            method: None,
            pairs: None,
            confidence: None,
            adjusted: None,
            floor: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RowKey;

    #[test]
    fn labels_put_the_scenario_first_and_the_variant_last() {
        let key = RowKey {
            scenario: "plaintext".into(),
            variables: [("connections".to_string(), "64".to_string())].into(),
            variant: Some("slow".into()),
        };
        assert_eq!(key.detail(), "connections=64 slow");
        assert_eq!(key.label(), "plaintext connections=64 slow");
        assert_eq!(key.group().label(), "plaintext connections=64");
        let bare = RowKey {
            scenario: "plaintext".into(),
            variables: Default::default(),
            variant: None,
        };
        assert_eq!(bare.label(), "plaintext");
    }

    #[test]
    fn a_comparison_map_names_its_scenario_and_variant() {
        let map: std::collections::BTreeMap<String, String> = [
            ("connections", "64"),
            ("scenario", "json"),
            ("variant", "slow"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(
            RowKey::of_map("plaintext", &map).label(),
            "json connections=64 slow"
        );
        let bare = [("connections".to_string(), "64".to_string())].into();
        assert_eq!(
            RowKey::of_map("plaintext", &bare).label(),
            "plaintext connections=64"
        );
    }

    #[test]
    fn results_of_other_versions_load_with_their_statuses_kinds_and_verdicts() {
        use super::{RunResult, RunStatus, Verdict, WarningKind};
        let saved = |status: &str| {
            format!(
                r#"{{"schema":"rigor.run.v1","rigor_version":"0.0.1","scenario":"s","profile":"",
                "description":null,"started_at":"t",{status}
                "warnings":[{{"kind":"gremlins","message":"m","advice":"a"}},
                            {{"kind":"steal","message":"m"}}],
                "rows":[],"comparisons":[{{"measurement":"load.rps","baseline":"a","candidate":"b",
                "baseline_median":1.0,"candidate_median":1.0,"change_pct":0.0,"ci_low_pct":null,
                "ci_high_pct":null,"p_value":null,"verdict":"no change"}}]}}"#
            )
        };
        // Written before rigor recorded a status: none at all.
        let old: RunResult = serde_json::from_str(&saved("")).unwrap();
        assert_eq!(old.status, RunStatus::Unrecorded);
        assert!(!old.status.says_unfinished());
        assert_eq!(
            old.warnings[0].kind,
            WarningKind::Other("gremlins".to_string())
        );
        assert_eq!(old.warnings[1].kind, WarningKind::Steal);
        assert_eq!(old.comparisons[0].verdict, Verdict::NoChange);
        let empty: RunResult = serde_json::from_str(&saved(r#""status":"","#)).unwrap();
        assert_eq!(empty.status, RunStatus::Unrecorded);
        let newer: RunResult = serde_json::from_str(&saved(r#""status":"paused","#)).unwrap();
        assert_eq!(newer.status, RunStatus::Other("paused".to_string()));
        // Written back, every value reads as it was read.
        let again = serde_json::to_value(&newer).unwrap();
        assert_eq!(again["status"], "paused");
        assert_eq!(again["warnings"][0]["kind"], "gremlins");
        assert_eq!(again["comparisons"][0]["verdict"], "no change");
    }
}
