//! `rigor run`: the flags checked and turned into values the run can use.

/// Parses `K=V` pairs given with --var.
pub fn parse_vars(vars: &[String]) -> Result<Vec<(String, String)>, String> {
    vars.iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => Err(format!("--var `{kv}`: expected NAME=VALUE")),
        })
        .collect()
}

/// Parses `LOW:HIGH` for --exclude.
pub fn parse_exclude(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--exclude `{text}`: expected LOW:HIGH, e.g. 1:1");
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}
