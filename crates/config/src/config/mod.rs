//! `rigor.toml`: reading it, pointing errors at file, line and key, and resolving a scenario
//! into rows of concrete jobs.

pub mod checks;
mod cpus;
mod declared;
mod document;
mod error;
mod git_ref;
mod hosts;
mod limits;
mod locate;
pub mod metrics_select;
mod model;
mod pass_limits;
mod problems;
mod raw;
mod report;
mod resolve;
mod resolve_app;
mod resolve_command;
mod resolve_container;
mod resolve_find_rate;
mod resolve_load;
mod role;
mod syntax;
mod value_variants;
mod vars;

pub use cpus::parse_cpu_list;
pub use error::ValueError;
pub use git_ref::{ensure_worktrees, record_refs, GitRef};
pub use hosts::{Host, LOCAL};
pub use limits::Limits;
pub use model::{
    AppJob, CommandWork, ContainerJob, EngineKind, ExtractRule, ImageSource, LoadJob,
    MetricsScrape, Ready, RowPlan, ScenarioPlan, StackWalk, Work,
};
pub use problems::Problems;
pub use resolve::MAX_ROWS;
pub use resolve_command::valid_figure_name;
pub use resolve_load::MAX_SOURCES;
pub use vars::Vars;

/// The most iterations of one row (`-i`, `iterations`, `--until-conclusive`): more is a typo,
/// and the schedule holds one slot per iteration.
pub const MAX_ITERATIONS: usize = 10_000;

use locate::Locator;
use raw::RawConfig;
use std::path::{Path, PathBuf};

/// The largest config file rigor reads: `-f /dev/zero` must not fill the memory.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: not a config file",
            MAX_CONFIG_BYTES / 1024 / 1024
        )));
    }
    Ok(text)
}

/// A parsed configuration file, kept with its text so later errors can name lines.
pub struct Config {
    pub path: PathBuf,
    /// The folder jobs run in unless they say otherwise.
    pub dir: PathBuf,
    text: String,
    raw: RawConfig,
}

/// What the caller asks of a scenario beyond the file itself.
#[derive(Debug, Default, Clone)]
pub struct PlanRequest {
    pub profile: String,
    pub cli_vars: Vec<(String, String)>,
    pub variants: Option<Vec<String>>,
    /// What the machine allows; the default checks nothing machine-specific.
    pub limits: Limits,
}

