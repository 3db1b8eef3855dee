//! Small text helpers shared by the readers: quoting a line of output in an error without
//! flooding the terminal, and reading a number the way people print them.

use crate::selfreport::SelfReportError;

/// How much of an offending line an error quotes.
const QUOTE_CHARS: usize = 160;

/// `line` as an error quotes it: at most [`QUOTE_CHARS`] characters (the rest counted, not
/// shown) with control characters escaped, so a 10 MB line or a terminal escape in a program's
/// output cannot bury or garble the message.
pub fn quote(line: &str) -> String {
    let mut out = String::from("`");
    for (shown, c) in line.chars().enumerate() {
        if shown == QUOTE_CHARS {
            let rest = line.chars().count() - shown;
            out.push_str(&format!("…` ({rest} more characters)"));
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('`');
    out
}

/// Reads a figure as programs print it: an optional sign, digits with an optional fraction and
/// exponent, and digit groups of three separated by `,` or `_` in the whole part (`1,234,567`,
/// `1_000`). Anything else is refused rather than guessed: `1,5` (a decimal comma or a typo),
/// `NaN`, `inf`, hex, a unit suffix, and numbers too large to be finite.
pub fn number(text: &str) -> Result<f64, SelfReportError> {
    let t = text.trim();
    if t.is_empty() {
        return Err("an empty text is not a number".into());
    }
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        || !body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-' | ',' | '_'))
    {
        return Err(format!("{} is not a number", quote(t)).into());
    }
    let plain = ungroup(t).ok_or_else(|| {
        format!(
            "{} is not a number: `,` and `_` may only separate groups of three digits in the \
             whole part, as in 1,234,567 (a decimal comma is not read)",
            quote(t)
        )
    })?;
    match plain.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{} is too large to be a finite number", quote(t)).into()),
        Err(_) => Err(format!("{} is not a number", quote(t)).into()),
    }
}

/// `t` with its digit-group separators removed, or `None` when they are not in groups of three
/// within the whole part (or mix `,` and `_`).
fn ungroup(t: &str) -> Option<String> {
    let seps: Vec<char> = t.chars().filter(|c| matches!(c, ',' | '_')).collect();
    let Some(&sep) = seps.first() else {
        return Some(t.to_string());
    };
    if seps.iter().any(|&c| c != sep) {
        return None;
    }
    let (sign, rest) = match t.strip_prefix(['+', '-']) {
        Some(r) => (&t[..1], r),
        None => ("", t),
    };
    let end = rest.find(['.', 'e', 'E']).unwrap_or(rest.len());
    let (whole, tail) = rest.split_at(end);
    if tail.contains(sep) {
        return None;
    }
    let groups: Vec<&str> = whole.split(sep).collect();
    let first_ok = (1..=3).contains(&groups[0].len());
    let rest_ok = groups[1..]
        .iter()
        .all(|g| g.len() == 3 && g.chars().all(|c| c.is_ascii_digit()));
    (first_ok && rest_ok).then(|| format!("{sign}{}{tail}", groups.concat()))
}
