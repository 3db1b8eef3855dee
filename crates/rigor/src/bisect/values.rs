//! Bisecting over values of a variable rather than commits (`--var NAME --values …` or
//! `--values-from FILE`): the versions of a runtime or a framework between a good one and a bad
//! one. The values are read and checked here; each becomes a candidate the search treats as it
//! treats a commit, run as a variant that sets the variable.

use super::git::Commit;
use crate::cli::bisect::BisectArgs;
use crate::failure::Failure;

/// The variable and its values, oldest first, as given.
#[derive(Debug, Clone, PartialEq)]
pub struct Over {
    pub name: String,
    pub values: Vec<String>,
}

/// The values the flags name, or `None` when the bisection is over commits; bad combinations
/// of flags are usage errors naming the flag.
pub fn from_args(args: &BisectArgs) -> Result<Option<Over>, Failure> {
    let listed = args.values.is_some() || args.values_from.is_some();
    let Some(name) = &args.var else {
        if listed {
            return Err(Failure::usage(
                "--values and --values-from need --var NAME: the variable the values are for",
            ));
        }
        for (flag, given) in [("--good", &args.good), ("--bad", &args.bad)] {
            if given.is_none() {
                return Err(Failure::usage(format!(
                    "{flag} is needed: the commits to search between (or --var NAME --values \
                     V1,V2,… to search over values)"
                )));
            }
        }
        return Ok(None);
    };
    if name.trim().is_empty() {
        return Err(Failure::usage("--var needs a variable name"));
    }
    let values = match (&args.values, &args.values_from) {
        (Some(v), _) => v.iter().map(|s| s.trim().to_string()).collect::<Vec<_>>(),
        (None, Some(file)) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| Failure::usage(format!("--values-from {}: {e}", file.display())))?;
            parse_lines(&text)
        }
        (None, None) => {
            return Err(Failure::usage(format!(
                "--var {name} needs its values: --values V1,V2,… or --values-from FILE"
            )))
        }
    };
    check(&values)?;
    Ok(Some(Over {
        name: name.clone(),
        values,
    }))
}

/// One value a line; blank lines and `#` comments skipped.
pub fn parse_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// At least two values, none empty, none twice.
fn check(values: &[String]) -> Result<(), Failure> {
    if values.iter().any(String::is_empty) {
        return Err(Failure::usage(
            "--values: an empty value (two commas in a row?)",
        ));
    }
    if values.len() < 2 {
        return Err(Failure::usage(format!(
            "--values: {} value(s); a good and a bad one at least are needed",
            values.len()
        )));
    }
    for (i, v) in values.iter().enumerate() {
        if values[..i].contains(v) {
            return Err(Failure::usage(format!("--values: `{v}` is listed twice")));
        }
    }
    Ok(())
}

impl Over {
    /// The values from good to bad (good first): `--good`/`--bad` name values, the first and
    /// the last by default; good must come before bad.
    pub fn between(&self, good: Option<&str>, bad: Option<&str>) -> Result<Vec<Commit>, Failure> {
        let find = |flag: &str, v: Option<&str>, default: usize| match v {
            None => Ok(default),
            Some(v) => self.values.iter().position(|x| x == v).ok_or_else(|| {
                Failure::usage(format!(
                    "{flag} `{v}` is not one of the values of --var {}",
                    self.name
                ))
            }),
        };
        let g = find("--good", good, 0)?;
        let b = find("--bad", bad, self.values.len() - 1)?;
        if g >= b {
            return Err(Failure::usage(format!(
                "--good `{}` must come before --bad `{}` in the values (oldest first)",
                self.values[g], self.values[b]
            )));
        }
        Ok(self.values[g..=b]
            .iter()
            .map(|v| Commit::value(&self.name, v))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over(values: &[&str]) -> Over {
        Over {
            name: "version".into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn good_and_bad_name_values_first_and_last_by_default() {
        let o = over(&["1.0", "1.1", "1.2", "1.3"]);
        let all = o.between(None, None).unwrap();
        assert_eq!(all.len(), 4);
        assert_eq!(all[0].sha, "1.0");
        assert_eq!(all[0].subject, "version=1.0");
        assert_eq!(all[0].short(), "1.0");
        let some = o.between(Some("1.1"), Some("1.2")).unwrap();
        assert_eq!(some.len(), 2);
        let err = |g, b| o.between(g, b).unwrap_err().text();
        assert!(err(Some("2.0"), None)
            .contains("--good `2.0` is not one of the values of --var version"));
        assert!(err(Some("1.2"), Some("1.1")).contains("must come before --bad"));
    }

    #[test]
    fn values_from_a_file_skip_blanks_and_comments() {
        let v = parse_lines("# nightly builds\n8.0.0-preview.5.1\n\n  8.0.0-preview.5.4 \n");
        assert_eq!(v, ["8.0.0-preview.5.1", "8.0.0-preview.5.4"]);
        assert!(check(&v).is_ok());
        assert!(check(&v[..1]).is_err());
        assert!(check(&["a".into(), "a".into()])
            .unwrap_err()
            .text()
            .contains("twice"));
        assert!(check(&["a".into(), "".into()]).is_err());
    }
}
