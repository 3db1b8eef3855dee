//! Just enough shell to read a build command: its simple commands, their words with quotes
//! removed, and leading `NAME=value` assignments. Not a shell: no expansion, no subshells.

/// `NAME=value` as a shell assignment.
pub fn assignment(w: &str) -> Option<(String, String)> {
    let (k, v) = w.split_once('=')?;
    let ok = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then(|| (k.to_string(), v.to_string()))
}

/// Words of a flags variable (spaces separate; quotes group).
pub fn split_words(s: &str) -> Vec<String> {
    parts(s).into_iter().flatten().collect()
}

/// A shell line's simple commands (split at unquoted `;`, `&`, `|`), each as its words with
/// quotes removed. Enough to read a build command, not a shell.
pub fn parts(line: &str) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                }
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    word.push(n);
                    in_word = true;
                }
            }
            (None, c) if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '\n') => {
                if in_word {
                    if let Some(last) = out.last_mut() {
                        last.push(std::mem::take(&mut word));
                    }
                    in_word = false;
                }
                if matches!(c, ';' | '&' | '|' | '\n') && out.last().is_some_and(|l| !l.is_empty())
                {
                    out.push(Vec::new());
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        if let Some(last) = out.last_mut() {
            last.push(word);
        }
    }
    out.retain(|p| !p.is_empty());
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
            assignment("RUSTFLAGS=-C opt-level=0"),
            Some(("RUSTFLAGS".into(), "-C opt-level=0".into()))
        );
        assert_eq!(assignment("--profile=fast"), None);
        assert_eq!(split_words("-C  opt-level=0"), vec!["-C", "opt-level=0"]);
    }
}
