//! Dates for `--since` and the stored start times, as seconds since the Unix epoch:
//! `2026-11-01` (midnight UTC) and RFC 3339 (`2026-11-01T12:00:00Z`,
//! `2026-11-01T12:00:00.5+02:00`).

use super::error::HistoryError;
use jiff::civil::Date;
use jiff::tz::Offset;
use jiff::Timestamp;

/// Now, as the store dates a run it writes and a migration it applies: UTC, whole seconds
/// (`2026-11-30T02:15:04Z`), the form results give their own times in.
pub fn now_rfc3339() -> String {
    let now = Timestamp::from_second(Timestamp::now().as_second()).unwrap_or(Timestamp::UNIX_EPOCH);
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Seconds since the epoch of `text`, or why it is not a date.
pub fn parse(text: &str) -> Result<i64, HistoryError> {
    let t = text.trim();
    let instant = if t.len() == 10 {
        // `2026-02-30` is a typo, not March 2nd: a day the month does not have is refused.
        t.parse::<Date>().ok().and_then(|d| {
            Offset::UTC
                .to_timestamp(d.to_datetime(jiff::civil::Time::midnight()))
                .ok()
        })
    } else {
        // The seconds are required, as RFC 3339 has them.
        t.parse::<Timestamp>().ok().filter(|_| has_seconds(t))
    };
    instant
        .map(|i| i.as_second())
        .ok_or_else(|| HistoryError::NotADate(text.to_string()))
}

/// Whether the time of day in an instant gives its seconds (`HH:MM:SS`), not just `HH:MM`.
fn has_seconds(instant: &str) -> bool {
    instant
        .get(11..)
        .is_some_and(|clock| clock.get(5..6) == Some(":"))
}

#[cfg(test)]
mod tests {
    use super::{now_rfc3339, parse};

    #[test]
    fn now_is_whole_seconds_in_utc_and_reads_back_as_the_clock() {
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let now = now_rfc3339();
        let after = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        assert_eq!(now.len(), "2026-11-30T02:15:04Z".len(), "{now}");
        assert!(now.ends_with('Z'), "{now}");
        let read = parse(&now).unwrap();
        assert!(
            before <= read && read <= after,
            "{before} <= {read} <= {after}"
        );
    }

    #[test]
    fn dates_and_rfc3339_instants() {
        assert_eq!(parse("1970-01-01").ok(), Some(0));
        assert_eq!(parse("2026-11-30T02:15:04Z").ok(), Some(1_796_004_904));
        assert_eq!(parse("2000-02-29").ok(), Some(951_782_400));
        assert_eq!(parse("2024-02-29").ok(), Some(1_709_164_800));
        assert_eq!(parse("2026-11-30T04:15:04+02:00").ok(), Some(1_796_004_904));
        assert_eq!(
            parse("2026-11-30T00:15:04.250-02:00").ok(),
            Some(1_796_004_904)
        );
        assert_eq!(parse("2026-11-30t02:15:04z").ok(), Some(1_796_004_904));
        for bad in [
            "yesterday",
            "2026-11-0\u{e9}",
            "2026-13-01",
            "2026-02-29",
            "2026-04-31",
            "2100-02-29",
            "2026-11-01T25:00:00Z",
            "2026-11-01T10:00",
            "2026-11-01T10:00Z",
            "2026-11-01T10:00:00",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
    }
}
