//! Secrets kept out of the environment story: a result file is shared, stored in the history
//! and attached to reports, so the value of a variable whose name says it is a secret (a token,
//! a password, a key) is replaced, and so is the password of a URL held in any variable.

/// What a secret's value is written as.
pub const REDACTED: &str = "<redacted>";

/// Words that mark a variable's name as holding a secret (matched in upper case, anywhere).
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "SECRET",
    "KEY",
    "CREDENTIAL",
    "PRIVATE",
];

/// `value` as the story may show it for variable `name`.
pub fn env_value(name: &str, value: &str) -> String {
    let upper = name.to_ascii_uppercase();
    if SECRET_WORDS.iter().any(|w| upper.contains(w)) {
        return REDACTED.to_string();
    }
    url_password_hidden(value)
}

/// `scheme://user:password@host…` with the password replaced; anything else as it is.
fn url_password_hidden(value: &str) -> String {
    let Some(scheme_end) = value.find("://") else {
        return value.to_string();
    };
    let rest = &value[scheme_end + 3..];
    // The user information ends at the last `@` before the path.
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return value.to_string();
    };
    let Some(colon) = rest[..at].find(':') else {
        return value.to_string();
    };
    format!(
        "{}{}:{REDACTED}{}",
        &value[..scheme_end + 3],
        &rest[..colon],
        &rest[at..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_and_url_passwords_are_hidden_and_nothing_else() {
        for name in [
            "API_TOKEN",
            "db_password",
            "AWS_SECRET_ACCESS_KEY",
            "SSH_KEY",
            "GitCredentials",
        ] {
            assert_eq!(env_value(name, "hunter2"), REDACTED, "{name}");
        }
        assert_eq!(env_value("THREADS", "4"), "4");
        assert_eq!(
            env_value(
                "DATABASE_URL",
                "postgres://app:p@ss@db:5432/app?sslmode=off"
            ),
            "postgres://app:<redacted>@db:5432/app?sslmode=off"
        );
        assert_eq!(
            env_value("UPSTREAM", "http://user@host/path"),
            "http://user@host/path"
        );
        assert_eq!(
            env_value("UPSTREAM", "http://host/a:b@c"),
            "http://host/a:b@c"
        );
        assert_eq!(env_value("GREETING", "a:b@c"), "a:b@c");
    }
}
