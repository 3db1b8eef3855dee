//! Dates for `--since` and the stored start times, as seconds since the Unix epoch, without a
//! date-time dependency: `2026-11-01` (midnight UTC) and RFC 3339 (`2026-11-01T12:00:00Z`,
//! `2026-11-01T12:00:00.5+02:00`).

use super::error::HistoryError;

/// Seconds since the epoch of `text`, or why it is not a date.
pub fn parse(text: &str) -> Result<i64, HistoryError> {
    let bad = || HistoryError::NotADate(text.to_string());
    let t = text.trim();
    let cut = t.len().min(10);
    if !t.is_char_boundary(cut) {
        return Err(bad());
    }
    let (date, rest) = t.split_at(cut);
    let day = days(date).ok_or_else(bad)?;
    if rest.is_empty() {
        return Ok(day * 86_400);
    }
    let rest = rest.strip_prefix(['T', 't', ' ']).ok_or_else(bad)?;
    let (clock, offset) = split_offset(rest).ok_or_else(bad)?;
    let secs = clock_secs(clock).ok_or_else(bad)?;
    Ok(day * 86_400 + secs - offset)
}

/// Days since the epoch of `YYYY-MM-DD` (Howard Hinnant's days-from-civil).
fn days(date: &str) -> Option<i64> {
    let b = date.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y: i64 = date[0..4].parse().ok()?;
    let m: i64 = date[5..7].parse().ok()?;
    let d: i64 = date[8..10].parse().ok()?;
    // `2026-02-30` is a typo, not March 2nd: a day the month does not have is refused.
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&m) || !(1..=month_days).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// `HH:MM:SS[.frac]` and the offset after it, in seconds east of UTC.
fn split_offset(rest: &str) -> Option<(&str, i64)> {
    if let Some(clock) = rest.strip_suffix(['Z', 'z']) {
        return Some((clock, 0));
    }
    let at = rest.rfind(['+', '-'])?;
    let (clock, off) = rest.split_at(at);
    let sign = if off.starts_with('-') { -1 } else { 1 };
    let (h, m) = off[1..].split_once(':')?;
    let h: i64 = h.parse().ok()?;
    let m: i64 = m.parse().ok()?;
    (h < 24 && m < 60).then_some((clock, sign * (h * 3600 + m * 60)))
}

/// Seconds into the day of `HH:MM:SS[.frac]` (the fraction is dropped).
fn clock_secs(clock: &str) -> Option<i64> {
    let whole = clock.split('.').next()?;
    let mut parts = whole.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let s: i64 = parts.next()?.parse().ok()?;
    (parts.next().is_none() && h < 24 && m < 60 && s <= 60).then_some(h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::parse;

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
        for bad in [
            "yesterday",
            "2026-11-0\u{e9}",
            "2026-13-01",
            "2026-02-29",
            "2026-04-31",
            "2100-02-29",
            "2026-11-01T25:00:00Z",
            "2026-11-01T10:00",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.to_string().contains(bad), "{e}");
        }
    }
}
