//! `rigor compare`: its flags, and the wiring from them to the comparison: options → read the
//! saved results → match and compare (`analysis`) → report → the gate's exit code.

use crate::analysis::matching::{self, Request};
use crate::analysis::pivot_merge;
use crate::analysis::{gate, merge, saved};
use crate::declarations::{self, Better};
use crate::exit::Exit;
use crate::failure::Failure;
use crate::options::compare::CompareOptions;
use crate::report::pivot_blocks;
use crate::threshold::{parse_threshold_arg, ThresholdArg};
use std::path::PathBuf;

/// Flags of `rigor compare` (a stable contract: scripts depend on their names).
#[derive(clap::Args, Debug, Clone)]
pub struct CompareArgs {
    /// Result files written by `rigor run --json`; the first is the baseline, each other a
    /// candidate column. One file alone: its own variants compared again, round by round, as
    /// `rigor run` compared them (with this threshold and the run's recorded looks).
    #[arg(required = true, num_args = 1.., value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,
    /// Practical threshold: changes whose whole 95% interval stays within ±this are "no change"
    /// (`2` or `2%`; default 2%). ID=PCT sets one measurement's own, over what the files
    /// declare (repeat the flag), e.g. --threshold app.rss=1%.
    #[arg(long, value_parser = parse_threshold_arg, value_name = "PCT|ID=PCT")]
    pub threshold: Vec<ThresholdArg>,
    /// Also write the comparison as JSON (`rigor.compare.v1`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the comparison as GitHub markdown (ready for a PR comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write the comparison as one self-contained HTML page: the tables plus a chart per
    /// measurement (each change with its interval, coloured by verdict).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Measurement ids `--fail-on-regression` and `--fail-on-inconclusive` watch,
    /// comma-separated (default: load.rps).
    /// The table always shows every measurement the files have in common.
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub measurements: Vec<String>,
    /// Exit with code 3 when a watched measurement regressed.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Exit with code 5 when a watched measurement is inconclusive and none regressed (exit 3
    /// with `--fail-on-regression` wins): for `git bisect run` scripts, which would read exit 0
    /// as "good".
    #[arg(long)]
    pub fail_on_inconclusive: bool,
    /// Which direction is better for a measurement id rigor does not know (`ID=higher` or
    /// `ID=lower`; repeat or comma-separate). Overrides the `[measurements.ID]` declarations the
    /// result files carry; ids with neither get no verdict.
    #[arg(long = "measure", value_delimiter = ',', value_name = "ID=higher|lower",
          value_parser = declarations::parse_flag)]
    pub measure: Vec<(String, Better)>,
    /// A pass/fail bound checked on the median of every row of every file (repeat the flag),
    /// as `rigor run --limit`: 'load.latency.p99<50ms'. A limit not met exits 6.
    #[arg(long = "limit", value_name = "ID<VALUE|ID>VALUE")]
    pub limits: Vec<String>,
    #[command(flatten)]
    pub view: super::view::ViewArgs,
}

/// `--key` ids that neither the catalogue nor any of the files knows (measured in an iteration
/// or declared), each with the closest known ids: a typo would otherwise only read "not
/// compared" in the headline.
fn unknown_key(inputs: &[saved::Saved], key: &[String]) -> Option<String> {
    let mut known: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for (_, r) in inputs {
        known.extend(r.measurements.keys().map(String::as_str));
        for row in &r.rows {
            for it in &row.iterations {
                known.extend(it.measurements.keys().map(String::as_str));
            }
        }
    }
    let problems: Vec<String> = key
        .iter()
        .filter(|id| crate::measurements::info(id).is_none() && !known.contains(id.as_str()))
        .map(|id| {
            let candidates =
                (crate::measurements::CATALOGUE.iter().map(|m| m.id)).chain(known.iter().copied());
            format!(
                "--key: unknown measurement `{id}` (no file measured or declared it){}",
                crate::measurements::closest_note(id, candidates)
            )
        })
        .collect();
    (!problems.is_empty()).then(|| problems.join("\nerror: "))
}

