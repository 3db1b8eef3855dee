//! Messages for errors the TOML reader finds (syntax, unknown keys, wrong types), pointed at
//! file, line and the dotted key, like the errors found later while planning.

use std::path::Path;

/// `file:line: table.key: message` plus the offending line.
pub fn describe(path: &Path, text: &str, e: &toml::de::Error) -> String {
    describe_at(path, text, e.message(), e.span())
}

/// `file:line: table.key: message` plus the line at `span` (byte offsets into `text`).
pub fn describe_at(
    path: &Path,
    text: &str,
    msg: &str,
    span: Option<std::ops::Range<usize>>,
) -> String {
    let Some(span) = span else {
        return format!("{}: {msg}", path.display());
    };
    let before = text.get(..span.start.min(text.len())).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let snippet = text.lines().nth(line - 1).unwrap_or("").trim();
    let table = text
        .lines()
        .take(line)
        .map(str::trim)
        .filter(|l| l.starts_with('['))
        .last()
        .map(|t| t.trim_matches(|c| c == '[' || c == ']').trim());
    let key = snippet
        .split_once('=')
        .map(|(k, _)| k.trim())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    let place = match (table, key) {
        (Some(t), Some(k)) if !snippet.starts_with('[') => format!("{t}.{k}"),
        (Some(t), _) => format!("[{t}]"),
        (None, Some(k)) => k.to_string(),
        (None, None) => String::new(),
    };
    if place.is_empty() {
        format!("{}:{line}: {msg}\n    {snippet}", path.display())
    } else {
        format!("{}:{line}: {place}: {msg}\n    {snippet}", path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        let e = toml::from_str::<super::super::raw::RawConfig>(text).unwrap_err();
        describe(Path::new("r.toml"), text, &e)
    }

    #[test]
    fn names_line_and_dotted_key() {
        let m = err("[jobs.load]\nurl = \"x\"\nconnections = [1, 2]\n");
        assert!(
            m.starts_with("r.toml:3: jobs.load.connections: invalid type"),
            "{m}"
        );
        let m = err("[jobs.load]\nurl = \"x\"\nconections = 1\n");
        assert!(
            m.starts_with("r.toml:3: jobs.load.conections: unknown field"),
            "{m}"
        );
        let m = err("[jobs.load\n");
        assert!(m.starts_with("r.toml:1:"), "{m}");
        assert!(err("x = é\n").starts_with("r.toml:1: x:"));
    }
}
