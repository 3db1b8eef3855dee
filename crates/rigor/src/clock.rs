//! Wall-clock timestamps for results (UTC, RFC 3339, whole seconds).

use jiff::Timestamp;

/// `2026-11-30T02:15:04Z`.
pub fn now_rfc3339() -> String {
    format_unix(Timestamp::now().as_second())
}

/// `20261130-021504`, for folder names.
pub fn now_compact() -> String {
    format_compact(Timestamp::now().as_second())
}

fn format_compact(secs: i64) -> String {
    second(secs).strftime("%Y%m%d-%H%M%S").to_string()
}

fn format_unix(secs: i64) -> String {
    second(secs).strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The instant `secs` after the epoch; one outside jiff's range (never a clock's) is the epoch.
fn second(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_known_instants() {
        assert_eq!(super::format_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::format_unix(1_796_004_904), "2026-11-30T02:15:04Z");
        assert_eq!(super::format_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::format_compact(1_796_004_904), "20261130-021504");
        assert_eq!(super::format_compact(951_782_400), "20000229-000000");
    }
}
