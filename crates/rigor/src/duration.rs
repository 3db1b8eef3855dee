//! Human durations (`10s`, `250ms`, `2m`, `1.5s`) for flags and config, so both read alike.

use std::time::Duration;

/// Parses `500ms`, `10s`, `1.5s`, `2m`, `1h`, `750us`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        format!("invalid duration `{text}`: expected a number and a unit like 10s, 250ms or 2m")
    })?;
    let secs = match unit.trim() {
        "" | "s" | "sec" | "secs" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "invalid duration `{text}`: unknown unit `{other}` (use us, ms, s, m or h)"
            ))
        }
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("invalid duration `{text}`: must be zero or more"));
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
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_duration("ten").unwrap_err().contains("ten"));
        assert!(parse_duration("5 parsecs").unwrap_err().contains("parsecs"));
        assert!(parse_duration("").is_err());
    }
}
