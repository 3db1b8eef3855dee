//! Human durations (`10s`, `250ms`, `2m`, `1.5s`) for flags and config, so both read alike.

use std::time::Duration;

/// The longest duration any flag or key accepts. Anything longer is a typo, and bounding it
/// keeps every clock sum and every per-second table sized by a duration small and exact.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// Why a duration was refused; each message quotes the text as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("invalid duration `{0}`: expected a number and a unit like 10s, 250ms or 2m")]
    NotANumber(String),
    #[error("invalid duration `{text}`: unknown unit `{unit}` (use us, ms, s, m or h)")]
    UnknownUnit { text: String, unit: String },
    #[error("invalid duration `{0}`: longer than the limit of {hours}h", hours = MAX_DURATION.as_secs() / 3600)]
    TooLong(String),
}

/// The message alone, for the callers that still report errors as text.
impl From<DurationError> for String {
    fn from(e: DurationError) -> String {
        e.to_string()
    }
}

/// Parses `500ms`, `10s`, `1.5s`, `2m`, `1h`, `750us`; a bare number is seconds. Values above
/// [`MAX_DURATION`] are refused with a message that says so.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| DurationError::NotANumber(text.to_string()))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" | "secs" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(DurationError::UnknownUnit {
                text: text.to_string(),
                unit: other.to_string(),
            })
        }
    };
    // Digits and dots only, so never negative; infinite when the number overflows.
    if secs.is_nan() || secs > MAX_DURATION.as_secs_f64() {
        return Err(DurationError::TooLong(text.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("750us").unwrap(), Duration::from_micros(750));
        assert_eq!(parse_duration("24h").unwrap(), MAX_DURATION);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_duration("ten")
            .unwrap_err()
            .to_string()
            .contains("ten"));
        assert!(parse_duration("5 parsecs")
            .unwrap_err()
            .to_string()
            .contains("parsecs"));
        assert!(parse_duration("").is_err());
        assert!(parse_duration(".").is_err());
        assert!(parse_duration("1e3s").is_err());
    }

    #[test]
    fn refuses_absurd_lengths_instead_of_overflowing() {
        for t in [
            "99999999999999999999999h",
            "18446744074s",
            "999999h",
            "24.001h",
            &"9".repeat(400),
        ] {
            let e = parse_duration(t).unwrap_err().to_string();
            assert!(e.contains("limit of 24h"), "{t}: {e}");
        }
    }
}
