//! `{{name}}` substitution with the documented precedence:
//! config < profile < scenario < matrix row < variant < `--var`.

use crate::config::ValueError;

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

    /// Replaces every `{{name}}`, also inside variable values; an undefined name, a variable
    /// that refers to itself, or an expansion past [`MAX_EXPANSION`] bytes is an error naming it.
    pub fn expand(&self, text: &str) -> Result<String, ValueError> {
        let mut out = String::with_capacity(text.len());
        self.expand_into(text, &mut Vec::new(), &mut out)?;
        Ok(out)
    }

    fn expand_into<'a>(
        &'a self,
        text: &str,
        stack: &mut Vec<&'a str>,
        out: &mut String,
    ) -> Result<(), ValueError> {
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find("}}")
                .ok_or_else(|| format!("unclosed `{{{{` in `{text}`"))?;
            let name = after[..end].trim();
            let Some((key, value)) = self.values.get_key_value(name) else {
                let known: Vec<&str> = self.values.keys().map(String::as_str).collect();
                return Err(format!(
                    "undefined variable `{name}` (defined: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )
                .into());
            };
            if stack.contains(&name) {
                stack.push(key);
                return Err(format!(
                    "variable `{name}` refers to itself ({}), so `{{{{{name}}}}}` would stay \
                     unresolved",
                    stack.join(" → ")
                )
                .into());
            }
            stack.push(key);
            self.expand_into(value, stack, out)?;
            stack.pop();
            if out.len() > MAX_EXPANSION {
                return Err(
                    format!("`{text}` expands to more than {} KiB", MAX_EXPANSION / 1024).into(),
                );
            }
            rest = &after[end + 2..];
        }
        out.push_str(rest);
        Ok(())
    }
}

/// The longest text a `{{var}}` expansion may produce: variables that repeat each other would
/// otherwise grow exponentially.
pub const MAX_EXPANSION: usize = 1024 * 1024;

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
        assert!(err.0.contains("`nope`") && err.0.contains("port"), "{err}");
        assert!(v.expand("{{port").is_err());
    }

    #[test]
    fn values_expand_nested_and_cycles_are_named() {
        let mut v = Vars::default();
        v.set("port", "5000");
        v.set("url", "http://127.0.0.1:{{port}}/");
        assert_eq!(v.expand("{{url}}x").unwrap(), "http://127.0.0.1:5000/x");
        v.set("n", "{{n}}");
        let err = v.expand("--threads {{n}}").unwrap_err();
        assert!(err.0.contains("`n` refers to itself (n → n)"), "{err}");
        v.set("a", "{{b}}");
        v.set("b", "x{{a}}");
        assert!(v.expand("{{a}}").unwrap_err().0.contains("a → b → a"));
    }

    #[test]
    fn exponential_expansion_is_refused() {
        let mut v = Vars::default();
        v.set("v0", "xxxxxxxxxxxxxxxx");
        for i in 1..40 {
            v.set(
                &format!("v{i}"),
                &format!("{{{{v{}}}}}{{{{v{}}}}}", i - 1, i - 1),
            );
        }
        assert!(v.expand("{{v39}}").unwrap_err().0.contains("KiB"));
    }
}
