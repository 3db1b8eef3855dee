//! The command role of one row: a job that runs to completion, its time limit and the rules
//! that read its figures from its output, each problem named by file, line and key.

use crate::config::ValueError;

use super::model::{CommandWork, ExtractRule};
use super::problems::Problems;
use super::raw::{RawExtract, RawJob, RawScenario};
use super::{Config, Vars};
use rigor_model::declarations::Better;
use std::time::Duration;

/// How long a command job may run when its `timeout` says nothing.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Whether a self-reported figure's name can be a measurement id: `cmd.NAME` is written in
/// tables, JSON keys and `--pivot`, so it holds no spaces or control characters.
pub fn valid_figure_name(name: &str) -> Result<(), ValueError> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.len() > 100 {
        return Err(format!("`{name}` is longer than 100 characters").into());
    }
    match name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':')))
    {
        Some(c) => {
            Err(format!("`{name}` holds {c:?}: use letters, digits and _ - . / : only").into())
        }
        None => Ok(()),
    }
}

impl Config {
    /// The command job a scenario runs: `command = "JOB"`, or an `application` whose job says
    /// `role = "command"` (with no `load`). `None` for an application-under-load scenario.
    pub(super) fn command_job_of<'a>(&self, s: &'a RawScenario) -> Option<&'a str> {
        if let Some(c) = &s.command {
            return Some(c);
        }
        let app = s.application.as_deref()?;
        let job = self.raw.jobs.get(app)?;
        (s.load.is_none() && job.role.as_deref() == Some("command")).then_some(app)
    }

    /// A command scenario names one job: `command`, alone (an `application` or `load` beside it
    /// would never run); the job runs to completion, so readiness and load keys do not apply.
    pub(super) fn check_command_scenario(&self, table: &str, s: &RawScenario, p: &mut Problems) {
        if s.command.is_some() {
            for (key, set) in [
                ("application", s.application.is_some()),
                ("load", s.load.is_some()),
            ] {
                if set {
                    p.add(self.error_at(
                        table,
                        Some(key),
                        "a scenario with `command` runs that job to completion: remove `application` and `load`, or remove `command`",
                    ));
                }
            }
        }
        let Some(name) = self.command_job_of(s) else {
            return;
        };
        let Some(job) = self.raw.jobs.get(name) else {
            return;
        };
        let jt = format!("jobs.{name}");
        for (key, set) in [
            ("ready", job.ready.is_some()),
            ("url", job.url.is_some()),
            ("metrics", job.metrics.is_some()),
        ] {
            if set {
                p.add(self.error_at(
                    &jt,
                    Some(key),
                    "a command job runs to completion and reports its own figures: this key does not apply",
                ));
            }
        }
    }

    /// The command work of one row: its time limit and its extract rules.
    pub(super) fn resolve_command(
        &self,
        name: &str,
        job: &RawJob,
        vars: &Vars,
        p: &mut Problems,
    ) -> CommandWork {
        let table = format!("jobs.{name}");
        let timeout = job
            .timeout
            .as_ref()
            .map(|t| t.as_text())
            .and_then(|t| p.take(self.expand(vars, &table, "timeout", &t)))
            .and_then(|t| p.take(self.positive_duration(&table, "timeout", &t)))
            .unwrap_or(DEFAULT_TIMEOUT);
        let extract = job
            .extract
            .iter()
            .filter_map(|(rule, raw)| self.extract_rule(name, rule, raw, vars, p))
            .collect();
        CommandWork { timeout, extract }
    }

    /// One `[jobs.NAME.extract.RULE]`, compiled; every problem names the rule and its key.
    fn extract_rule(
        &self,
        job: &str,
        rule: &str,
        raw: &RawExtract,
        vars: &Vars,
        p: &mut Problems,
    ) -> Option<ExtractRule> {
        // A name with dots or spaces is written quoted: `[jobs.j.extract."a b"]`.
        let quoted = format!("jobs.{job}.extract.\"{rule}\"");
        let table = if self.locator().table(&quoted).is_some() {
            quoted
        } else {
            format!("jobs.{job}.extract.{rule}")
        };
        let at = |key: Option<&str>, m: &str| self.error_at(&table, key, m);
        let mut ok = true;
        if let Err(e) = valid_figure_name(rule) {
            p.add(at(
                None,
                &format!("the rule's name becomes cmd.{rule}: {e}"),
            ));
            ok = false;
        }
        let direction = match raw.direction.as_deref().map(Better::parse) {
            Some(Ok(b)) => Some(b),
            Some(Err(e)) => {
                p.add(at(Some("direction"), &e.to_string()));
                None
            }
            None => {
                p.add(at(
                    None,
                    &format!(
                        "missing `direction`: say whether higher or lower is better for \
                         cmd.{rule} (direction = \"higher\" or \"lower\")"
                    ),
                ));
                None
            }
        };
        let text = p.take(self.expand(vars, &table, "regex", &raw.regex))?;
        let regex = match regex::Regex::new(&text) {
            Ok(r) => Some(r),
            Err(e) => {
                p.add(at(
                    Some("regex"),
                    &format!("not a valid regular expression: {e}"),
                ));
                None
            }
        };
        if let Some(r) = &regex {
            let names: Vec<&str> = r.capture_names().flatten().collect();
            if !names.contains(&"value") {
                p.add(at(
                    Some("regex"),
                    "needs a named capture `value` for the figure, such as (?P<value>[0-9.]+)",
                ));
                ok = false;
            }
            if let Some(row) = raw.row.as_deref().filter(|r| !names.contains(r)) {
                p.add(at(
                    Some("row"),
                    &format!("the regex has no named capture `{row}`, such as (?P<{row}>\\d+)"),
                ));
                ok = false;
            }
        }
        if raw.row.as_deref() == Some("value") {
            p.add(at(
                Some("row"),
                "the row cannot be the `value` capture itself",
            ));
            ok = false;
        }
        Some(ExtractRule {
            name: rule.to_string(),
            regex: regex?,
            unit: raw.unit.clone(),
            direction: direction?,
            label: raw.label.clone(),
            row: raw.row.clone(),
        })
        .filter(|_| ok)
    }
}
