//! Turns a scenario into rows: matrix expansion, variant overrides, variable layers, and every
//! value parsed and range-checked with an error that names where it was written. Every problem
//! of every row is gathered, so one run lists them all.

use super::checks;
use super::cpus::missing_cpus;
use super::model::{AppJob, LoadJob, Ready, RowPlan, ScenarioPlan, Validate};
use super::problems::Problems;
use super::raw::{RawJob, RawProfile, RawScenario, RawVariant, Scalar};
use super::{parse_cpu_list, Config, PlanRequest, Vars};
use crate::duration::parse_duration;
use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Load-job keys a matrix, variant or `--var` variable of the same name overrides.
const LOAD_KEYS: &[&str] = &[
    "connections",
    "threads",
    "pipeline",
    "rate",
    "warmup",
    "duration",
    "timeout",
];

/// The most rows (matrix combinations × variants) a scenario may have; counted before any row
/// is made, so a matrix typo cannot exhaust memory while planning.
pub const MAX_ROWS: u128 = 10_000;
/// The most worker threads of one load job.
pub const MAX_THREADS: u64 = 1024;
/// The most requests in flight on one connection.
pub const MAX_PIPELINE: u64 = 1024;
/// The most requests in flight (connections × pipeline) of one load job.
pub const MAX_IN_FLIGHT: u64 = 1 << 22;
/// The longest request timeout.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
/// The most connections when the machine's open-file limit is unknown.
const MAX_CONNECTIONS_UNKNOWN: u64 = 1_000_000;

fn text_layer(map: &IndexMap<String, Scalar>) -> Vec<(&String, String)> {
    map.iter().map(|(k, v)| (k, v.as_text())).collect()
}

/// Where a variable that overrides a load key was set, so its error points there.
#[derive(Debug, Clone)]
enum Origin {
    Matrix,
    Variant(String),
    Cli,
}

/// A load key's text and where it was written.
enum Source<'a> {
    Key,
    Override(&'a Origin),
}

