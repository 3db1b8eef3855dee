//! `rigor compare`: the flags checked and turned into values: which files, which threshold,
//! which measurements the gates (regression, inconclusive) watch, which directions `--measure`
//! declares, and where the comparison is written.

use crate::cli::compare::CompareArgs;
use crate::declarations::{self, Better};
use crate::failure::Failure;
use std::path::PathBuf;

use crate::threshold::split_thresholds;

/// Measurement `--fail-on-regression` watches when `--measurements` is not given.
pub const PRIMARY: &str = crate::measurements::ids::LOAD_RPS;

/// What `rigor compare` was asked to do, checked.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Saved results; the first is the baseline.
    pub files: Vec<PathBuf>,
    /// The practical threshold, in %.
    pub threshold_pct: f64,
    /// `--threshold ID=PCT`: measurements judged at a threshold of their own.
    pub thresholds: Vec<(String, f64)>,
    /// Ids given with `--measurements`, compared even when they are bookkeeping ids.
    pub measurements: Vec<String>,
    /// Whether `--measurements` was given: then each watched id must have been compared.
    pub measurements_given: bool,
    /// What `--fail-on-regression` watches: `--measurements`, else [`PRIMARY`].
    pub watched: Vec<String>,
    /// `--fail-on-regression`.
    pub fail_on_regression: bool,
    /// `--fail-on-inconclusive`.
    pub fail_on_inconclusive: bool,
    /// `--measure` directions, free of contradictions.
    pub measure: Vec<(String, Better)>,
    /// `--json FILE`.
    pub json: Option<PathBuf>,
    /// `--markdown FILE`.
    pub markdown: Option<PathBuf>,
    /// `--html FILE`.
    pub html: Option<PathBuf>,
    /// `--pivot`, `--pivot-by`, `--no-chart`.
    pub view: crate::report::View,
}

impl TryFrom<&CompareArgs> for CompareOptions {
    type Error = Failure;

    /// Checks what clap could not: `--measure` naming one id both ways (a usage error).
    fn try_from(args: &CompareArgs) -> Result<Self, Failure> {
        declarations::flag_conflicts(&args.measure).map_err(Failure::usage)?;
        let view = args.view.view().map_err(Failure::usage)?;
        let measurements: Vec<String> = args
            .measurements
            .iter()
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .collect();
        let measurements_given = !args.measurements.is_empty();
        let watched = if measurements_given {
            measurements.clone()
        } else {
            vec![PRIMARY.to_string()]
        };
        let (threshold_pct, thresholds) = split_thresholds(&args.threshold);
        Ok(CompareOptions {
            files: args.files.clone(),
            threshold_pct,
            thresholds,
            measurements,
            measurements_given,
            watched,
            fail_on_regression: args.fail_on_regression,
            fail_on_inconclusive: args.fail_on_inconclusive,
            measure: args.measure.clone(),
            json: args.json.clone(),
            markdown: args.markdown.clone(),
            html: args.html.clone(),
            view,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(measurements: &[&str], measure: &[(&str, Better)]) -> CompareArgs {
        CompareArgs {
            files: vec!["a.json".into(), "b.json".into()],
            threshold: vec![],
            json: None,
            markdown: None,
            html: None,
            measurements: measurements.iter().map(|s| s.to_string()).collect(),
            fail_on_regression: true,
            fail_on_inconclusive: false,
            measure: measure.iter().map(|(id, b)| (id.to_string(), *b)).collect(),
            limits: vec![],
            view: Default::default(),
        }
    }

    #[test]
    fn the_gate_watches_the_primary_unless_told_otherwise() {
        let o = CompareOptions::try_from(&args(&[], &[])).unwrap();
        assert_eq!(o.watched, vec![PRIMARY]);
        assert!(!o.measurements_given);
        let o = CompareOptions::try_from(&args(&[" app.rss", ""], &[])).unwrap();
        assert_eq!(o.watched, vec!["app.rss"]);
        assert_eq!(o.measurements, vec!["app.rss"]);
        assert!(o.measurements_given);
    }

    #[test]
    fn one_id_declared_both_ways_is_a_usage_error() {
        let both = [("cmd.x", Better::Higher), ("cmd.x", Better::Lower)];
        let e = CompareOptions::try_from(&args(&[], &both)).unwrap_err();
        assert_eq!(e.exit(), crate::exit::Exit::Usage);
        assert!(e.text().contains("cmd.x=higher"), "{}", e.text());
    }
}
