//! `metrics_select` entries: `name` or `name{label="value",…}`, checked when the config is
//! read so a typo is an error before anything runs.

use crate::config::ValueError;

/// One `metrics_select` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// A sample name (`http_requests_total`, `x_count`) or a family name (`x` for a histogram
    /// selects its `x_count` and `x_sum`).
    pub name: String,
    /// Every one must be on a series for it to count; sorted by label name.
    pub labels: Vec<(String, String)>,
}

impl Selector {
    /// Reads one entry; an error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Selector, ValueError> {
        let bad =
            |why: &str| format!("`{text}` is not `name` or `name{{label=\"value\",…}}`: {why}");
        let text_t = text.trim();
        let (name, rest) = match text_t.find('{') {
            Some(i) => (text_t[..i].trim(), Some(&text_t[i..])),
            None => (text_t, None),
        };
        if !is_name(name) {
            return Err(bad("the metric name must match [a-zA-Z_:][a-zA-Z0-9_:]*").into());
        }
        let mut labels = match rest {
            None => Vec::new(),
            Some(set) => label_set(set).map_err(|e| bad(&e.0))?,
        };
        labels.sort();
        if labels.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(bad("a label is named twice").into());
        }
        Ok(Selector {
            name: name.to_string(),
            labels,
        })
    }

    /// Whether a series with `labels` is one this entry selects.
    pub fn matches(&self, labels: &[(String, String)]) -> bool {
        self.labels
            .iter()
            .all(|(k, v)| labels.iter().any(|(lk, lv)| lk == k && lv == v))
    }

    /// What the measurement id carries after `app.metric.`: the sample name, and the label
    /// set when the entry has one (`x_total{code="200"}`), so two entries never share an id.
    pub fn stem(&self, sample: &str) -> String {
        if self.labels.is_empty() {
            return sample.to_string();
        }
        let set: Vec<String> = self
            .labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
            .collect();
        format!("{sample}{{{}}}", set.join(","))
    }
}

/// Whether `s` is a metric or label name.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// `{a="1",b="2"}` (a trailing comma allowed), values unescaped.
fn label_set(text: &str) -> Result<Vec<(String, String)>, ValueError> {
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or("the label set must end with `}`")?;
    let mut out = Vec::new();
    let mut rest = inner.trim_start();
    while !rest.is_empty() {
        let eq = rest.find('=').ok_or("a label without `=\"value\"`")?;
        let key = rest[..eq].trim();
        if !is_name(key) {
            return Err(format!("`{key}` is not a label name").into());
        }
        let (value, after) = quoted(rest[eq + 1..].trim_start())?;
        out.push((key.to_string(), value));
        rest = after.trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => {}
            None => return Err(format!("expected `,` between labels, found `{rest}`").into()),
        }
    }
    Ok(out)
}

/// A quoted value with `\\`, `\"`, `\n` escapes; the value and what follows it. The one
/// reader of label values, for pages and for `metrics_select` alike.
pub(crate) fn quoted(text: &str) -> Result<(String, &str), ValueError> {
    let body = text
        .strip_prefix('"')
        .ok_or("a label value must be in double quotes")?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &body[i + 1..])),
            '\\' => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, e)) => out.push(e),
                None => break,
            },
            c => out.push(c),
        }
    }
    Err("a label value's closing quote is missing".into())
}

/// A label value as the exposition format writes it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_label_sets() {
        let s = Selector::parse("http_requests_total").unwrap();
        assert_eq!(
            (s.name.as_str(), s.labels.len()),
            ("http_requests_total", 0)
        );
        let s = Selector::parse(r#"x_total{path="/a \"b\"", code = "200",}"#).unwrap();
        assert_eq!(
            s.labels,
            vec![
                ("code".to_string(), "200".to_string()),
                ("path".to_string(), "/a \"b\"".to_string())
            ]
        );
        assert_eq!(s.stem("x_total"), r#"x_total{code="200",path="/a \"b\""}"#);
        assert!(s.matches(&[
            ("path".into(), "/a \"b\"".into()),
            ("code".into(), "200".into()),
            ("method".into(), "GET".into()),
        ]));
        assert!(!s.matches(&[("code".into(), "200".into())]));
    }

    #[test]
    fn bad_entries_say_why() {
        for (text, why) in [
            ("", "metric name"),
            ("9lives", "metric name"),
            ("a.b", "metric name"),
            ("x{code=200}", "double quotes"),
            ("x{code=\"200\"", "end with `}`"),
            ("x{code}", "without `=\"value\"`"),
            ("x{code=\"2\" path=\"/\"}", "expected `,`"),
            ("x{a=\"1\",a=\"2\"}", "named twice"),
            ("x{1a=\"1\"}", "not a label name"),
            ("x{a=\"1}", "closing quote"),
        ] {
            let e = Selector::parse(text).unwrap_err();
            assert!(e.0.contains(why), "{text}: {e}");
            assert!(e.0.contains(&format!("`{text}`")), "{e}");
        }
    }
}
