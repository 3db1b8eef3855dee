//! The application role of one row: its strings expanded, its folder, readiness and
//! environment checked, each problem named by file, line and key.

use super::checks;
use super::model::{AppJob, Ready};
use super::problems::Problems;
use super::raw::{RawJob, RawProfile, RawReady, RawVariant};
use super::{Config, PlanRequest, Vars};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A string key picked from the job or the variant that overrides it.
struct Picked {
    table: String,
    key: &'static str,
    text: String,
}

impl Config {
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
    pub(super) fn resolve_app(
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
                if let Err(e) = checks::env_var(k, &value) {
                    p.add(self.error_at(&table, Some("env"), &e));
                }
                env.push((k.clone(), value));
            }
        }
        if let (Some(rv), Some(vt)) = (rv, &vtable) {
            for (k, v) in &rv.env {
                let Some(value) = p.take(self.expand(vars, vt, "env", &v.as_text())) else {
                    continue;
                };
                if let Err(e) = checks::env_var(k, &value) {
                    p.add(self.error_at(vt, Some("env"), &e));
                }
                match env.iter_mut().find(|(ek, _)| ek == k) {
                    Some(slot) => slot.1 = value,
                    None => env.push((k.clone(), value)),
                }
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
        let build_timeout = job
            .build_timeout
            .as_ref()
            .and_then(|t| p.take(self.expand(vars, &table, "build_timeout", t)))
            .and_then(|t| p.take(self.positive_duration(&table, "build_timeout", &t)))
            .unwrap_or(Duration::from_secs(30 * 60));
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
            build_timeout,
            env,
            versions,
            configuration: job
                .configuration
                .as_ref()
                .and_then(|c| p.take(self.expand(vars, &table, "configuration", c))),
            cpus,
            priority_high,
        }
    }

    fn ready(&self, table: &str, r: &RawReady, vars: &Vars, p: &mut Problems) -> Ready {
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
}
