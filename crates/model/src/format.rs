//! Number formatting shared by every report, so the terminal, markdown and compare tables agree
//! digit for digit (users paste them side by side in issues and pull requests).

/// Formats a figure the way crank's tables do: thousands separators for big numbers, a few
/// decimals for small ones, integers without a fraction.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    // Past a quadrillion (or below a trillionth) digits stop being readable: 1.23e308.
    if a >= 1e15 || (a > 0.0 && a < 1e-12) {
        return format!("{v:.3e}");
    }
    let decimals = if v.fract() == 0.0 || a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        // Two significant digits at least: 0.57, 0.012, 0.0034.
        (1 - a.log10().floor() as i32).max(2) as usize
    };
    let text = format!("{:.*}", decimals, a);
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i.to_string(), Some(f.to_string())),
        None => (text, None),
    };
    let mut out = String::new();
    if v < 0.0 && text_is_nonzero(&int, frac.as_deref()) {
        out.push('-');
    }
    out.push_str(&group_thousands(&int));
    if let Some(f) = frac {
        out.push('.');
        out.push_str(&f);
    }
    out
}

fn text_is_nonzero(int: &str, frac: Option<&str>) -> bool {
    int.chars()
        .chain(frac.unwrap_or("").chars())
        .any(|c| c != '0')
}

/// Inserts `,` every three digits of an unsigned integer string: `1232440` → `1,232,440`.
fn group_thousands(digits: &str) -> String {
    let groups: Vec<&str> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|g| std::str::from_utf8(g).unwrap_or(""))
        .collect();
    groups.join(",")
}

/// A signed percentage with one decimal (`+2.7%`, `-0.1%`): a change reads differently from a level.
pub fn signed_pct(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}%");
    }
    let text = format!("{:.1}", v.abs());
    let sign = if text.chars().all(|c| c == '0' || c == '.') {
        ""
    } else if v < 0.0 {
        "-"
    } else {
        "+"
    };
    let (int, frac) = text.split_once('.').unwrap_or((&text, "0"));
    format!("{sign}{}.{frac}%", group_thousands(int))
}

/// The noise beside a median: `±1.3%` (coefficient of variation in percent).
pub fn cv_pct(cv_percent: f64) -> String {
    if !cv_percent.is_finite() {
        return "±?".to_string();
    }
    format!("±{:.1}%", cv_percent.abs())
}

/// A confidence interval of a change: `[-1.2%, +3.4%]`.
pub fn ci(low: f64, high: f64) -> String {
    format!("[{}, {}]", signed_pct(low), signed_pct(high))
}

/// A p-value without false precision: `<0.001`, `0.042`, `0.43`.
pub fn p_value(p: f64) -> String {
    if !p.is_finite() {
        "?".to_string()
    } else if p < 0.001 {
        "<0.001".to_string()
    } else if p < 0.1 {
        format!("{p:.3}")
    } else {
        format!("{p:.2}")
    }
}

/// Bytes in binary units (`512 B`, `1.5 KiB`, `3.2 MiB`): request bytes outside the window.
pub fn bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut unit = 0;
    while v.abs() >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{} B", number(v.round()))
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// A confidence as people read it: `95%`, or `99.6%` for a look's nominal level.
pub fn confidence_label(confidence: f64) -> String {
    let pct = confidence * 100.0;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}%")
    } else {
        let s = format!("{pct:.2}");
        format!("{}%", s.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// Control characters in text (an escape sequence in a description or an error message could
/// clear the screen, move the cursor or retitle the terminal) are shown as `\u{1b}`-style
/// escapes; line breaks and tabs stay. Markdown, HTML and CSV use it too, so a file holds the
/// same visible text the terminal shows.
pub fn visible(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_like_crank() {
        assert_eq!(number(1_232_440.0), "1,232,440");
        assert_eq!(number(1_232_440.4), "1,232,440");
        assert_eq!(number(2540.0), "2,540");
        assert_eq!(number(1146.88), "1,147");
        assert_eq!(number(764.86), "764.9");
        assert_eq!(number(57.32), "57.32");
        assert_eq!(number(1.0), "1");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(0.57), "0.57");
        assert_eq!(number(0.0123), "0.012");
        assert_eq!(number(-1234.0), "-1,234");
        assert_eq!(number(-0.0001), "-0.00010");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(999.0), "999");
        assert_eq!(number(100.0), "100");
        assert_eq!(number(1e308), "1.000e308");
        assert_eq!(number(-2.5e-13), "-2.500e-13");
        assert_eq!(number(999_999_999_999_999.0), "999,999,999,999,999");
    }

    #[test]
    fn percentages() {
        assert_eq!(signed_pct(2.684), "+2.7%");
        assert_eq!(signed_pct(-0.0767), "-0.1%");
        assert_eq!(signed_pct(0.01), "0.0%");
        assert_eq!(signed_pct(-0.01), "0.0%");
        assert_eq!(signed_pct(-12345.0), "-12,345.0%");
        assert_eq!(cv_pct(1.26), "±1.3%");
        assert_eq!(ci(-1.23, 3.4), "[-1.2%, +3.4%]");
        assert_eq!(p_value(0.0001), "<0.001");
        assert_eq!(p_value(0.0421), "0.042");
        assert_eq!(p_value(0.4321), "0.43");
    }

    #[test]
    fn byte_units() {
        assert_eq!(bytes(0.0), "0 B");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(bytes(3.0 * 1024.0 * 1024.0), "3.0 MiB");
    }
}
