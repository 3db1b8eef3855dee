//! The Prometheus text exposition format (0.0.4) and OpenMetrics text (1.0): families with
//! their type, samples with labels and a value. Timestamps and exemplars are read past (a scrape
//! is timed by rigor, not by the application); anything that is not the format is an error
//! naming the line, so an HTML page or JSON at the metrics URL is said, not read as no metrics.
//! As Prometheus's own parser, a second `# TYPE` for a family that already has samples is an
//! error; label values may hold any character (escaped quotes, commas, braces, newlines).

use crate::metrics::MetricsError;

/// What a family's `# TYPE` line said; untyped when it had none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
    /// OpenMetrics' `info`, `stateset` and `gaugehistogram`: not figures rigor reads.
    Other,
}

impl Kind {
    fn parse(text: &str) -> Kind {
        match text {
            "counter" => Kind::Counter,
            "gauge" => Kind::Gauge,
            "histogram" => Kind::Histogram,
            "summary" => Kind::Summary,
            "untyped" | "unknown" => Kind::Untyped,
            _ => Kind::Other,
        }
    }

    /// The sample-name suffixes a family of this kind may use besides its own name.
    fn suffixes(self) -> &'static [&'static str] {
        match self {
            Kind::Counter => &["_total", "_created"],
            Kind::Histogram => &["_bucket", "_count", "_sum", "_created"],
            Kind::Summary => &["_count", "_sum", "_created"],
            Kind::Other => &["_info", "_gcount", "_gsum", "_bucket"],
            Kind::Gauge | Kind::Untyped => &[],
        }
    }
}

/// One line of data: `name{label="value",…} value [timestamp]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    /// In the order written; values unescaped.
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// A metric family: its samples under the name its `# TYPE` line gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    pub name: String,
    pub kind: Kind,
    pub samples: Vec<Sample>,
}

/// Reads a whole exposition; an error names the 1-based line and what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<Family>, MetricsError> {
    let mut families: Vec<Family> = Vec::new();
    for (n, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        let at = |e: String| format!("line {}: {e}: `{}`", n + 1, shorten(line));
        if let Some(comment) = line.strip_prefix('#') {
            if comment.trim() == "EOF" {
                break;
            }
            if let Some((name, kind)) = type_line(comment) {
                match families.iter_mut().find(|f| f.name == name) {
                    Some(f) if f.samples.is_empty() => f.kind = kind,
                    Some(_) => {
                        return Err(at("a second TYPE for a family with samples".into()).into())
                    }
                    None => families.push(Family {
                        name,
                        kind,
                        samples: Vec::new(),
                    }),
                }
            }
            continue;
        }
        let sample = sample_line(line).map_err(|e| at(e.0))?;
        place(&mut families, sample);
    }
    Ok(families)
}

/// `# TYPE name kind`, else `None` (HELP, UNIT and free comments are read past).
fn type_line(comment: &str) -> Option<(String, Kind)> {
    let mut words = comment.split_whitespace();
    if words.next()? != "TYPE" {
        return None;
    }
    let name = words.next()?;
    let name = name
        .strip_prefix('"')
        .and_then(|n| n.strip_suffix('"'))
        .unwrap_or(name);
    Some((name.to_string(), Kind::parse(words.next()?)))
}

/// Puts a sample in the family it belongs to: the one named like it, or whose name plus one of
/// its kind's suffixes it is; else a new untyped family of its own.
fn place(families: &mut Vec<Family>, sample: Sample) {
    let owner = families.iter().rposition(|f| {
        f.name == sample.name
            || f.kind.suffixes().iter().any(|s| {
                sample
                    .name
                    .strip_suffix(s)
                    .is_some_and(|base| base == f.name)
            })
    });
    match owner {
        Some(i) => families[i].samples.push(sample),
        None => families.push(Family {
            name: sample.name.clone(),
            kind: Kind::Untyped,
            samples: vec![sample],
        }),
    }
}