/// Runs `rigor compare`: 0, or 3 for a watched regression with `--fail-on-regression`, or 6
/// for a `--limit` some file's row does not meet, or 5 for a watched inconclusive verdict with
/// `--fail-on-inconclusive`. Bad flags are usage
/// failures (exit 2); an unreadable file, one that is not a result, or nothing to compare fail
/// (exit 1).
pub fn execute(args: &CompareArgs) -> Result<Exit, Failure> {
    let options = CompareOptions::try_from(args)?;
    let inputs = saved::load_all(&options.files)?;
    let names = saved::column_names(&inputs);
    // A pivot nobody could show is a usage error before anything is compared (the default
    // view has nothing to check, and merging many rows only to check nothing costs memory).
    if options.view.pivot.is_some() || options.view.pivot_by.is_some() {
        let rows = pivot_merge::merged(&inputs, &names, &[]);
        if let Some(e) = pivot_blocks::problem(&rows, &options.view) {
            return Err(Failure::usage(e));
        }
    }
    if let Some(e) = unknown_key(&inputs, &options.view.key) {
        return Err(Failure::usage(e));
    }
    let mut report = matching::compare_results(
        &inputs,
        &Request {
            extra: &options.measurements,
            threshold_pct: options.threshold_pct,
            flags: &options.measure,
            thresholds: &options.thresholds,
        },
    )?;
    if options.measurements_given {
        if let Some(e) = matching::missing_watched(&report, &options.watched) {
            return Err(anyhow::anyhow!(e).into());
        }
    }
    if options.fail_on_regression || options.fail_on_inconclusive {
        if let Some(e) = ungateable(&inputs, &report, &options) {
            return Err(Failure::usage(e));
        }
    }
    // Read against the declarations the files carry (a command's figure takes its unit).
    let limits = args
        .limits
        .iter()
        .map(|t| crate::analysis::limits::parse_flag(t, &report.measurements))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::usage)?;
    let checked: Vec<(String, Vec<crate::analysis::limits::Outcome>)> = names
        .iter()
        .zip(&inputs)
        .map(|(name, (_, r))| (name.clone(), crate::analysis::limits::check(&limits, r)))
        .collect();
    // Profiles on both sides of a pair are diffed again; the flame graphs go beside the first
    // report file asked for.
    let svg_at = [&options.html, &options.json, &options.markdown]
        .into_iter()
        .flatten()
        .next()
        .map(|f| {
            let dir = f.parent().filter(|d| !d.as_os_str().is_empty());
            let stem = f.file_stem().unwrap_or_default().to_string_lossy();
            (
                dir.unwrap_or(std::path::Path::new(".")).to_path_buf(),
                stem.into_owned(),
            )
        });
    let mut notes = Vec::new();
    report.profiles = super::compare_profiles::rediff(
        &inputs,
        &names,
        &report.comparisons,
        svg_at.as_ref().map(|(d, s)| (d.as_path(), s.as_str())),
        &mut notes,
    );
    report.warnings.extend(
        notes
            .into_iter()
            .map(|n| crate::result::Warning::of(crate::result::WarningKind::CpuProfile, n)),
    );
    // Nothing reads the files' rows after this: they move into the pivot's merge instead of
    // being copied, and go once the pivot tables hold what they show (with many rows they are
    // the largest thing alive).
    let rows = pivot_merge::merged_owned(inputs, &names, &report.comparisons);
    let pivot = pivot_blocks::blocks(&rows, &options.view);
    // The terminal's own: a scenario's tables of the same columns joined, as `rigor run` shows.
    let terminal_pivot = pivot_blocks::blocks(&rows, &options.view.on_terminal());
    // The default pivot (none asked for by name), which the terminal leaves out when its
    // comparison table already shows each row of it.
    let pivot_of = (options.view.pivot.is_none() && options.view.pivot_by.is_none())
        .then(|| crate::report::pivot::default_measurement(&rows))
        .flatten();
    drop(rows);
    super::compare_publish::publish(
        &report,
        &pivot,
        &super::compare_publish::Outputs {
            terminal_pivot: &terminal_pivot,
            json: options.json.as_ref(),
            markdown: options.markdown.as_ref(),
            html: options.html.as_ref(),
            key: crate::report::compare::Key {
                ids: &options.view.key,
                primary: options.watched.first().map(String::as_str),
            },
            all_measurements: options.view.all_measurements,
            pivot_of: pivot_of.as_deref(),
        },
    )?;
    let rules = gate::Rules {
        fail_on_regression: options.fail_on_regression,
        watched: &options.watched,
        strict: &gate::Strictness::Off,
    };
    let limit_blocks = crate::report::limits::per_file(&checked);
    if !limit_blocks.is_empty() {
        let doc = crate::report::Document {
            blocks: limit_blocks,
        };
        crate::console::out(&crate::report::terminal::render_document(
            &doc,
            crate::report::terminal::use_color(),
        ));
    }
    let failed_limits = checked
        .iter()
        .flat_map(|(_, o)| o)
        .filter(|o| !o.passed)
        .count();
    let mut decision = gate::decide(&report.comparisons, false, &[], &rules).limits(failed_limits);
    if options.fail_on_inconclusive {
        decision = decision.fail_on_inconclusive(&report.comparisons, &options.watched);
    }
    for line in decision.messages() {
        crate::console::err(&line);
    }
    Ok(decision.gate.into())
}

