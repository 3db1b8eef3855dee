//! `[measurements.ID]` tables: the user's declarations of measurement ids (unit, which direction
//! is better, label), checked when the file is read so a typo stops the run before anything starts.

use super::Config;
use crate::declarations::{self, Better, Declaration, Declarations};

impl Config {
    /// The declared measurements, checked: `direction` must be `higher` or `lower`, and a catalogue
    /// id keeps its own direction. Errors name file, line and key.
    pub fn declarations(&self) -> Result<Declarations, String> {
        let mut out = Declarations::new();
        for (id, raw) in &self.raw.measurements {
            // Ids hold dots, so the table is written `[measurements."cmd.x"]`.
            let quoted = format!("measurements.\"{id}\"");
            let table = if self.locator().table(&quoted).is_some() {
                quoted
            } else {
                format!("measurements.{id}")
            };
            if id.trim().is_empty() {
                return Err(self.error_at(&table, None, "a measurement id cannot be empty"));
            }
            let direction = raw
                .direction
                .as_deref()
                .map(Better::parse)
                .transpose()
                .map_err(|e| self.error_at(&table, Some("direction"), &e))?;
            let d = Declaration {
                unit: raw.unit.clone(),
                direction,
                label: raw.label.clone(),
            };
            let key = if d.unit.is_some()
                && declarations::check(
                    id,
                    &Declaration {
                        direction: None,
                        ..d.clone()
                    },
                )
                .is_err()
            {
                "unit"
            } else {
                "direction"
            };
            declarations::check(id, &d).map_err(|e| self.error_at(&table, Some(key), &e))?;
            out.insert(id.clone(), d);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const BASE: &str = r#"
[jobs.app]
command = "./app"
ready = { tcp = "127.0.0.1:5000" }
[jobs.load]
url = "http://127.0.0.1:5000/"
[scenarios.s]
application = "app"
load = "load"
"#;

    fn parse(extra: &str) -> Result<Config, String> {
        Config::parse(Path::new("/tmp/x/rigor.toml"), format!("{BASE}{extra}"))
    }

    #[test]
    fn declarations_are_read() {
        let c = parse(
            "[measurements.\"cmd.msgs_per_sec\"]\nunit = \"1/s\"\ndirection = \"higher\"\nlabel = \"Messages/sec\"\n\
             [measurements.\"load.rps\"]\nlabel = \"Throughput\"\n",
        )
        .unwrap();
        let d = c.declarations().unwrap();
        assert_eq!(d["cmd.msgs_per_sec"].direction, Some(Better::Higher));
        assert_eq!(d["cmd.msgs_per_sec"].unit.as_deref(), Some("1/s"));
        assert_eq!(d["load.rps"].label.as_deref(), Some("Throughput"));
    }

    #[test]
    fn unknown_keys_name_file_line_and_key() {
        let err = parse("[measurements.\"cmd.x\"]\ndirection = \"higher\"\nbetter = \"up\"\n")
            .err()
            .unwrap();
        // BASE has 9 lines; the table is line 10, `better` line 12.
        assert!(err.starts_with("/tmp/x/rigor.toml:12:"), "{err}");
        assert!(err.contains("unknown field `better`"), "{err}");
        assert!(err.contains("[measurements.\"cmd.x\"]"), "{err}");
    }

    #[test]
    fn direction_must_be_higher_or_lower() {
        let err = parse("[measurements.\"cmd.x\"]\nunit = \"ms\"\ndirection = \"up\"\n")
            .err()
            .unwrap();
        assert_eq!(
            err,
            "/tmp/x/rigor.toml:12: measurements.\"cmd.x\".direction: direction must be \"higher\" \
             or \"lower\", not \"up\""
        );
        let err = parse("[measurements.\"app.rss\"]\ndirection = \"higher\"\n")
            .err()
            .unwrap();
        assert!(
            err.starts_with("/tmp/x/rigor.toml:11: measurements.\"app.rss\".direction: `app.rss` is rigor's own"),
            "{err}"
        );
    }
}
