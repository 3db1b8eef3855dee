//! Turns a scenario into rows: matrix expansion, variant overrides, variable layers, and every
//! value parsed with an error that names where it was written.

use super::model::{AppJob, LoadJob, Ready, RowPlan, ScenarioPlan, Validate};
use super::raw::{RawJob, RawRole, RawScenario, RawVariant, Scalar};
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

fn text_layer(map: &IndexMap<String, Scalar>) -> Vec<(&String, String)> {
    map.iter().map(|(k, v)| (k, v.as_text())).collect()
}

impl Config {
    /// Resolves one scenario for a profile, `--var`s and a variant selection.
    pub fn plan(&self, scenario: &str, req: &PlanRequest) -> Result<ScenarioPlan, String> {
        let s = self.raw.scenarios.get(scenario).ok_or_else(|| {
            format!(
                "{}: no scenario named `{scenario}` (scenarios: {})",
                self.path.display(),
                self.scenario_names().join(", ")
            )
        })?;
        let profile = match self.raw.profiles.get(&req.profile) {
            Some(p) => p.clone(),
            None if req.profile == "local" => Default::default(),
            None => {
                let known: Vec<&str> = self.raw.profiles.keys().map(String::as_str).collect();
                return Err(format!(
                    "{}: no profile named `{}` (profiles: {})",
                    self.path.display(),
                    req.profile,
                    if known.is_empty() {
                        "none; `local` is the default".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        };
        let variants = self.select_variants(scenario, s, req)?;
        let mut rows = Vec::new();
        for combo in matrix_rows(&s.matrix) {
            for variant in &variants {
                let raw_variant = variant.as_ref().map(|v| &s.variants[v]);
                let mut vars = Vars::default();
                vars.layer(text_layer(&self.raw.variables));
                vars.layer(text_layer(&profile.variables));
                vars.layer(text_layer(&s.variables));
                let mut overriding = Vars::default();
                for (k, v) in &combo {
                    vars.set(k, v);
                    overriding.set(k, v);
                }
                if let Some(rv) = raw_variant {
                    vars.layer(text_layer(&rv.variables));
                    overriding.layer(text_layer(&rv.variables));
                }
                for (k, v) in &req.cli_vars {
                    vars.set(k, v);
                    overriding.set(k, v);
                }
                vars.set("scenario", scenario);
                vars.set("variant", variant.as_deref().unwrap_or(""));
                let app_name = s.application.clone().unwrap_or_default();
                let load_name = s.load.clone().unwrap_or_default();
                let app = self.resolve_app(
                    &app_name,
                    &self.raw.jobs[&app_name],
                    raw_variant.map(|rv| (variant.as_deref().unwrap_or(""), scenario, rv)),
                    profile.application.as_ref(),
                    &vars,
                )?;
                let load = self.resolve_load(
                    &load_name,
                    &self.raw.jobs[&load_name],
                    profile.load.as_ref(),
                    &vars,
                    &overriding,
                )?;
                let mut app = app;
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
        Ok(ScenarioPlan {
            iterations: s.iterations,
            variants,
            rows,
        })
    }

    fn select_variants(
        &self,
        scenario: &str,
        s: &RawScenario,
        req: &PlanRequest,
    ) -> Result<Vec<Option<String>>, String> {
        let declared: Vec<String> = s.variants.keys().cloned().collect();
        match &req.variants {
            None if declared.is_empty() => Ok(vec![None]),
            None => Ok(declared.into_iter().map(Some).collect()),
            Some(wanted) => {
                let mut out = Vec::new();
                for w in wanted {
                    if !s.variants.contains_key(w) {
                        return Err(format!(
                            "{}: scenario `{scenario}` has no variant `{w}` (variants: {})",
                            self.path.display(),
                            if declared.is_empty() {
                                "none".to_string()
                            } else {
                                declared.join(", ")
                            }
                        ));
                    }
                    out.push(Some(w.clone()));
                }
                Ok(out)
            }
        }
    }

    fn expand(&self, vars: &Vars, table: &str, key: &str, text: &str) -> Result<String, String> {
        vars.expand(text)
            .map_err(|e| self.error_at(table, Some(key), &e))
    }

    fn resolve_app(
        &self,
        name: &str,
        job: &RawJob,
        variant: Option<(&str, &str, &RawVariant)>,
        role: Option<&RawRole>,
        vars: &Vars,
    ) -> Result<AppJob, String> {
        let table = format!("jobs.{name}");
        let vtable = variant.map(|(v, s, _)| format!("scenarios.{s}.variants.{v}"));
        let pick =
            |key: &str, base: &Option<String>, over: Option<&Option<String>>| match (over, &vtable)
            {
                (Some(Some(v)), Some(vt)) => Some((vt.clone(), key.to_string(), v.clone())),
                _ => base.clone().map(|b| (table.clone(), key.to_string(), b)),
            };
        let rv = variant.map(|(_, _, rv)| rv);
        let expand_opt = |t: Option<(String, String, String)>| -> Result<Option<String>, String> {
            t.map(|(tb, k, v)| self.expand(vars, &tb, &k, &v))
                .transpose()
        };
        let dir_text = expand_opt(pick("dir", &job.dir, rv.map(|r| &r.dir)))?;
        let dir = match dir_text {
            Some(d) if Path::new(&d).is_absolute() => PathBuf::from(d),
            Some(d) => self.dir.join(d),
            None => self.dir.clone(),
        };
        let build = expand_opt(pick("build", &job.build, rv.map(|r| &r.build)))?;
        let artifact =
            expand_opt(pick("artifact", &job.artifact, rv.map(|r| &r.artifact)))?.map(|a| {
                if Path::new(&a).is_absolute() {
                    PathBuf::from(a)
                } else {
                    dir.join(a)
                }
            });
        let command = expand_opt(pick("command", &job.command, rv.map(|r| &r.command)))?
            .ok_or_else(|| self.error_at(&table, None, "an application job needs `command`"))?;
        let mut env = Vec::new();
        for (k, v) in &job.env {
            env.push((k.clone(), self.expand(vars, &table, "env", &v.as_text())?));
        }
        if let (Some(rv), Some(vt)) = (rv, &vtable) {
            for (k, v) in &rv.env {
                let value = self.expand(vars, vt, "env", &v.as_text())?;
                match env.iter_mut().find(|(ek, _)| ek == k) {
                    Some(slot) => slot.1 = value,
                    None => env.push((k.clone(), value)),
                }
            }
        }
        let mut versions = Vec::new();
        for (k, v) in &job.versions {
            versions.push((k.clone(), self.expand(vars, &table, "versions", v)?));
        }
        let ready_timeout_text = job
            .ready
            .as_ref()
            .and_then(|r| r.timeout.clone())
            .or_else(|| job.ready_timeout.clone());
        let ready_timeout = match ready_timeout_text {
            Some(t) => self.duration(
                &table,
                "ready_timeout",
                &self.expand(vars, &table, "ready", &t)?,
            )?,
            None => Duration::from_secs(30),
        };
        let stop_timeout = match &job.stop_timeout {
            Some(t) => self.duration(
                &table,
                "stop_timeout",
                &self.expand(vars, &table, "stop_timeout", t)?,
            )?,
            None => Duration::from_secs(5),
        };
        let build_timeout = match &job.build_timeout {
            Some(t) => self.duration(
                &table,
                "build_timeout",
                &self.expand(vars, &table, "build_timeout", t)?,
            )?,
            None => Duration::from_secs(30 * 60),
        };
        let ready = match &job.ready {
            Some(r) => {
                let kinds = [&r.http, &r.tcp, &r.stdout, &r.stderr]
                    .iter()
                    .filter(|k| k.is_some())
                    .count();
                if kinds != 1 {
                    return Err(self.error_at(
                        &table,
                        Some("ready"),
                        "give exactly one of `http`, `tcp`, `stdout` or `stderr`",
                    ));
                }
                let e = |t: &String| self.expand(vars, &table, "ready", t);
                if let Some(u) = &r.http {
                    let url = e(u)?;
                    rigor_load::resolve_url(&url)
                        .map_err(|err| self.error_at(&table, Some("ready"), &err.to_string()))?;
                    Ready::Http(url)
                } else if let Some(t) = &r.tcp {
                    Ready::Tcp(e(t)?)
                } else if let Some(t) = &r.stdout {
                    Ready::Stdout(e(t)?)
                } else {
                    Ready::Stderr(e(r.stderr.as_ref().unwrap_or(&String::new()))?)
                }
            }
            None => Ready::Tcp(String::new()),
        };
        let (cpus, priority_high) = self.role(role, "application")?;
        Ok(AppJob {
            name: name.to_string(),
            dir,
            build,
            artifact,
            command,
            ready,
            ready_timeout,
            stop_timeout,
            build_timeout,
            env,
            versions,
            configuration: job.configuration.clone(),
            cpus,
            priority_high,
        })
    }

    fn role(
        &self,
        role: Option<&RawRole>,
        name: &str,
    ) -> Result<(Option<Vec<usize>>, bool), String> {
        let Some(r) = role else {
            return Ok((None, false));
        };
        let table = "profiles";
        let cpus = match &r.cpus {
            Some(c) => Some(
                parse_cpu_list(&c.as_text()).map_err(|e| self.error_at(table, Some(name), &e))?,
            ),
            None => None,
        };
        let high = match r.priority.as_deref() {
            None | Some("normal") => false,
            Some("high") => true,
            Some(other) => {
                return Err(self.error_at(
                    table,
                    Some(name),
                    &format!("priority `{other}` is not `high` or `normal`"),
                ))
            }
        };
        Ok((cpus, high))
    }

    fn duration(&self, table: &str, key: &str, text: &str) -> Result<Duration, String> {
        parse_duration(text).map_err(|e| self.error_at(table, Some(key), &e))
    }

    fn resolve_load(
        &self,
        name: &str,
        job: &RawJob,
        role: Option<&RawRole>,
        vars: &Vars,
        overriding: &Vars,
    ) -> Result<LoadJob, String> {
        let table = format!("jobs.{name}");
        // A matrix/variant/--var variable named like a load key overrides that key.
        let value = |key: &str, raw: &Option<Scalar>| -> Result<Option<String>, String> {
            if LOAD_KEYS.contains(&key) {
                if let Some(v) = overriding.get(key) {
                    return Ok(Some(v.to_string()));
                }
            }
            raw.as_ref()
                .map(|s| self.expand(vars, &table, key, &s.as_text()))
                .transpose()
        };
        let count = |key: &str, raw: &Option<Scalar>, default: usize| -> Result<usize, String> {
            match value(key, raw)? {
                None => Ok(default),
                Some(t) => match t.trim().parse::<usize>() {
                    Ok(n) if n >= 1 => Ok(n),
                    _ => Err(self.error_at(
                        &table,
                        Some(key),
                        &format!("`{t}` is not a whole number of at least 1"),
                    )),
                },
            }
        };
        let dur =
            |key: &str, raw: &Option<Scalar>, default: Duration| -> Result<Duration, String> {
                match value(key, raw)? {
                    None => Ok(default),
                    Some(t) => self.duration(&table, key, &t),
                }
            };
        let url = self.expand(vars, &table, "url", job.url.as_deref().unwrap_or_default())?;
        let addr = rigor_load::resolve_url(&url)
            .map_err(|e| self.error_at(&table, Some("url"), &e.to_string()))?;
        let rate = match value("rate", &job.rate)? {
            None => None,
            Some(t) => match t.trim().parse::<f64>() {
                Ok(r) if r > 0.0 && r.is_finite() => Some(r),
                _ => {
                    return Err(self.error_at(
                        &table,
                        Some("rate"),
                        &format!("`{t}` is not a positive number of requests per second"),
                    ))
                }
            },
        };
        let mut headers = Vec::new();
        for (k, v) in &job.headers {
            headers.push((k.clone(), self.expand(vars, &table, "headers", v)?));
        }
        let body = job
            .body
            .as_ref()
            .map(|b| self.expand(vars, &table, "body", b))
            .transpose()?;
        let method = job
            .method
            .as_ref()
            .map(|m| self.expand(vars, &table, "method", m))
            .transpose()?
            .unwrap_or_else(|| "GET".to_string());
        let validate = job.validate.as_ref().map(|v| Validate {
            status: v.status,
            body_contains: v.body_contains.clone(),
        });
        let (cpus, priority_high) = self.role(role, "load")?;
        Ok(LoadJob {
            url,
            addr,
            connections: count("connections", &job.connections, 64)?,
            threads: count("threads", &job.threads, 1)?,
            pipeline: count("pipeline", &job.pipeline, 1)?,
            rate,
            warmup: dur("warmup", &job.warmup, Duration::from_secs(3))?,
            duration: dur("duration", &job.duration, Duration::from_secs(10))?,
            timeout: dur("timeout", &job.timeout, Duration::from_secs(2))?,
            method,
            headers,
            body,
            cpus,
            priority_high,
            validate,
        })
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
