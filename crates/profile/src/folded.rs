//! Folded stacks, `frame;frame;frame COUNT` per line as flame graphs read them: parsed,
//! merged over iterations, and written back in a stable order.

use crate::ProfileError;
use std::collections::BTreeMap;

/// Sample counts per call stack (outermost frame first, frames joined by `;`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Folded {
    stacks: BTreeMap<String, u64>,
}

impl Folded {
    /// Reads folded text; blank lines are skipped, anything else not `frames COUNT` is an
    /// error naming the line.
    pub fn parse(text: &str) -> Result<Folded, ProfileError> {
        let mut out = Folded::default();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.trim().is_empty() {
                continue;
            }
            let bad = || ProfileError::BadFolded {
                line: i + 1,
                text: line.chars().take(200).collect(),
            };
            let (stack, count) = line.rsplit_once(' ').ok_or_else(bad)?;
            let count: u64 = count.parse().map_err(|_| bad())?;
            if stack.is_empty() {
                return Err(bad());
            }
            out.add(stack, count);
        }
        Ok(out)
    }

    /// Adds `count` samples of `stack`.
    pub fn add(&mut self, stack: &str, count: u64) {
        *self.stacks.entry(stack.to_string()).or_default() += count;
    }

    /// Adds every sample of `other` (another iteration of the same row).
    pub fn merge(&mut self, other: &Folded) {
        for (stack, count) in &other.stacks {
            self.add(stack, *count);
        }
    }

    /// How many samples in all.
    pub fn total(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Whether there is no sample.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// Each stack with its count, in the stacks' order.
    pub fn stacks(&self) -> impl Iterator<Item = (&str, u64)> {
        self.stacks.iter().map(|(s, c)| (s.as_str(), *c))
    }

    /// The folded text: one `frames COUNT` line per stack, sorted by stack.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (stack, count) in self.stacks() {
            out.push_str(stack);
            out.push(' ');
            out.push_str(&count.to_string());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_merges_and_writes_back() {
        let mut a = Folded::parse("main;f 3\nmain;g 1\n\n").unwrap();
        let b = Folded::parse("main;f 2\nmain;h x;y 4\n").unwrap();
        a.merge(&b);
        assert_eq!(a.total(), 10);
        assert_eq!(a.to_text(), "main;f 5\nmain;g 1\nmain;h x;y 4\n");
        assert_eq!(Folded::parse(&a.to_text()).unwrap(), a);
    }

    #[test]
    fn a_line_without_a_count_is_named() {
        let e = Folded::parse("main;f 3\nmain;g\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("main;g"), "{e}");
    }
}
