//! `{{name}}` substitution with the documented precedence:
//! config < profile < scenario < matrix row < variant < `--var`.

use indexmap::IndexMap;

/// Variables in force for one row of one variant; later layers win.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    values: IndexMap<String, String>,
}

impl Vars {
    /// Adds a layer whose values override what is already there.
    pub fn layer<'a>(&mut self, values: impl IntoIterator<Item = (&'a String, String)>) {
        for (k, v) in values {
            self.values.insert(k.clone(), v);
        }
    }

    pub fn set(&mut self, key: &str, value: &str) {
        self.values.insert(key.to_string(), value.to_string());
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Replaces every `{{name}}`; an undefined name is an error naming it.
    pub fn expand(&self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| format!("unclosed `{{{{` in `{text}`"))?;
            let name = after[..end].trim();
            match self.values.get(name) {
                Some(v) => out.push_str(v),
                None => {
                    let known: Vec<&str> = self.values.keys().map(String::as_str).collect();
                    return Err(format!(
                        "undefined variable `{name}` (defined: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ));
                }
            }
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_layers_win_and_undefined_is_named() {
        let mut v = Vars::default();
        let base: IndexMap<String, String> = [("port".to_string(), "5000".to_string())].into();
        v.layer(base.iter().map(|(k, v)| (k, v.clone())));
        v.set("port", "6000");
        assert_eq!(
            v.expand("http://127.0.0.1:{{port}}/x").unwrap(),
            "http://127.0.0.1:6000/x"
        );
        assert_eq!(v.expand("{{ port }}").unwrap(), "6000");
        let err = v.expand("{{nope}}").unwrap_err();
        assert!(err.contains("`nope`") && err.contains("port"), "{err}");
        assert!(v.expand("{{port").is_err());
    }
}
