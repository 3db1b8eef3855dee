//! Which figures a report shows. A measurement that is zero on every side (the TLS errors of an
//! `http://` run, the stream errors of HTTP/1.1, the errors of a clean run) says nothing, and a
//! command's per-row figures that the pivot already shows, with their change and verdict, would
//! only repeat it a column per row: both are left out unless `--all-measurements` asks for
//! everything.

use super::{pivot, View};
use crate::result::{Comparison, Row, RunResult};

/// What the report leaves out, decided once per run.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    /// `--all-measurements`: nothing is left out.
    all: bool,
    /// The pivot's measurement and swept variable, when a pivot is shown.
    pivot: Option<(String, String)>,
}

impl Shown {
    /// What `view` shows of `result`.
    pub fn of(result: &RunResult, view: &View) -> Shown {
        let pivot = view
            .pivot
            .clone()
            .or_else(|| pivot::default_measurement(result))
            .and_then(|id| {
                let built = pivot::build(result, &id, view.pivot_by.as_deref());
                let swept = built.first()?.swept.clone();
                Some((id, swept))
            });
        Shown {
            all: view.all_measurements,
            pivot,
        }
    }

    /// Everything shown, as `--all-measurements` asks.
    #[cfg(test)]
    pub fn everything() -> Shown {
        Shown {
            all: true,
            pivot: None,
        }
    }

    /// Whether the tables of `rows` leave out the line of `id`.
    pub fn hides(&self, id: &str, rows: &[&Row]) -> bool {
        if self.all {
            return false;
        }
        zero_everywhere(id, rows) || self.in_pivot(id, rows.iter().map(|r| &r.variables))
    }

    /// The comparisons shown: those whose medians are not both zero and that the pivot does not
    /// already show.
    pub fn comparisons(&self, cs: &[Comparison]) -> Vec<Comparison> {
        cs.iter()
            .filter(|c| {
                self.all
                    || !(c.baseline_median == Some(0.0) && c.candidate_median == Some(0.0)
                        || self.in_pivot(&c.measurement, std::iter::once(&c.row)))
            })
            .cloned()
            .collect()
    }

    /// Whether `id` is the pivot's measurement and every one of these rows has the swept
    /// variable, so the pivot shows each of them.
    fn in_pivot<'a, V: 'a>(
        &self,
        id: &str,
        mut rows: impl Iterator<Item = &'a std::collections::BTreeMap<String, V>>,
    ) -> bool {
        self.pivot
            .as_ref()
            .is_some_and(|(p, swept)| p == id && rows.all(|vars| vars.contains_key(swept)))
    }
}

/// Whether every figure of `id` the rows hold (kept iterations and stored summaries) is zero.
fn zero_everywhere(id: &str, rows: &[&Row]) -> bool {
    let mut any = false;
    for row in rows {
        for v in row
            .values(id)
            .into_iter()
            .chain(row.summary.get(id).map(|s| s.median))
        {
            any = true;
            if v != 0.0 {
                return false;
            }
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sample::sample_result;

    #[test]
    fn zero_on_every_side_is_left_out_unless_all_are_asked_for() {
        let mut r = sample_result();
        for row in &mut r.rows {
            for it in &mut row.iterations {
                it.measurements.insert("load.errors.tls".into(), 0.0);
            }
            crate::analysis::summary::summarize_row(row);
        }
        let rows: Vec<&Row> = r.rows.iter().collect();
        let shown = Shown::of(&r, &View::default());
        assert!(shown.hides("load.errors.tls", &rows));
        assert!(!shown.hides("load.rps", &rows));
        // One row with one error: the line is shown for both.
        r.rows[1].iterations[0]
            .measurements
            .insert("load.errors.tls".into(), 1.0);
        crate::analysis::summary::summarize_row(&mut r.rows[1]);
        let rows: Vec<&Row> = r.rows.iter().collect();
        assert!(!shown.hides("load.errors.tls", &rows));
        assert!(!Shown::everything().hides("load.errors.tls", &rows[..1]));
        assert!(shown.hides("load.errors.tls", &rows[..1]));
    }
}
