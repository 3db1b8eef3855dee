//! Turns a scenario into rows: matrix expansion, variant overrides and variable layers. Every
//! problem of every row is gathered (see `resolve_app`, `resolve_load` and `role` for the
//! values), so one run lists them all.

use crate::config::ValueError;

use super::model::{Ready, RowPlan, ScenarioPlan, StackWalk, Work};
use super::problems::Problems;
use super::raw::{RawJob, RawProfile, RawScenario, Scalar};
use super::{Config, PlanRequest, Vars};
use indexmap::IndexMap;
use rigor_model::duration::parse_duration;
use std::collections::BTreeMap;
use std::time::Duration;

/// The most rows (matrix combinations × variants) a scenario may have; counted before any row
/// is made, so a matrix typo cannot exhaust memory while planning.
pub const MAX_ROWS: u128 = 10_000;

fn text_layer(map: &IndexMap<String, Scalar>) -> Vec<(&String, String)> {
    map.iter().map(|(k, v)| (k, v.as_text())).collect()
}

/// What every row of one scenario is made from.
struct RowSource<'a> {
    scenario: &'a str,
    s: &'a RawScenario,
    profile: &'a RawProfile,
    req: &'a PlanRequest,
    /// The job started each iteration: the application, or the command job; `None` when the
    /// scenario names no job (already reported when the file was read).
    app: Option<(&'a str, &'a RawJob)>,
    /// The load job; `None` for a command scenario, or when it names no job.
    load: Option<(&'a str, &'a RawJob)>,
    /// Whether the scenario runs a command job instead of an application under load.
    command: bool,
    /// Whether both jobs can play their roles (a job without `command` or `url` cannot: that
    /// is reported when the file is read); otherwise rows are only checked, never made.
    complete: bool,
    /// Jobs no scenario names, checked in this scenario's place when it names a job that
    /// does not exist (most likely one of them, misspelt), so their own problems are listed
    /// with the bad name instead of after it is fixed.
    stand_ins: Vec<(&'a str, &'a RawJob)>,
}

/// Where a variable that overrides a load key was set, so its error points there.
#[derive(Debug, Clone)]
pub(super) enum Origin {
    Matrix,
    Variant(String),
    Cli,
}