impl Config {
    /// Reads a config file and lists every problem of it, keeping the entries that are right so
    /// planning can check them too; `Err` only when the file cannot be read or is not TOML.
    pub fn load_all(path: &Path) -> Result<(Config, Problems), Problems> {
        let text = read_bounded(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "{}: no such config file (give one with -f, or create rigor.toml)",
                    path.display()
                )
            } else {
                format!("{}: cannot read: {e}", path.display())
            }
        })?;
        Self::parse_all(path, text)
    }

    /// Parses config text as if read from `path`; every problem of the file is returned.
    #[cfg(any(test, feature = "fixtures"))]
    pub fn parse(path: &Path, text: String) -> Result<Config, Problems> {
        let (config, problems) = Self::parse_all(path, text)?;
        problems.or_ok(config)
    }

    /// Parses config text as if read from `path`: the config made of every entry that is right,
    /// and every problem of the file (wrong types, unknown keys, semantic checks) sorted by line.
    pub fn parse_all(path: &Path, text: String) -> Result<(Config, Problems), Problems> {
        let (raw, mut problems) = document::read(path, &text)?;
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|d| d.join(path))
                .unwrap_or_else(|_| path.to_path_buf())
        };
        let dir = abs
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let config = Config {
            path: path.to_path_buf(),
            dir,
            text,
            raw,
        };
        config.check_references(&mut problems);
        config.check_hosts(&mut problems);
        config.check_profiles(&mut problems);
        match config.declarations() {
            Err(p) => problems.extend(p),
            Ok(decl) => {
                if let Err(p) = config.limits(&decl) {
                    problems.extend(p);
                }
            }
        }
        if let Err(p) = config.report_key() {
            problems.extend(p);
        }
        problems.sort_by_line(path);
        Ok((config, problems))
    }

    /// Scenario names in declared order.
    pub fn scenario_names(&self) -> Vec<String> {
        self.raw.scenarios.keys().cloned().collect()
    }

    fn locator(&self) -> Locator<'_> {
        Locator::new(&self.text)
    }

    /// `file:line: key: message`.
    fn error_at(&self, table: &str, key: Option<&str>, message: &str) -> String {
        let l = self.locator();
        let line = match key {
            Some(k) => l.key(table, k),
            None => l.table(table),
        };
        let full = match key {
            Some(k) => format!("{table}.{k}"),
            None => table.to_string(),
        };
        match line {
            Some(n) => format!("{}:{n}: {full}: {message}", self.path.display()),
            None => format!("{}: {full}: {message}", self.path.display()),
        }
    }

    /// Checks that every scenario names jobs that exist and can play their role.
    fn check_references(&self, p: &mut Problems) {
        if self.raw.scenarios.is_empty() {
            p.add(format!(
                "{}: no [scenarios.NAME] table: nothing to run",
                self.path.display()
            ));
        }
        for (name, job) in &self.raw.jobs {
            if let Some(role) = job.role.as_deref().filter(|r| *r != "command") {
                p.add(self.error_at(
                    &format!("jobs.{name}"),
                    Some("role"),
                    &format!("`{role}` is not a role: the only one is \"command\""),
                ));
            }
        }
        for (name, s) in &self.raw.scenarios {
            let table = format!("scenarios.{name}");
            let roles: Vec<(&str, &Option<String>, &str)> = match self.command_job_of(s) {
                Some(_) => {
                    self.check_command_scenario(&table, s, p);
                    vec![("command", &s.command, "command")]
                        .into_iter()
                        .filter(|r| r.1.is_some())
                        .collect()
                }
                None => vec![
                    ("application", &s.application, "command"),
                    ("load", &s.load, "url"),
                ],
            };
            for (role, job, needs) in roles {
                match job {
                    None => p.add(self.error_at(
                        &table,
                        None,
                        &format!("missing `{role}` (the name of a job under [jobs])"),
                    )),
                    Some(j) => match self.raw.jobs.get(j) {
                        None => {
                            let known: Vec<&str> =
                                self.raw.jobs.keys().map(String::as_str).collect();
                            p.add(self.error_at(
                                &table,
                                Some(role),
                                &format!("no job named `{j}` (jobs: {})", known.join(", ")),
                            ));
                        }
                        Some(job) => {
                            let has = match needs {
                                "command" => job.starts_an_application(),
                                _ => job.url.is_some(),
                            };
                            if !has {
                                let article = if role == "application" { "an" } else { "a" };
                                p.add(self.error_at(
                                    &format!("jobs.{j}"),
                                    None,
                                    &match needs {
                                        "command" => format!(
                                            "{article} {role} job needs `command` (or \
                                             `image`, or `dockerfile`)"
                                        ),
                                        _ => format!("{article} {role} job needs `{needs}`"),
                                    },
                                ));
                            }
                        }
                    },
                }
            }
            for (key, values) in &s.matrix {
                if values.is_empty() {
                    p.add(self.error_at(
                        &table,
                        Some("matrix"),
                        &format!("matrix variable `{key}` has no values"),
                    ));
                }
            }
            if s.iterations == Some(0) {
                p.add(self.error_at(&table, Some("iterations"), "must be at least 1"));
            }
        }
    }
}

#[cfg(test)]
mod container_tests;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod hostile_tests;
#[cfg(any(test, feature = "fixtures"))]
pub mod keys;
#[cfg(test)]
mod tests;

/// A one-application, one-load scenario `s` with `extra` appended, parsed as
/// `/tmp/x/rigor.toml`: the smallest file the unit tests of one table add to.
#[cfg(test)]
pub(crate) fn parse_with_scenario(extra: &str) -> Result<Config, Problems> {
    const BASE: &str = r#"
[jobs.app]
command = "./app"
ready = { tcp = "127.0.0.1:5000" }
[jobs.load]
url = "http://127.0.0.1:5000/"
[scenarios.s]
application = "app"
load = "load"
"#;
    Config::parse(
        std::path::Path::new("/tmp/x/rigor.toml"),
        format!("{BASE}{extra}"),
    )
}
#[cfg(test)]
mod tool_tests;
