//! Flags of `rigor run` turned into checked values before anything starts (usage errors: exit 2).

use crate::cli::run::RunArgs;
use crate::config::{Problems, MAX_ITERATIONS};
use crate::duration::parse_duration;
use crate::options::run::{parse_exclude, parse_vars};
use std::time::Duration;

/// The parsed, checked flags that need parsing.
pub struct Settings {
    pub exclude: Option<(usize, usize)>,
    pub threshold: f64,
    pub sample_interval: Duration,
}

/// Parses and checks the flags; every bad flag is reported, each naming the flag.
pub fn parse(args: &RunArgs) -> Result<Settings, Problems> {
    let mut p = Problems::default();
    let sample_interval = match parse_duration(&args.sample_interval) {
        Ok(d) if !d.is_zero() => d,
        Ok(_) => {
            p.add("--sample-interval must be more than 0".into());
            Duration::ZERO
        }
        Err(e) => {
            p.add(format!("--sample-interval: {e}"));
            Duration::ZERO
        }
    };
    for id in std::iter::once(&args.primary)
        .chain(args.measurements.iter().flatten())
        .chain(std::iter::once(&args.exclude_order))
    {
        p.take(crate::measurements::validate(id));
    }
    for (flag, n) in [
        ("-i/--iterations", args.iterations),
        ("--until-conclusive", args.until_conclusive),
    ] {
        match n {
            Some(0) => p.add(format!("{flag} must be at least 1")),
            Some(n) if n > MAX_ITERATIONS => p.add(format!(
                "{flag} {n} is more than the limit of {MAX_ITERATIONS} iterations per row"
            )),
            _ => {}
        }
    }
    for (flag, names) in [
        ("-s/--scenario", Some(&args.scenarios)),
        ("--variants", args.variants.as_ref()),
    ] {
        for (i, name) in names.into_iter().flatten().enumerate() {
            if name.trim().is_empty() {
                p.add(format!("{flag}: an empty name in the list"));
            } else if names.is_some_and(|n| n[..i].contains(name)) {
                p.add(format!("{flag}: `{name}` is selected twice"));
            }
        }
    }
    p.take(parse_vars(&args.vars));
    let exclude = p.take(args.exclude.as_deref().map(parse_exclude).transpose());
    if let Some(Some((low, high))) = exclude {
        if low.max(high) > MAX_ITERATIONS {
            p.add(format!(
                "--exclude {low}:{high}: more than the limit of {MAX_ITERATIONS} iterations per row"
            ));
        }
    }
    p.or_ok(Settings {
        exclude: exclude.flatten(),
        threshold: args.threshold,
        sample_interval,
    })
}