/// One sample line.
fn sample_line(line: &str) -> Result<Sample, MetricsError> {
    let mut cur = Cursor { rest: line };
    let mut name = if cur.rest.starts_with('{') {
        None
    } else {
        Some(cur.name().ok_or("expected a metric name")?.to_string())
    };
    let mut labels = Vec::new();
    let mut spaced = cur.spaces();
    if cur.eat('{') {
        cur.labels(&mut name, &mut labels)?;
        spaced = cur.spaces();
    }
    let name = name.ok_or("a sample without a metric name")?;
    if !spaced {
        return Err("expected a space before the value".into());
    }
    let value = number(cur.word()).ok_or("the value is not a number")?;
    if cur.spaces() && !cur.rest.is_empty() && !cur.rest.starts_with('#') {
        number(cur.word()).ok_or("the timestamp is not a number")?;
        cur.spaces();
    }
    // What may follow is an OpenMetrics exemplar (`# {…} value`), read past.
    if !cur.rest.is_empty() && !cur.rest.starts_with('#') {
        return Err("unexpected text after the value".into());
    }
    Ok(Sample {
        name,
        labels,
        value,
    })
}

/// A float as the format writes it: Go's spelling (`NaN`, `+Inf`, `-Inf`, exponents).
fn number(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ if text
            .bytes()
            .any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E') =>
        {
            None
        }
        _ => text.parse().ok(),
    }
}

/// The unread rest of one line.
struct Cursor<'a> {
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    fn eat(&mut self, c: char) -> bool {
        match self.rest.strip_prefix(c) {
            Some(r) => {
                self.rest = r;
                true
            }
            None => false,
        }
    }

    /// Skips blanks; whether there were any.
    fn spaces(&mut self) -> bool {
        let r = self.rest.trim_start_matches([' ', '\t']);
        let any = r.len() < self.rest.len();
        self.rest = r;
        any
    }

    /// Up to the next blank.
    fn word(&mut self) -> &'a str {
        let end = self.rest.find([' ', '\t']).unwrap_or(self.rest.len());
        let (w, r) = self.rest.split_at(end);
        self.rest = r;
        w
    }

    /// A metric or label name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    fn name(&mut self) -> Option<&'a str> {
        let end = self
            .rest
            .char_indices()
            .find(|&(i, c)| {
                !(c.is_ascii_alphabetic() || c == '_' || c == ':' || (i > 0 && c.is_ascii_digit()))
            })
            .map_or(self.rest.len(), |(i, _)| i);
        if end == 0 {
            return None;
        }
        let (n, r) = self.rest.split_at(end);
        self.rest = r;
        Some(n)
    }

    /// A double-quoted string with `\\`, `\"` and `\n` escapes, unescaped.
    fn quoted(&mut self) -> Result<String, MetricsError> {
        if !self.rest.starts_with('"') {
            return Err("expected a quoted label value".into());
        }
        let (value, rest) = crate::config::metrics_select::quoted(self.rest)?;
        self.rest = rest;
        Ok(value)
    }

    /// The label set after `{`, through `}`; a quoted string alone is the metric's name (the
    /// newer `{"name.with.dots", label="x"}` spelling).
    fn labels(
        &mut self,
        name: &mut Option<String>,
        labels: &mut Vec<(String, String)>,
    ) -> Result<(), MetricsError> {
        loop {
            self.spaces();
            if self.eat('}') {
                return Ok(());
            }
            let key = if self.rest.starts_with('"') {
                let text = self.quoted()?;
                self.spaces();
                if !self.rest.starts_with('=') {
                    if name.is_some() {
                        return Err("a metric name given twice".into());
                    }
                    *name = Some(text);
                    self.after_label()?;
                    continue;
                }
                text
            } else {
                self.name().ok_or("expected a label name")?.to_string()
            };
            self.spaces();
            if !self.eat('=') {
                return Err(format!("expected `=` after label `{key}`").into());
            }
            self.spaces();
            let value = self.quoted()?;
            labels.push((key, value));
            self.after_label()?;
        }
    }

    /// After one label: a comma, or the closing brace (left for the loop to eat).
    fn after_label(&mut self) -> Result<(), MetricsError> {
        self.spaces();
        if self.eat(',') || self.rest.starts_with('}') {
            Ok(())
        } else {
            Err("expected `,` or `}` in the label set".into())
        }
    }
}

/// A line as an error quotes it: at most 80 characters.
fn shorten(line: &str) -> String {
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_string(),
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
