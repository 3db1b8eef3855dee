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
            declarations::check(id, &d)
                .map_err(|e| self.error_at(&table, Some("direction"), &e))?;
            out.insert(id.clone(), d);
        }
        Ok(out)
    }
}
