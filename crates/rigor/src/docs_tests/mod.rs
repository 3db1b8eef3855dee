//! The documentation is checked against the code it describes: every `rigor.toml` key the
//! parser accepts has a row (type, default, example, meaning) in docs/config.md, every
//! measurement id of the catalogue a row in docs/results.md with its label, unit and direction,
//! every field of docs/rigor.run.v1.schema.json (which a test holds to real output) is explained
//! in docs/results.md, every flag of `rigor load`, `run` and `compare` has a row in docs/cli.md
//! with its default, and every link of the README and docs/ lands on a file and heading inside
//! the repository. Each list is read from the code (serde's fields, the catalogue, clap's
//! command), so a new key, id or flag without documentation fails here, and so does a documented
//! one that no longer exists.

mod cli;
mod config;
mod links;
mod results;

use std::path::{Path, PathBuf};

/// The repository root, where README.md and docs/ live.
pub fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .canonicalize()
        .expect("repository root")
}

/// A file of the repository, by its path from the root.
pub fn read(relative: &str) -> String {
    let path = root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A Markdown heading: its level (`##` is 2) and its text.
pub fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|&c| c == '#').count();
    (level > 0 && line[level..].starts_with(' ')).then(|| (level, line[level..].trim()))
}

/// The cells of a table row, split at unescaped `|`; `None` for other lines and separators.
pub fn cells(line: &str) -> Option<Vec<String>> {
    let line = line.trim();
    if !line.starts_with('|') || line.trim_matches(['|', '-', ':', ' ']).is_empty() {
        return None;
    }
    let mut out = vec![String::new()];
    let mut chars = line[1..].trim_end_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().unwrap().push(chars.next().unwrap())
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    Some(out.into_iter().map(|c| c.trim().to_string()).collect())
}

/// The `code spans` of a piece of Markdown.
pub fn code_spans(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}