impl Config {
    /// Resolves one scenario for a profile, `--var`s and a variant selection; every problem
    /// found in any row is returned, not just the first.
    pub fn plan(&self, scenario: &str, req: &PlanRequest) -> Result<ScenarioPlan, Problems> {
        let s = self.raw.scenarios.get(scenario).ok_or_else(|| {
            format!(
                "{}: no scenario named `{scenario}` (scenarios: {})",
                self.path.display(),
                self.scenario_names().join(", ")
            )
        })?;
        // Roles that name no job, or a job that cannot play them, are reported when the file
        // is read; the rest of the scenario is still checked, and so are the jobs no scenario
        // names, in the missing job's place.
        let command = self.command_job_of(s);
        let app = command
            .or(s.application.as_deref())
            .and_then(|j| Some((j, self.raw.jobs.get(j)?)));
        let load = match command {
            Some(_) => None,
            None => s
                .load
                .as_deref()
                .and_then(|j| Some((j, self.raw.jobs.get(j)?))),
        };
        let complete = app.is_some_and(|(_, job)| job.starts_an_application())
            && (command.is_some() || load.is_some_and(|(_, job)| job.url.is_some()));
        let stand_ins = if complete {
            Vec::new()
        } else {
            self.unnamed_jobs(app.is_none(), command.is_none() && load.is_none())
        };
        let mut p = Problems::default();
        let profile = self.profile(req, &mut p);
        let variants = self.select_variants(scenario, s, req, &mut p);
        let too_many = !self.row_count_fits(scenario, s, variants.len(), &mut p);
        let iterations = self.scenario_iterations(scenario, s, &mut p);
        let cpu_profile = self.cpu_profile(scenario, s, req, &profile, &mut p);
        let mut rows = Vec::new();
        // Too many rows, or a variable with no values (both reported): check the jobs with the
        // first combination only, to list their problems.
        let combos = if too_many || s.matrix.values().any(Vec::is_empty) {
            let first = s
                .matrix
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.first()?.as_text())));
            vec![first.collect()]
        } else {
            matrix_rows(&s.matrix)
        };
        let row = RowSource {
            scenario,
            s,
            profile: &profile,
            req,
            app,
            load,
            command: command.is_some(),
            complete,
            stand_ins,
        };
        for combo in combos {
            for variant in &variants {
                if let Some(r) = self.row(&row, &combo, variant.as_deref(), &mut p) {
                    rows.push(r);
                }
            }
        }
        if !complete {
            return Err(p);
        }
        p.or_ok(ScenarioPlan {
            iterations,
            cpu_profile,
            variants,
            rows,
        })
    }

    /// Jobs that no scenario names and that could fill a missing role: with `command` for a
    /// missing application (or command job), with `url` for a missing load.
    fn unnamed_jobs(&self, app: bool, load: bool) -> Vec<(&str, &RawJob)> {
        let named = |name: &str| {
            self.raw.scenarios.values().any(|s| {
                [&s.application, &s.load, &s.command]
                    .iter()
                    .any(|j| j.as_deref() == Some(name))
            })
        };
        self.raw
            .jobs
            .iter()
            .filter(|(name, _)| !named(name))
            .filter(|(_, job)| {
                (app && job.starts_an_application() && job.url.is_none())
                    || (load && job.url.is_some() && job.command.is_none())
            })
            .map(|(name, job)| (name.as_str(), job))
            .collect()
    }

    /// `cpu_profile` of the scenario, else of the profile: `true` (frame pointers), `"dwarf"`,
    /// or `false`/absent; anything else is reported where it was written.
    fn cpu_profile(
        &self,
        scenario: &str,
        s: &RawScenario,
        req: &PlanRequest,
        profile: &RawProfile,
        p: &mut Problems,
    ) -> Option<StackWalk> {
        let (table, value) = match (&s.cpu_profile, &profile.cpu_profile) {
            (Some(v), _) => (format!("scenarios.{scenario}"), v),
            (None, Some(v)) => (format!("profiles.{}", req.profile), v),
            (None, None) => return None,
        };
        match value {
            Scalar::Bool(false) => None,
            Scalar::Bool(true) => Some(StackWalk::FramePointer),
            Scalar::Text(t) if t == "dwarf" => Some(StackWalk::Dwarf),
            Scalar::Text(t) if t == "fp" || t == "frame-pointer" => Some(StackWalk::FramePointer),
            other => {
                p.add(self.error_at(
                    &table,
                    Some("cpu_profile"),
                    &format!("`{}` is not true, false or \"dwarf\"", other.as_text()),
                ));
                None
            }
        }
    }

    /// The requested profile; `local` needs no table.
    fn profile(&self, req: &PlanRequest, p: &mut Problems) -> RawProfile {
        match self.raw.profiles.get(&req.profile) {
            Some(pr) => pr.clone(),
            None if req.profile == "local" => Default::default(),
            None => {
                let known: Vec<&str> = self.raw.profiles.keys().map(String::as_str).collect();
                p.add(format!(
                    "{}: no profile named `{}` (profiles: {})",
                    self.path.display(),
                    req.profile,
                    if known.is_empty() {
                        "none; `local` is the default".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
                RawProfile::default()
            }
        }
    }

    /// Whether the scenario's rows (matrix combinations × variants) are within [`MAX_ROWS`];
    /// counted before any row is made.
    fn row_count_fits(
        &self,
        scenario: &str,
        s: &RawScenario,
        variants: usize,
        p: &mut Problems,
    ) -> bool {
        let count = s.matrix.values().fold(variants.max(1) as u128, |n, v| {
            n.saturating_mul(v.len() as u128)
        });
        if count <= MAX_ROWS {
            return true;
        }
        let sizes: Vec<String> = s
            .matrix
            .iter()
            .map(|(k, v)| format!("{k} ({})", v.len()))
            .collect();
        p.add(self.error_at(
            &format!("scenarios.{scenario}"),
            Some("matrix"),
            &format!(
                "{count} rows ({}{}), more than the limit of {MAX_ROWS}: try fewer values, \
                 or split the matrix into scenarios",
                sizes.join(" × "),
                if variants > 1 {
                    format!(" × {variants} variants")
                } else {
                    String::new()
                }
            ),
        ));
        false
    }

    /// The scenario's `iterations`, within the limit per row.
    fn scenario_iterations(
        &self,
        scenario: &str,
        s: &RawScenario,
        p: &mut Problems,
    ) -> Option<usize> {
        match s.iterations {
            Some(n) if n > super::MAX_ITERATIONS => {
                p.add(self.error_at(
                    &format!("scenarios.{scenario}"),
                    Some("iterations"),
                    &format!("{n} is more than the limit of {}", super::MAX_ITERATIONS),
                ));
                None
            }
            n => n,
        }
    }

    /// One row: the variable layers (config, profile, scenario, matrix, variant, `--var`) and
    /// both jobs resolved with them.
    fn row(
        &self,
        src: &RowSource,
        combo: &[(String, String)],
        variant: Option<&str>,
        p: &mut Problems,
    ) -> Option<RowPlan> {
        let (scenario, s, req) = (src.scenario, src.s, src.req);
        let raw_variant = variant.map(|v| &s.variants[v]);
        let mut vars = Vars::default();
        vars.layer(text_layer(&self.raw.variables));
        vars.layer(text_layer(&src.profile.variables));
        vars.layer(text_layer(&s.variables));
        let mut overrides: IndexMap<String, (String, Origin)> = IndexMap::new();
        for (k, v) in combo {
            vars.set(k, v);
            overrides.insert(k.clone(), (v.clone(), Origin::Matrix));
        }
        if let (Some(rv), Some(name)) = (raw_variant, variant) {
            vars.layer(text_layer(&rv.variables));
            for (k, v) in &rv.variables {
                overrides.insert(k.clone(), (v.as_text(), Origin::Variant(name.to_string())));
            }
        }
        for (k, v) in &req.cli_vars {
            vars.set(k, v);
            overrides.insert(k.clone(), (v.clone(), Origin::Cli));
        }
        vars.set("scenario", scenario);
        vars.set("variant", variant.unwrap_or(""));
        let app_of = |name: &str, job: &RawJob, p: &mut Problems| {
            self.resolve_app(
                name,
                job,
                raw_variant.map(|rv| (variant.unwrap_or(""), scenario, rv)),
                src.profile,
                req,
                &vars,
                p,
            )
        };
        let load_of = |name: &str, job: &RawJob, p: &mut Problems| {
            self.resolve_load(name, job, scenario, src.profile, req, &vars, &overrides, p)
        };
        for &(name, job) in &src.stand_ins {
            if job.url.is_some() {
                load_of(name, job, p);
            } else {
                app_of(name, job, p);
                if src.command {
                    self.resolve_command(name, job, &vars, p);
                }
            }
        }
        let app = src.app.map(|(name, job)| (name, job, app_of(name, job, p)));
        let load = src.load.map(|(name, job)| load_of(name, job, p));
        if !src.complete {
            return None;
        }
        let (app_name, app_job, mut app) = app?;
        let work = match load {
            Some(load) => {
                if app.ready == Ready::Tcp(String::new()) {
                    app.ready = Ready::Tcp(if load.addr.ip().is_unspecified() {
                        // Not resolved here: the application's host resolves the name itself.
                        rigor_load::url_host_port(&load.spec.url)
                            .map(|(h, port)| {
                                if h.contains(':') {
                                    format!("[{h}]:{port}")
                                } else {
                                    format!("{h}:{port}")
                                }
                            })
                            .unwrap_or_else(|_| load.addr.to_string())
                    } else {
                        load.addr.to_string()
                    });
                }
                if load.in_container && load.hosts.iter().any(|h| h.name != super::LOCAL) {
                    p.add(self.error_at(
                        &format!("profiles.{}", req.profile),
                        Some("load"),
                        "the load job runs inside the application's container \
                         (`network = \"container\"`), on this machine: other load hosts \
                         cannot enter it",
                    ));
                }
                if let (true, Some(h)) = (load.in_container, &app.host) {
                    p.add(self.error_at(
                        &format!("jobs.{}", src.load.map(|l| l.0).unwrap_or_default()),
                        Some("network"),
                        &format!(
                            "`container` runs the load inside the application's container, \
                             which runs on host `{}`, not here: publish its port (`publish`) or \
                             use `network = \"host\"` and point `url` at host `{}`",
                            h.name, h.name
                        ),
                    ));
                }
                if load.in_container && app.container.is_none() {
                    p.add(self.error_at(
                        &format!("jobs.{}", src.load.map(|l| l.0).unwrap_or_default()),
                        Some("network"),
                        &format!(
                            "`container` runs the load inside the application's container, \
                             and `{app_name}` is no container: give it `image` or `dockerfile`"
                        ),
                    ));
                }
                Work::Load(Box::new(load))
            }
            None if !src.command => return None,
            None => {
                let work = self.resolve_command(app_name, app_job, &vars, p);
                if let Some(h) = &app.host {
                    p.add(self.error_at(
                        &format!("profiles.{}", req.profile),
                        Some("application"),
                        &format!(
                            "scenario `{scenario}` runs a command job (`{}` has no load), which \
                             runs on this machine: host `{}` serves applications under load",
                            app_name, h.name
                        ),
                    ));
                }
                for rule in &work.extract {
                    if let Some(row) = rule.row.as_ref().filter(|r| s.matrix.contains_key(*r)) {
                        p.add(self.error_at(
                            &format!("jobs.{}.extract.{}", app_name, rule.name),
                            Some("row"),
                            &format!(
                                "`{row}` is also a matrix variable of scenario `{scenario}`: \
                                 name the reported row differently"
                            ),
                        ));
                    }
                }
                Work::Command(work)
            }
        };
        Some(RowPlan {
            variables: combo.iter().cloned().collect::<BTreeMap<_, _>>(),
            variant: variant.map(str::to_string),
            app,
            work,
        })
    }

    /// The selected variants; unknown or repeated names are recorded and left out.
    fn select_variants(
        &self,
        scenario: &str,
        s: &RawScenario,
        req: &PlanRequest,
        p: &mut Problems,
    ) -> Vec<Option<String>> {
        let declared: Vec<String> = s.variants.keys().cloned().collect();
        match &req.variants {
            None if declared.is_empty() => vec![None],
            None => declared.into_iter().map(Some).collect(),
            Some(wanted) => {
                let mut out = Vec::new();
                for w in wanted {
                    if !s.variants.contains_key(w) {
                        p.add(format!(
                            "{}: scenario `{scenario}` has no variant `{w}` (variants: {})",
                            self.path.display(),
                            if declared.is_empty() {
                                "none".to_string()
                            } else {
                                declared.join(", ")
                            }
                        ));
                    } else if out.contains(&Some(w.clone())) {
                        // Named twice: the flag check reports it; plan it once.
                    } else {
                        out.push(Some(w.clone()));
                    }
                }
                out
            }
        }
    }

    pub(super) fn expand(
        &self,
        vars: &Vars,
        table: &str,
        key: &str,
        text: &str,
    ) -> Result<String, ValueError> {
        vars.expand(text)
            .map_err(|e| self.error_at(table, Some(key), &e.0).into())
    }

    pub(super) fn duration(
        &self,
        table: &str,
        key: &str,
        text: &str,
    ) -> Result<Duration, ValueError> {
        parse_duration(text).map_err(|e| self.error_at(table, Some(key), &e.to_string()).into())
    }

    pub(super) fn positive_duration(
        &self,
        table: &str,
        key: &str,
        text: &str,
    ) -> Result<Duration, ValueError> {
        match self.duration(table, key, text)? {
            d if d.is_zero() => Err(self
                .error_at(
                    table,
                    Some(key),
                    &format!("`{text}` must be more than zero"),
                )
                .into()),
            d => Ok(d),
        }
    }
}

/// Cartesian product of the matrix in declared order (first variable outermost).
fn matrix_rows(matrix: &IndexMap<String, Vec<Scalar>>) -> Vec<Vec<(String, String)>> {
    let mut rows: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (key, values) in matrix {
        let mut next = Vec::new();
        for row in &rows {
            for v in values {
                let mut r = row.clone();
                r.push((key.clone(), v.as_text()));
                next.push(r);
            }
        }
        rows = next;
    }
    rows
}