/// A string key picked from the job or the variant that overrides it.
struct Picked {
    table: String,
    key: &'static str,
    text: String,
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
        let mut p = Problems::default();
        let profile = match self.raw.profiles.get(&req.profile) {
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
        };
        let variants = self.select_variants(scenario, s, req, &mut p);
        let count = s
            .matrix
            .values()
            .fold(variants.len().max(1) as u128, |n, v| {
                n.saturating_mul(v.len() as u128)
            });
        if count > MAX_ROWS {
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
                    if variants.len() > 1 {
                        format!(" × {} variants", variants.len())
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        let table = format!("scenarios.{scenario}");
        let iterations = match s.iterations {
            Some(n) if n > super::MAX_ITERATIONS => {
                p.add(self.error_at(
                    &table,
                    Some("iterations"),
                    &format!("{n} is more than the limit of {}", super::MAX_ITERATIONS),
                ));
                None
            }
            n => n,
        };
        let mut rows = Vec::new();
        // Too many rows: check the jobs with the first combination only, to list their problems.
        let combos = if count > MAX_ROWS {
            let first = s
                .matrix
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.first()?.as_text())));
            vec![first.collect()]
        } else {
            matrix_rows(&s.matrix)
        };
        for combo in combos {
            for variant in &variants {
                let raw_variant = variant.as_ref().map(|v| &s.variants[v]);
                let mut vars = Vars::default();
                vars.layer(text_layer(&self.raw.variables));
                vars.layer(text_layer(&profile.variables));
                vars.layer(text_layer(&s.variables));
                let mut overrides: IndexMap<String, (String, Origin)> = IndexMap::new();
                for (k, v) in &combo {
                    vars.set(k, v);
                    overrides.insert(k.clone(), (v.clone(), Origin::Matrix));
                }
                if let (Some(rv), Some(name)) = (raw_variant, variant) {
                    vars.layer(text_layer(&rv.variables));
                    for (k, v) in &rv.variables {
                        overrides.insert(k.clone(), (v.as_text(), Origin::Variant(name.clone())));
                    }
                }
                for (k, v) in &req.cli_vars {
                    vars.set(k, v);
                    overrides.insert(k.clone(), (v.clone(), Origin::Cli));
                }
                vars.set("scenario", scenario);
                vars.set("variant", variant.as_deref().unwrap_or(""));
                let app_name = s.application.clone().unwrap_or_default();
                let load_name = s.load.clone().unwrap_or_default();
                let mut app = self.resolve_app(
                    &app_name,
                    &self.raw.jobs[&app_name],
                    raw_variant.map(|rv| (variant.as_deref().unwrap_or(""), scenario, rv)),
                    &profile,
                    req,
                    &vars,
                    &mut p,
                );
                let load = self.resolve_load(
                    &load_name,
                    &self.raw.jobs[&load_name],
                    scenario,
                    &profile,
                    req,
                    &vars,
                    &overrides,
                    &mut p,
                );
                if app.ready == Ready::Tcp(String::new()) {
                    app.ready = Ready::Tcp(load.addr.to_string());
                }
                rows.push(RowPlan {
                    variables: combo.iter().cloned().collect::<BTreeMap<_, _>>(),
                    variant: variant.clone(),
                    app,
                    load,
                });
            }
        }
        p.or_ok(ScenarioPlan {
            iterations,
            variants,
            rows,
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

    fn expand(&self, vars: &Vars, table: &str, key: &str, text: &str) -> Result<String, String> {
        vars.expand(text)
            .map_err(|e| self.error_at(table, Some(key), &e))
    }

    fn expand_picked(
        &self,
        vars: &Vars,
        picked: Option<Picked>,
        p: &mut Problems,
    ) -> Option<Picked> {
        let picked = picked?;
        let text = p.take(self.expand(vars, &picked.table, picked.key, &picked.text))?;
        Some(Picked { text, ..picked })
    }

    #[allow(clippy::too_many_arguments)]
    fn resolve_app(
        &self,
        name: &str,
        job: &RawJob,
        variant: Option<(&str, &str, &RawVariant)>,
        profile: &RawProfile,
        req: &PlanRequest,
        vars: &Vars,
        p: &mut Problems,
    ) -> AppJob {
        let table = format!("jobs.{name}");
        let vtable = variant.map(|(v, s, _)| format!("scenarios.{s}.variants.{v}"));
        let pick = |key: &'static str, base: &Option<String>, over: Option<&Option<String>>| match (
            over, &vtable,
        ) {
            (Some(Some(v)), Some(vt)) => Some(Picked {
                table: vt.clone(),
                key,
                text: v.clone(),
            }),
            _ => base.clone().map(|b| Picked {
                table: table.clone(),
                key,
                text: b,
            }),
        };
        let rv = variant.map(|(_, _, rv)| rv);
        let dir = match self.expand_picked(vars, pick("dir", &job.dir, rv.map(|r| &r.dir)), p) {
            Some(d) => {
                let path = if Path::new(&d.text).is_absolute() {
                    PathBuf::from(&d.text)
                } else {
                    self.dir.join(&d.text)
                };
                if !path.is_dir() {
                    p.add(self.error_at(
                        &d.table,
                        Some("dir"),
                        &format!("folder `{}` does not exist", path.display()),
                    ));
                }
                path
            }
            None => self.dir.clone(),
        };
        let build = self
            .expand_picked(vars, pick("build", &job.build, rv.map(|r| &r.build)), p)
            .map(|b| b.text);
        let artifact = self
            .expand_picked(
                vars,
                pick("artifact", &job.artifact, rv.map(|r| &r.artifact)),
                p,
            )
            .map(|a| {
                if Path::new(&a.text).is_absolute() {
                    PathBuf::from(a.text)
                } else {
                    dir.join(a.text)
                }
            });
        let command = self
            .expand_picked(
                vars,
                pick("command", &job.command, rv.map(|r| &r.command)),
                p,
            )
            .map(|c| c.text)
            .unwrap_or_default();
        for (key, text) in [("build", &build), ("command", &Some(command.clone()))] {
            if let Some(Err(e)) = text.as_deref().map(|t| checks::no_nul(key, t)) {
                p.add(self.error_at(&table, Some(key), &e));
            }
        }
        let mut env = Vec::new();
        for (k, v) in &job.env {
            if let Some(value) = p.take(self.expand(vars, &table, "env", &v.as_text())) {
                env.push((k.clone(), value));
            }
        }
        if let (Some(rv), Some(vt)) = (rv, &vtable) {
            for (k, v) in &rv.env {
                let Some(value) = p.take(self.expand(vars, vt, "env", &v.as_text())) else {
                    continue;
                };
                match env.iter_mut().find(|(ek, _)| ek == k) {
                    Some(slot) => slot.1 = value,
                    None => env.push((k.clone(), value)),
                }
            }
        }
        for (k, v) in &env {
            if let Err(e) = checks::env_var(k, v) {
                p.add(self.error_at(&table, Some("env"), &e));
            }
        }
        let mut versions = Vec::new();
        for (k, v) in &job.versions {
            if let Some(value) = p.take(self.expand(vars, &table, "versions", v)) {
                versions.push((k.clone(), value));
            }
        }
        let (ready_key, ready_timeout_text) =
            match job.ready.as_ref().and_then(|r| r.timeout.clone()) {
                Some(t) => ("ready", Some(t)),
                None => ("ready_timeout", job.ready_timeout.clone()),
            };
        let ready_timeout = ready_timeout_text
            .and_then(|t| p.take(self.expand(vars, &table, ready_key, &t)))
            .and_then(|t| p.take(self.positive_duration(&table, ready_key, &t)))
            .unwrap_or(Duration::from_secs(30));
        let stop_timeout = job
            .stop_timeout
            .as_ref()
            .and_then(|t| p.take(self.expand(vars, &table, "stop_timeout", t)))
            .and_then(|t| p.take(self.duration(&table, "stop_timeout", &t)))
            .unwrap_or(Duration::from_secs(5));
        let ready = match &job.ready {
            Some(r) => self.ready(&table, r, vars, p),
            None => Ready::Tcp(String::new()),
        };
        let (cpus, priority_high) = self.role(profile, req, "application", p);
        AppJob {
            name: name.to_string(),
            dir,
            build,
            artifact,
            command,
            ready,
            ready_timeout,
            stop_timeout,
            env,
            versions,
            configuration: job.configuration.clone(),
            cpus,
            priority_high,
        }
    }

    fn ready(&self, table: &str, r: &super::raw::RawReady, vars: &Vars, p: &mut Problems) -> Ready {
        let kinds = [&r.http, &r.tcp, &r.stdout, &r.stderr]
            .iter()
            .filter(|k| k.is_some())
            .count();
        if kinds != 1 {
            p.add(self.error_at(
                table,
                Some("ready"),
                "give exactly one of `http`, `tcp`, `stdout` or `stderr`",
            ));
            return Ready::Stdout(String::new());
        }
        // `None` when expanding failed (already recorded): nothing more to check then.
        let text = [&r.http, &r.tcp, &r.stdout, &r.stderr]
            .into_iter()
            .flatten()
            .next()
            .and_then(|t| p.take(self.expand(vars, table, "ready", t)));
        let at = |m: &str| self.error_at(table, Some("ready"), m);
        if r.http.is_some() {
            if let Some(Err(err)) = text.as_deref().map(rigor_load::resolve_url) {
                p.add(at(&err.to_string()));
            }
            Ready::Http(text.unwrap_or_default())
        } else if r.tcp.is_some() {
            if let Some(Err(err)) = text.as_deref().map(checks::tcp_address) {
                p.add(at(&err));
            }
            Ready::Tcp(text.unwrap_or_default())
        } else if r.stdout.is_some() {
            Ready::Stdout(text.unwrap_or_default())
        } else {
            Ready::Stderr(text.unwrap_or_default())
        }
    }

    /// CPU set and priority of `role` in the selected profile; problems name the profile.
    fn role(
        &self,
        profile: &RawProfile,
        req: &PlanRequest,
        role: &str,
        p: &mut Problems,
    ) -> (Option<Vec<usize>>, bool) {
        let r = match role {
            "application" => profile.application.as_ref(),
            _ => profile.load.as_ref(),
        };
        let Some(r) = r else {
            return (None, false);
        };
        // `[profiles.P.role]` tables name their keys; inline `role = { … }` names the role.
        let nested = format!("profiles.{}.{role}", req.profile);
        let at = |key: &str, m: &str| {
            if self.locator().table(&nested).is_some() {
                self.error_at(&nested, Some(key), m)
            } else {
                self.error_at(&format!("profiles.{}", req.profile), Some(role), m)
            }
        };
        let cpus = r.cpus.as_ref().and_then(|c| {
            let list = p.take(parse_cpu_list(&c.as_text()).map_err(|e| at("cpus", &e)))?;
            if let Some(online) = &req.limits.online_cpus {
                let missing = missing_cpus(&list, online);
                if !missing.is_empty() {
                    p.add(at(
                        "cpus",
                        &format!(
                            "CPU {} is not online or not allowed to rigor here (usable: {})",
                            join(&missing),
                            cpu_ranges(online)
                        ),
                    ));
                }
            }
            Some(list)
        });
        let high = match r.priority.as_deref() {
            None | Some("normal") => false,
            Some("high") => true,
            Some(other) => {
                p.add(at(
                    "priority",
                    &format!("priority `{other}` is not `high` or `normal`"),
                ));
                false
            }
        };
        (cpus, high)
    }

    fn duration(&self, table: &str, key: &str, text: &str) -> Result<Duration, String> {
        parse_duration(text).map_err(|e| self.error_at(table, Some(key), &e))
    }

    fn positive_duration(&self, table: &str, key: &str, text: &str) -> Result<Duration, String> {
        match self.duration(table, key, text)? {
            d if d.is_zero() => Err(self.error_at(
                table,
                Some(key),
                &format!("`{text}` must be more than zero"),
            )),
            d => Ok(d),
        }
    }

    /// An error about a load key, pointed at the job key or at the variable that overrode it.
    fn load_error(&self, table: &str, scenario: &str, key: &str, src: &Source, m: &str) -> String {
        match src {
            Source::Key => self.error_at(table, Some(key), m),
            Source::Override(Origin::Matrix) => self.error_at(
                &format!("scenarios.{scenario}"),
                Some("matrix"),
                &format!("{key}: {m}"),
            ),
            Source::Override(Origin::Variant(v)) => self.error_at(
                &format!("scenarios.{scenario}.variants.{v}"),
                Some("variables"),
                &format!("{key}: {m}"),
            ),
            Source::Override(Origin::Cli) => format!("--var {key}: {m}"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn resolve_load(
        &self,
        name: &str,
        job: &RawJob,
        scenario: &str,
        profile: &RawProfile,
        req: &PlanRequest,
        vars: &Vars,
        overrides: &IndexMap<String, (String, Origin)>,
        p: &mut Problems,
    ) -> LoadJob {
        let table = format!("jobs.{name}");
        // A matrix/variant/--var variable named like a load key overrides that key.
        let value = |key: &'static str, raw: &Option<Scalar>, p: &mut Problems| {
            if LOAD_KEYS.contains(&key) {
                if let Some((v, origin)) = overrides.get(key) {
                    let src = Source::Override(origin);
                    return match vars.expand(v) {
                        Ok(t) => Some((t, src)),
                        Err(e) => {
                            p.add(self.load_error(&table, scenario, key, &src, &e));
                            None
                        }
                    };
                }
            }
            let raw = raw.as_ref()?;
            p.take(self.expand(vars, &table, key, &raw.as_text()))
                .map(|t| (t, Source::Key))
        };
        let count = |key: &'static str,
                     raw: &Option<Scalar>,
                     default: usize,
                     max: u64,
                     why: &str,
                     p: &mut Problems| {
            let Some((t, src)) = value(key, raw, p) else {
                return default;
            };
            let digits = t.trim();
            let is_number = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
            let message = match digits.parse::<u64>() {
                Ok(n) if (1..=max).contains(&n) => return n as usize,
                _ if !is_number || digits.bytes().all(|b| b == b'0') => {
                    format!("`{t}` is not a whole number of at least 1")
                }
                _ => format!("`{t}` is more than {max} {why}"),
            };
            p.add(self.load_error(&table, scenario, key, &src, &message));
            default
        };
        let max_connections = req
            .limits
            .max_connections()
            .unwrap_or(MAX_CONNECTIONS_UNKNOWN);
        let connections_why = match req.limits.max_open_files {
            Some(n) => format!(
                "(this machine's open-file limit is {n}; raise it with `ulimit -n` or use fewer \
                 connections)"
            ),
            None => "(the most rigor opens)".to_string(),
        };
        let connections = count(
            "connections",
            &job.connections,
            64,
            max_connections,
            &connections_why,
            p,
        );
        let threads = count(
            "threads",
            &job.threads,
            1,
            MAX_THREADS,
            "(the most threads)",
            p,
        );
        let pipeline = count(
            "pipeline",
            &job.pipeline,
            1,
            MAX_PIPELINE,
            "(the most requests in flight per connection)",
            p,
        );
        let dur = |key: &'static str,
                   raw: &Option<Scalar>,
                   default: Duration,
                   zero_ok: bool,
                   p: &mut Problems| {
            let Some((t, src)) = value(key, raw, p) else {
                return default;
            };
            let message = match parse_duration(&t) {
                Ok(d) if zero_ok || !d.is_zero() => return d,
                Ok(_) => format!("`{t}` must be more than zero"),
                Err(e) => e,
            };
            p.add(self.load_error(&table, scenario, key, &src, &message));
            default
        };
        let warmup = dur("warmup", &job.warmup, Duration::from_secs(3), true, p);
        let duration = dur("duration", &job.duration, Duration::from_secs(10), false, p);
        let timeout = dur("timeout", &job.timeout, Duration::from_secs(2), false, p);
        if timeout > MAX_TIMEOUT {
            p.add(self.error_at(
                &table,
                Some("timeout"),
                &format!(
                    "a request timeout of {}s is more than the limit of {}s",
                    timeout.as_secs(),
                    MAX_TIMEOUT.as_secs()
                ),
            ));
        }
        if (connections as u64).saturating_mul(pipeline as u64) > MAX_IN_FLIGHT {
            p.add(self.error_at(
                &table,
                Some("pipeline"),
                &format!(
                    "{connections} connections with a pipeline of {pipeline} is more than \
                     {MAX_IN_FLIGHT} requests in flight"
                ),
            ));
        }
        let rate = value("rate", &job.rate, p).and_then(|(t, src)| match t.trim().parse::<f64>() {
            Ok(r) if r > 0.0 && r.is_finite() => Some(r),
            _ => {
                p.add(self.load_error(
                    &table,
                    scenario,
                    "rate",
                    &src,
                    &format!("`{t}` is not a positive number of requests per second"),
                ));
                None
            }
        });
        let url = p
            .take(self.expand(vars, &table, "url", job.url.as_deref().unwrap_or_default()))
            .unwrap_or_default();
        let addr = if url.is_empty() {
            None
        } else {
            p.take(
                rigor_load::resolve_url(&url)
                    .map_err(|e| self.error_at(&table, Some("url"), &e.to_string())),
            )
        }
        .unwrap_or_else(|| ([127, 0, 0, 1], 0).into());
        let mut headers = Vec::new();
        for (k, v) in &job.headers {
            let Some(value) = p.take(self.expand(vars, &table, "headers", v)) else {
                continue;
            };
            if let Err(e) = checks::header(k, &value) {
                p.add(self.error_at(&table, Some("headers"), &e));
            }
            headers.push((k.clone(), value));
        }
        let body = job
            .body
            .as_ref()
            .and_then(|b| p.take(self.expand(vars, &table, "body", b)));
        let method = match &job.method {
            Some(m) => {
                let m = p
                    .take(self.expand(vars, &table, "method", m))
                    .unwrap_or_else(|| "GET".to_string());
                if let Err(e) = checks::method(&m) {
                    p.add(self.error_at(&table, Some("method"), &e));
                }
                m
            }
            None => "GET".to_string(),
        };
        let validate = job.validate.as_ref().map(|v| {
            if let Some(Err(e)) = v.status.map(checks::status) {
                p.add(self.error_at(&table, Some("validate"), &e));
            }
            Validate {
                status: v.status,
                body_contains: v.body_contains.clone(),
            }
        });
        let (cpus, priority_high) = self.role(profile, req, "load", p);
        LoadJob {
            url,
            addr,
            connections,
            threads,
            pipeline,
            rate,
            warmup,
            duration,
            timeout,
            method,
            headers,
            body,
            cpus,
            priority_high,
            validate,
        }
    }
}

fn join(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `0-3,6` for an error message.
fn cpu_ranges(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        while i + 1 < cpus.len() && cpus[i + 1] == cpus[i] + 1 {
            i += 1;
        }
        parts.push(if cpus[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", cpus[i])
        });
        i += 1;
    }
    parts.join(",")
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
