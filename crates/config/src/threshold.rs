//! Practical thresholds as people write them (`2`, `2%`, `app.rss=1%`): read by the command
//! line's flags and by the config's `[measurements.ID] threshold`, so neither layer imports
//! the other for it.

/// Accepts `2`, `2%` or `2.5 %`: how people write a threshold (`--threshold` of `rigor run` and
/// `rigor compare`). Only a percentage strictly between 0 and 100 is one: a change within ±0%
/// or ±100% would make every verdict a regression or none.
pub fn parse_threshold(s: &str) -> Result<f64, ThresholdError> {
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim();
    match t.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v),
        _ => Err(format!(
            "`{s}` is not a threshold: expected a percentage above 0% and below 100%, such as \
             2 or 2%"
        )
        .into()),
    }
}

/// One `--threshold`: the global threshold (`2%`), or one measurement's own (`app.rss=1%`).
#[derive(Debug, Clone, PartialEq)]
pub enum ThresholdArg {
    Global(f64),
    For(String, f64),
}

/// Reads `--threshold PCT` or `--threshold ID=PCT`.
pub fn parse_threshold_arg(s: &str) -> Result<ThresholdArg, ThresholdError> {
    match s.split_once('=') {
        Some((id, pct)) => {
            let id = id.trim();
            if id.is_empty() {
                return Err(format!("`{s}`: the measurement id before `=` is empty").into());
            }
            Ok(ThresholdArg::For(id.to_string(), parse_threshold(pct)?))
        }
        None => parse_threshold(s).map(ThresholdArg::Global),
    }
}

/// The global threshold when none is given, in %.
pub const DEFAULT_THRESHOLD: f64 = 2.0;

/// The global threshold (the last `--threshold PCT`, else [`DEFAULT_THRESHOLD`]) and each
/// measurement's own (the last given for an id wins).
pub fn split_thresholds(args: &[ThresholdArg]) -> (f64, Vec<(String, f64)>) {
    let mut global = DEFAULT_THRESHOLD;
    let mut per: Vec<(String, f64)> = Vec::new();
    for a in args {
        match a {
            ThresholdArg::Global(t) => global = *t,
            ThresholdArg::For(id, t) => {
                per.retain(|(i, _)| i != id);
                per.push((id.clone(), *t));
            }
        }
    }
    (global, per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds() {
        assert_eq!(parse_threshold("2%"), Ok(2.0));
        assert_eq!(parse_threshold("2.5"), Ok(2.5));
        assert_eq!(parse_threshold(" 1 % "), Ok(1.0));
        assert!(parse_threshold("-1").is_err());
        assert!(parse_threshold("two").is_err());
        for bad in [
            "101%", "100", "0", "0%", "-2%", "NaN", "nan%", "inf", "abc%", "%", "",
        ] {
            let e = parse_threshold(bad).unwrap_err().0;
            assert_eq!(
                e,
                format!(
                    "`{bad}` is not a threshold: expected a percentage above 0% and below 100%, \
                     such as 2 or 2%"
                ),
                "{bad}"
            );
        }
        assert_eq!(parse_threshold("99.9%"), Ok(99.9));
        assert_eq!(parse_threshold("0.01%"), Ok(0.01));
        assert_eq!(
            parse_threshold_arg(" app.rss = 1%"),
            Ok(ThresholdArg::For("app.rss".into(), 1.0))
        );
        assert_eq!(parse_threshold_arg("5%"), Ok(ThresholdArg::Global(5.0)));
        assert!(parse_threshold_arg("=1%").is_err());
        assert!(parse_threshold_arg("app.rss=x").is_err());
        let (global, per) = split_thresholds(&[
            ThresholdArg::For("app.rss".into(), 1.0),
            ThresholdArg::Global(5.0),
            ThresholdArg::For("app.rss".into(), 3.0),
        ]);
        assert_eq!((global, per), (5.0, vec![("app.rss".to_string(), 3.0)]));
        assert_eq!(split_thresholds(&[]).0, DEFAULT_THRESHOLD);
    }
}

/// Why a threshold as written was refused, in words that name the flag's or key's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ThresholdError(pub String);

impl From<String> for ThresholdError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ThresholdError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// The message alone, for the callers that still report errors as text.
impl From<ThresholdError> for String {
    fn from(e: ThresholdError) -> String {
        e.0
    }
}
