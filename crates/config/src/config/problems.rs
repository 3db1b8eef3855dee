//! Every problem of a config, gathered instead of stopping at the first, so one run of rigor
//! lists all of them.

use std::fmt;
use std::path::Path;

/// Problems found so far, each once, in the order found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Problems(Vec<String>);

impl Problems {
    /// Records a problem unless the same text was already recorded (rows repeat their jobs).
    pub fn add(&mut self, message: String) {
        if !self.0.contains(&message) {
            self.0.push(message);
        }
    }

    /// The value of `result`, or `None` after recording its error.
    pub fn take<T, E: std::fmt::Display>(&mut self, result: Result<T, E>) -> Option<T> {
        result.map_err(|e| self.add(e.to_string())).ok()
    }

    /// Adds every problem of `other`.
    pub fn extend(&mut self, other: Problems) {
        for m in other.0 {
            self.add(m);
        }
    }

    /// Orders the problems of the file at `path` by the line they name (`path:LINE: …`), so
    /// they read like the file; problems without a line keep their order after them.
    pub fn sort_by_line(&mut self, path: &Path) {
        let prefix = format!("{}:", path.display());
        let line = |m: &String| -> Option<usize> {
            let rest = m.strip_prefix(&prefix)?;
            let digits = rest.split_once(':')?.0;
            digits.parse().ok()
        };
        self.0.sort_by_key(|m| line(m).unwrap_or(usize::MAX));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The messages, in the order found.
    pub fn messages(&self) -> &[String] {
        &self.0
    }

    /// `Ok(value)` when nothing was found, else these problems.
    pub fn or_ok<T>(self, value: T) -> Result<T, Problems> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl From<String> for Problems {
    fn from(message: String) -> Self {
        Problems(vec![message])
    }
}

/// One problem per line.
impl fmt::Display for Problems {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}