/// Why the gate flags cannot judge what they watch: a watched id with no direction, or (under
/// `--fail-on-inconclusive`, where passing means "good" to `git bisect`) the default primary
/// missing from the files.
fn ungateable(
    inputs: &[saved::Saved],
    report: &matching::CompareReport,
    options: &CompareOptions,
) -> Option<String> {
    if let Some(e) = merge::unjudgeable(
        inputs,
        &report.comparisons,
        &report.measurements,
        &options.watched,
    ) {
        // The message names the flag that watches; say the one given.
        return Some(if options.fail_on_regression {
            e
        } else {
            e.replacen("--fail-on-regression", "--fail-on-inconclusive", 1)
        });
    }
    if options.fail_on_inconclusive && !options.measurements_given {
        let e = matching::missing_watched(report, &options.watched)?;
        return Some(format!(
            "--fail-on-inconclusive watches {} unless --measurements names others: {}",
            crate::options::compare::PRIMARY,
            e.trim_start_matches("--measurements: ")
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::matching::tests::{noisy, result};
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: CompareArgs,
    }

    #[test]
    fn args_parse() {
        let cli = Cli::try_parse_from([
            "x",
            "a.json",
            "b.json",
            "--threshold",
            "5",
            "--measurements",
            "load.rps,app.rss",
        ])
        .unwrap();
        assert_eq!(cli.args.threshold, vec![ThresholdArg::Global(5.0)]);
        assert_eq!(cli.args.measurements, vec!["load.rps", "app.rss"]);
        assert!(!cli.args.fail_on_regression);
        let cli = Cli::try_parse_from(["x", "a.json", "b.json"]).unwrap();
        assert!(cli.args.threshold.is_empty());
        assert!(Cli::try_parse_from(["x", "a.json"]).is_ok());
        assert!(Cli::try_parse_from(["x"]).is_err());
    }

    #[test]
    fn execute_exits_3_on_a_watched_regression() {
        let dir = std::env::temp_dir().join(format!("rigor-cmp-exec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.json");
        let b = dir.join("b.json");
        std::fs::write(
            &a,
            serde_json::to_string(&result(None, &noisy(1000.0, 10), "6.8")).unwrap(),
        )
        .unwrap();
        std::fs::write(
            &b,
            serde_json::to_string(&result(None, &noisy(900.0, 10), "6.8")).unwrap(),
        )
        .unwrap();
        let out = dir.join("out.json");
        let args = |extra: &[&str]| {
            let mut v = vec![
                "x".to_string(),
                a.display().to_string(),
                b.display().to_string(),
            ];
            v.extend(extra.iter().map(|s| s.to_string()));
            Cli::try_parse_from(v).unwrap().args
        };
        let out_s = out.display().to_string();
        assert_eq!(
            execute(&args(&["--fail-on-regression", "--json", &out_s])).unwrap(),
            Exit::Regression
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(json["schema"], "rigor.compare.v1");
        assert_eq!(execute(&args(&[])).unwrap(), Exit::Success);
        // Watching only memory (unchanged): no failure.
        assert_eq!(
            execute(&args(&[
                "--fail-on-regression",
                "--measurements",
                "app.rss"
            ]))
            .unwrap(),
            Exit::Success
        );
        // Limits on each file's rows: b's 900/s misses a 950/s floor (exit 6) unless a
        // watched regression decides first (exit 3).
        assert_eq!(
            execute(&args(&["--limit", "load.rps>950"])).unwrap(),
            Exit::Limit
        );
        assert_eq!(
            execute(&args(&["--limit", "load.rps>0"])).unwrap(),
            Exit::Success
        );
        assert_eq!(
            execute(&args(&["--limit", "load.rps>950", "--fail-on-regression"])).unwrap(),
            Exit::Regression
        );
        let bad = execute(&args(&["--limit", "load.rps>5ms"])).unwrap_err();
        assert_eq!(bad.exit(), Exit::Usage);
        assert!(bad.text().contains("`5ms`"), "{}", bad.text());
        let failure = execute(&args(&["--measurements", "load.rpz"])).unwrap_err();
        assert_eq!(failure.exit(), Exit::Failed);
        let err = failure.text();
        assert!(err.contains("`load.rpz` was not measured"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn contradicting_measure_flags_are_a_usage_failure() {
        let cli = Cli::try_parse_from([
            "x",
            "a.json",
            "b.json",
            "--measure",
            "cmd.x=higher,cmd.x=lower",
        ])
        .unwrap();
        let failure = execute(&cli.args).unwrap_err();
        assert_eq!(failure.exit(), Exit::Usage);
        assert!(
            failure.text().contains("cmd.x=higher"),
            "{}",
            failure.text()
        );
    }
}
