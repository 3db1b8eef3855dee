//! Flags of `rigor run` turned into checked values before anything starts (usage errors: exit 2).

use crate::cmd_run::{parse_exclude, parse_vars, RunArgs};
use crate::duration::parse_duration;
use std::time::Duration;

/// The parsed, checked flags that need parsing.
pub struct Settings {
    pub cli_vars: Vec<(String, String)>,
    pub exclude: Option<(usize, usize)>,
    pub threshold: f64,
    pub sample_interval: Duration,
}

/// Parses and checks the flags; an error names the flag.
pub fn parse(args: &RunArgs) -> Result<Settings, String> {
    let sample_interval = match parse_duration(&args.sample_interval) {
        Ok(d) if !d.is_zero() => d,
        Ok(_) => return Err("--sample-interval must be more than 0".into()),
        Err(e) => return Err(format!("--sample-interval: {e}")),
    };
    for id in std::iter::once(&args.primary)
        .chain(args.measurements.iter().flatten())
        .chain(std::iter::once(&args.exclude_order))
    {
        crate::measurements::validate(id)?;
    }
    if args.iterations == Some(0) {
        return Err("-i/--iterations must be at least 1".into());
    }
    Ok(Settings {
        cli_vars: parse_vars(&args.vars)?,
        exclude: args.exclude.as_deref().map(parse_exclude).transpose()?,
        threshold: args.threshold,
        sample_interval,
    })
}
