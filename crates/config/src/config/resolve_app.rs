//! The application role of one row: its strings expanded, its folder, readiness and
//! environment checked, each problem named by file, line and key.

use super::checks;
use super::model::{AppJob, MetricsScrape, Ready};
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

/// Where a row's application keys come from: the job's table, and the variant's table when
/// the row's variant overrides some of them.
struct Sources<'a> {
    job: &'a RawJob,
    table: String,
    variant: Option<(String, &'a RawVariant)>,
}

impl Sources<'_> {
    /// The variant's value of `key` when it sets one, else the job's.
    fn pick(
        &self,
        key: &'static str,
        of_job: fn(&RawJob) -> &Option<String>,
        of_variant: fn(&RawVariant) -> &Option<String>,
    ) -> Option<Picked> {
        if let Some((vtable, rv)) = &self.variant {
            if let Some(v) = of_variant(rv) {
                return Some(Picked {
                    table: vtable.clone(),
                    key,
                    text: v.clone(),
                });
            }
        }
        of_job(self.job).clone().map(|text| Picked {
            table: self.table.clone(),
            key,
            text,
        })
    }
}

/// The three timeouts of an application job.
struct Timeouts {
    ready: Duration,
    stop: Duration,
    build: Duration,
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
        let src = Sources {
            job,
            table: format!("jobs.{name}"),
            variant: variant.map(|(v, s, rv)| (format!("scenarios.{s}.variants.{v}"), rv)),
        };
        let table = &src.table;
        let dir = self.app_dir(&src, vars, p);
        let (dir, git_ref) = self.variant_ref(variant, dir, vars, p);
        let text = |key, of_job, of_variant, p: &mut Problems| {
            self.expand_picked(vars, src.pick(key, of_job, of_variant), p)
                .map(|picked| picked.text)
        };
        let build = text("build", |j| &j.build, |v| &v.build, p);
        let artifact = text("artifact", |j| &j.artifact, |v| &v.artifact, p).map(|a| {
            if Path::new(&a).is_absolute() {
                PathBuf::from(a)
            } else {
                dir.join(a)
            }
        });
        let command = text("command", |j| &j.command, |v| &v.command, p).unwrap_or_default();
        for (key, text) in [("build", &build), ("command", &Some(command.clone()))] {
            if let Some(Err(e)) = text.as_deref().map(|t| checks::no_nul(key, t)) {
                p.add(self.error_at(table, Some(key), &e.0));
            }
        }
        let env = self.app_env(&src, vars, p);
        let mut versions = Vec::new();
        for (k, v) in &job.versions {
            if let Some(value) = p.take(self.expand(vars, table, "versions", v)) {
                versions.push((k.clone(), value));
            }
        }
        let timeouts = self.app_timeouts(job, table, vars, p);
        let ready = match &job.ready {
            Some(r) => self.ready(table, r, vars, p),
            None => Ready::Tcp(String::new()),
        };
        let (cpus, priority_high) = self.role(profile, req, "application", p);
        // The application's one host; no host (or `local`) is this machine.
        let host = self
            .role_hosts(profile, req, "application", p)
            .into_iter()
            .next();
        let metrics = self.metrics(job, table, vars, p);
        let image = self.expand_picked(vars, src.pick("image", |j| &j.image, |v| &v.image), p);
        let container = self.container(job, table, image.map(|i| i.text), &dir, vars, p);
        if let (Some(c), Some(h)) = (&container, &host) {
            // Only the job's folder reaches its host: the Dockerfile and context must be in it.
            if let super::ImageSource::Built {
                dockerfile,
                context,
            } = &c.image
            {
                for (key, path) in [("dockerfile", dockerfile), ("context", context)] {
                    let lexical = crate::paths::lexical;
                    if !lexical(path)
                        .is_some_and(|p| lexical(&dir).is_some_and(|d| p.starts_with(d)))
                    {
                        p.add(self.error_at(
                            table,
                            Some(key),
                            &format!(
                                "`{}` is outside the job's folder `{}`, and only that folder \
                                 reaches host `{}`: set `dir` to a folder holding both",
                                path.display(),
                                dir.display(),
                                h.name
                            ),
                        ));
                    }
                }
            }
        }
        AppJob {
            name: name.to_string(),
            dir,
            build,
            artifact,
            command,
            ready,
            ready_timeout: timeouts.ready,
            stop_timeout: timeouts.stop,
            build_timeout: timeouts.build,
            env,
            versions,
            configuration: job
                .configuration
                .as_ref()
                .and_then(|c| p.take(self.expand(vars, table, "configuration", c))),
            cpus,
            priority_high,
            metrics,
            git_ref,
            host,
            container,
        }
    }

    /// `metrics` and `metrics_select`: an HTTP URL, and the series to keep.
    fn metrics(
        &self,
        job: &RawJob,
        table: &str,
        vars: &Vars,
        p: &mut Problems,
    ) -> Option<MetricsScrape> {
        let url = job
            .metrics
            .as_ref()
            .and_then(|m| p.take(self.expand(vars, table, "metrics", m)))?;
        if let Err(e) = rigor_load::resolve_url(&url) {
            p.add(self.error_at(table, Some("metrics"), &e.to_string()));
        }
        let select: Vec<String> = job
            .metrics_select
            .iter()
            .filter_map(|s| p.take(self.expand(vars, table, "metrics_select", s)))
            .collect();
        for entry in &select {
            if let Err(e) = super::metrics_select::Selector::parse(entry) {
                p.add(self.error_at(table, Some("metrics_select"), &e.0));
            }
        }
        Some(MetricsScrape { url, select })
    }

    /// The job's folder (the variant's when it sets one), relative to the config's; it must
    /// exist.
    fn app_dir(&self, src: &Sources, vars: &Vars, p: &mut Problems) -> PathBuf {
        let Some(d) = self.expand_picked(vars, src.pick("dir", |j| &j.dir, |v| &v.dir), p) else {
            return self.dir.clone();
        };
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

    /// The job's env with the variant's on top (a variant's key replaces the job's in place).
    fn app_env(&self, src: &Sources, vars: &Vars, p: &mut Problems) -> Vec<(String, String)> {
        let mut env = Vec::new();
        for (k, v) in &src.job.env {
            if let Some(value) = p.take(self.expand(vars, &src.table, "env", &v.as_text())) {
                if let Err(e) = checks::env_var(k, &value) {
                    p.add(self.error_at(&src.table, Some("env"), &e.0));
                }
                env.push((k.clone(), value));
            }
        }
        let Some((vt, rv)) = &src.variant else {
            return env;
        };
        for (k, v) in &rv.env {
            let Some(value) = p.take(self.expand(vars, vt, "env", &v.as_text())) else {
                continue;
            };
            if let Err(e) = checks::env_var(k, &value) {
                p.add(self.error_at(vt, Some("env"), &e.0));
            }
            match env.iter_mut().find(|(ek, _)| ek == k) {
                Some(slot) => slot.1 = value,
                None => env.push((k.clone(), value)),
            }
        }
        env
    }

    /// `ready.timeout` (or `ready_timeout`), `stop_timeout` and `build_timeout`, with their
    /// defaults.
    fn app_timeouts(&self, job: &RawJob, table: &str, vars: &Vars, p: &mut Problems) -> Timeouts {
        let (ready_key, ready_timeout_text) =
            match job.ready.as_ref().and_then(|r| r.timeout.clone()) {
                Some(t) => ("ready", Some(t)),
                None => ("ready_timeout", job.ready_timeout.clone()),
            };
        let ready = ready_timeout_text
            .and_then(|t| p.take(self.expand(vars, table, ready_key, &t)))
            .and_then(|t| p.take(self.positive_duration(table, ready_key, &t)))
            .unwrap_or(Duration::from_secs(30));
        let stop = job
            .stop_timeout
            .as_ref()
            .and_then(|t| p.take(self.expand(vars, table, "stop_timeout", t)))
            .and_then(|t| p.take(self.duration(table, "stop_timeout", &t)))
            .unwrap_or(Duration::from_secs(5));
        let build = job
            .build_timeout
            .as_ref()
            .and_then(|t| p.take(self.expand(vars, table, "build_timeout", t)))
            .and_then(|t| p.take(self.positive_duration(table, "build_timeout", &t)))
            .unwrap_or(Duration::from_secs(30 * 60));
        Timeouts { ready, stop, build }
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
                p.add(at(&err.0));
            }
            Ready::Tcp(text.unwrap_or_default())
        } else if r.stdout.is_some() {
            Ready::Stdout(text.unwrap_or_default())
        } else {
            Ready::Stderr(text.unwrap_or_default())
        }
    }
}
