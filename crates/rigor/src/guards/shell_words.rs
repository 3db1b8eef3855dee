//! Just enough shell to read a build command: its simple commands, their words with quotes
//! removed (by `shlex`, as sh would), and leading `NAME=value` assignments. Not a shell: no
//! expansion, no subshells.

/// `NAME=value` as a shell assignment.
pub fn assignment(w: &str) -> Option<(String, String)> {
    let (k, v) = w.split_once('=')?;
    let ok = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then(|| (k.to_string(), v.to_string()))
}

/// Words of a flags variable (spaces separate; quotes group); a line with an unclosed quote
/// is split at its spaces.
pub fn split_words(s: &str) -> Vec<String> {
    shlex::split(s).unwrap_or_else(|| s.split_whitespace().map(str::to_string).collect())
}

/// A shell line's simple commands (split at unquoted `;`, `&`, `|`, newlines), each as its
/// words with quotes removed. Enough to read a build command, not a shell.
pub fn parts(line: &str) -> Vec<Vec<String>> {
    commands(line)
        .into_iter()
        .map(split_words)
        .filter(|words| !words.is_empty())
        .collect()
}

/// `line` cut at its unquoted, unescaped command separators.
fn commands(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quote, mut escaped) = (0, None, false);
    for (i, c) in line.char_indices() {
        match (quote, c) {
            _ if escaped => escaped = false,
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (Some(_), '"') => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ';' | '&' | '|' | '\n') => {
                out.push(&line[start..i]);
                start = i + c.len_utf8();
            }
            (None, _) => {}
        }
    }
    out.push(&line[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_words_and_assignments() {
        assert_eq!(
            parts("cd x && RUSTFLAGS='-C opt-level=0' cargo build; make|tee \"a b\""),
            vec![
                vec!["cd", "x"],
                vec!["RUSTFLAGS=-C opt-level=0", "cargo", "build"],
                vec!["make"],
                vec!["tee", "a b"],
            ]
        );
        assert_eq!(
            parts("echo 'a;b' \"c|d\" e\\&f\ncargo build"),
            vec![vec!["echo", "a;b", "c|d", "e&f"], vec!["cargo", "build"]]
        );
        assert_eq!(
            assignment("RUSTFLAGS=-C opt-level=0"),
            Some(("RUSTFLAGS".into(), "-C opt-level=0".into()))
        );
        assert_eq!(assignment("--profile=fast"), None);
        assert_eq!(split_words("-C  opt-level=0"), vec!["-C", "opt-level=0"]);
        assert_eq!(split_words("-C 'opt-level=0"), vec!["-C", "'opt-level=0"]);
    }
}
