//! `[measurements.ID]` tables: the user's declarations of measurement ids (unit, which direction
//! is better, label), checked when the file is read so a typo stops the run before anything starts.

use super::{Config, Problems};
use rigor_model::declarations::{self, Better, Declaration, Declarations};

impl Config {
    /// The declared measurements, checked: `direction` must be `higher` or `lower`, and a catalogue
    /// id keeps its own direction and unit. Every problem names file, line and key.
    pub fn declarations(&self) -> Result<Declarations, Problems> {
        let mut problems = Problems::default();
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
                problems.add(self.error_at(&table, None, "a measurement id cannot be empty"));
                continue;
            }
            let direction = problems.take(
                raw.direction
                    .as_deref()
                    .map(Better::parse)
                    .transpose()
                    .map_err(|e| self.error_at(&table, Some("direction"), &e.to_string())),
            );
            // Each key checked on its own, so the error points at the key that is wrong.
            let only_direction = Declaration {
                direction: direction.flatten(),
                ..Default::default()
            };
            let only_unit = Declaration {
                unit: raw.unit.clone(),
                ..Default::default()
            };
            let direction_ok = problems
                .take(
                    declarations::check(id, &only_direction)
                        .map_err(|e| self.error_at(&table, Some("direction"), &e.to_string())),
                )
                .is_some();
            let unit_ok = problems
                .take(
                    declarations::check(id, &only_unit)
                        .map_err(|e| self.error_at(&table, Some("unit"), &e.to_string())),
                )
                .is_some();
            let threshold = problems.take(
                raw.threshold
                    .as_ref()
                    .map(|t| crate::threshold::parse_threshold(&t.as_text()))
                    .transpose()
                    .map_err(|e| self.error_at(&table, Some("threshold"), &e.0)),
            );
            if let (Some(direction), true, true, Some(threshold_pct)) =
                (direction, direction_ok, unit_ok, threshold)
            {
                out.insert(
                    id.clone(),
                    Declaration {
                        unit: raw.unit.clone(),
                        direction,
                        label: raw.label.clone(),
                        threshold_pct,
                    },
                );
            }
        }
        problems.or_ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &str) -> Result<Config, Problems> {
        crate::config::parse_with_scenario(extra)
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
    fn thresholds_are_read_as_percentages_and_checked() {
        let c = parse(
            "[measurements.\"app.rss\"]\nthreshold = \"1%\"\n[measurements.\"load.rps\"]\nthreshold = 5\n",
        )
        .unwrap();
        let d = c.declarations().unwrap();
        assert_eq!(d["app.rss"].threshold_pct, Some(1.0));
        assert_eq!(d["load.rps"].threshold_pct, Some(5.0));
        let err = parse("[measurements.\"app.rss\"]\nthreshold = \"-1%\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("/tmp/x/rigor.toml:11: measurements.\"app.rss\".threshold: `-1%` is not a threshold"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_name_file_line_and_key() {
        let err = parse("[measurements.\"cmd.x\"]\ndirection = \"higher\"\nbetter = \"up\"\n")
            .err()
            .unwrap()
            .to_string();
        // BASE has 9 lines; the table is line 10, `better` line 12.
        assert!(err.starts_with("/tmp/x/rigor.toml:12:"), "{err}");
        assert!(err.contains("unknown field `better`"), "{err}");
        assert!(err.contains("measurements.\"cmd.x\".better"), "{err}");
    }

    #[test]
    fn every_bad_declaration_is_reported_at_once() {
        let err = parse(
            "[measurements.\"cmd.x\"]\ndirection = \"up\"\n[measurements.\"app.rss\"]\nunit = \"GiB\"\n",
        )
        .err()
        .unwrap();
        assert_eq!(err.len(), 2, "{err}");
        assert!(err.messages()[1].starts_with("/tmp/x/rigor.toml:13: measurements.\"app.rss\".unit: `app.rss` is rigor's own measurement, in MiB"), "{err}");
    }

    #[test]
    fn direction_must_be_higher_or_lower() {
        let err = parse("[measurements.\"cmd.x\"]\nunit = \"ms\"\ndirection = \"up\"\n")
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            err,
            "/tmp/x/rigor.toml:12: measurements.\"cmd.x\".direction: direction must be \"higher\" \
             or \"lower\", not \"up\""
        );
        let err = parse("[measurements.\"app.rss\"]\ndirection = \"higher\"\n")
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("/tmp/x/rigor.toml:11: measurements.\"app.rss\".direction: `app.rss` is rigor's own"),
            "{err}"
        );
    }
}
