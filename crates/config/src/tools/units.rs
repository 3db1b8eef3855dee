//! The human units load tools print (`552.12us`, `1.12ms`, `8.17MB`, `21.49k`), read back into
//! rigor's units: milliseconds and bytes.

/// A duration such as `552.12us`, `1.12ms`, `19.37s`, `1.00m` or `2h`, in milliseconds.
pub fn duration_ms(text: &str) -> Option<f64> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic() || c == 'µ')?;
    let (number, unit) = t.split_at(split);
    let n: f64 = number.trim().parse().ok()?;
    let scale = match unit {
        "ns" => 1e-6,
        "us" | "µs" => 1e-3,
        "ms" => 1.0,
        "s" => 1e3,
        "m" => 60e3,
        "h" => 3600e3,
        _ => return None,
    };
    // Rounded to the nanosecond, so `2.01s` reads as 2010 ms and not 2009.9999999999998.
    Some((n * scale * 1e6).round() / 1e6)
}

/// A size such as `8.17MB`, `976.27KB`, `0B` or `1.56KB` (powers of 1024, as wrk and h2load
/// print them), in bytes.
pub fn bytes(text: &str) -> Option<f64> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = t.split_at(split);
    let n: f64 = number.trim().parse().ok()?;
    let power = match unit {
        "B" => 0,
        "KB" | "KiB" => 1,
        "MB" | "MiB" => 2,
        "GB" | "GiB" => 3,
        "TB" | "TiB" => 4,
        _ => return None,
    };
    Some(n * 1024f64.powi(power))
}

/// A whole count such as `85645`, as a float.
pub fn count(text: &str) -> Option<f64> {
    let t = text.trim();
    (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .then(|| t.parse::<f64>().ok())
        .flatten()
}

/// Bytes per second as MiB per second.
pub fn mib(bytes: f64) -> f64 {
    bytes / (1024.0 * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_sizes_and_counts() {
        assert_eq!(duration_ms("552.12us"), Some(0.55212));
        assert_eq!(duration_ms("1.12ms"), Some(1.12));
        assert_eq!(duration_ms("2.01s"), Some(2010.0));
        assert_eq!(duration_ms("1.00m"), Some(60000.0));
        assert_eq!(duration_ms("12"), None);
        assert_eq!(duration_ms("1.0xs"), None);
        assert_eq!(bytes("8.17MB"), Some(8.17 * 1048576.0));
        assert_eq!(bytes("524.00B"), Some(524.0));
        assert_eq!(bytes("3.5PB"), None);
        assert_eq!(count("85645"), Some(85645.0));
        assert_eq!(count("85,645"), None);
        assert_eq!(count(""), None);
    }
}
