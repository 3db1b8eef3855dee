//! `[report]`: the key figures of the headline, checked when the file is read.

use super::{Config, Problems};

impl Config {
    /// `[report] key`: the measurement ids each compared pair's headline line shows, in order;
    /// empty when the file names none. An empty id or one named twice is an error naming the
    /// line.
    pub fn report_key(&self) -> Result<Vec<String>, Problems> {
        let mut problems = Problems::default();
        let key = self.raw.report.key.clone().unwrap_or_default();
        for (i, id) in key.iter().enumerate() {
            if id.trim().is_empty() {
                problems.add(self.error_at("report", Some("key"), "an empty measurement id"));
            } else if key[..i].contains(id) {
                problems.add(self.error_at(
                    "report",
                    Some("key"),
                    &format!("`{id}` is named twice"),
                ));
            }
        }
        problems.or_ok(key)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn config(text: &str) -> Config {
        let path = std::path::Path::new("rigor.toml");
        Config::parse_all(path, text.to_string()).unwrap().0
    }

    #[test]
    fn the_key_is_read_in_order_and_mistakes_name_the_line() {
        let c = config("[report]\nkey = [\"load.latency.p99\", \"load.rps\"]\n");
        assert_eq!(
            c.report_key().unwrap(),
            vec!["load.latency.p99", "load.rps"]
        );
        let c = config("\n[report]\nkey = [\"load.rps\", \"load.rps\", \" \"]\n");
        let p = c.report_key().unwrap_err();
        let m = p.messages();
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].contains("rigor.toml:3") && m[0].contains("report.key"),
            "{m:?}"
        );
        assert!(m[0].contains("`load.rps` is named twice"), "{m:?}");
        assert!(m[1].contains("an empty measurement id"), "{m:?}");
        assert!(config("").report_key().unwrap().is_empty());
    }
}
