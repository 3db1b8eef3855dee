//! Finds the line a table or key was written on, so semantic errors name file, line and key.

/// The config text, kept to point errors at lines.
pub struct Locator<'a> {
    text: &'a str,
}

impl<'a> Locator<'a> {
    pub fn new(text: &'a str) -> Self {
        Locator { text }
    }

    /// 1-based line of `[table]` (or of a dotted `table.key =` line), if written.
    pub fn table(&self, table: &str) -> Option<usize> {
        let header = format!("[{table}]");
        self.text
            .lines()
            .position(|l| l.trim().starts_with(&header))
            .map(|i| i + 1)
    }

    /// 1-based line of `key` inside `[table]`, falling back to the table's line.
    pub fn key(&self, table: &str, key: &str) -> Option<usize> {
        // `key` written as its own table: `[table.key]`.
        if let Some(line) = self.table(&format!("{table}.{key}")) {
            return Some(line);
        }
        let start = self.table(table);
        let lines: Vec<&str> = self.text.lines().collect();
        if let Some(start) = start {
            for (i, line) in lines.iter().enumerate().skip(start) {
                let t = line.trim_start();
                if t.starts_with('[') && !t.starts_with("[[") {
                    break;
                }
                if key_matches(t, key) {
                    return Some(i + 1);
                }
            }
            return Some(start);
        }
        // `[scenarios.x]` may be written inline in a parent table: look for `name = {`.
        let leaf = table.rsplit('.').next().unwrap_or(table);
        lines
            .iter()
            .position(|l| key_matches(l.trim_start(), leaf))
            .map(|i| i + 1)
    }
}

fn key_matches(line: &str, key: &str) -> bool {
    let unquoted = line.strip_prefix(key).map(str::trim_start);
    let quoted = line
        .strip_prefix(&format!("\"{key}\""))
        .map(str::trim_start);
    matches!(unquoted.or(quoted), Some(rest) if rest.starts_with('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tables_and_keys() {
        let text = "[variables]\nport = 1\n\n[jobs.hello]\ncommand = \"x\"\nurl = \"y\"\n[jobs.load]\nurl = \"z\"\n";
        let l = Locator::new(text);
        assert_eq!(l.table("jobs.hello"), Some(4));
        assert_eq!(l.key("jobs.hello", "url"), Some(6));
        assert_eq!(l.key("jobs.load", "url"), Some(8));
        assert_eq!(l.key("jobs.load", "missing"), Some(7));
        let nested = Locator::new("[jobs.load]\nurl = \"x\"\n[jobs.load.validate]\nstatus = 1\n");
        assert_eq!(nested.key("jobs.load", "validate"), Some(3));
    }
}
