//! Which figures a report shows. A measurement that is zero on every side (the TLS errors of an
//! `http://` run, the stream errors of HTTP/1.1, the errors of a clean run) says nothing, and a
//! command's per-row figures that the pivot already shows, with their change and verdict, would
//! only repeat it a column per row: both are left out unless `--all-measurements` asks for
//! everything.

use super::{pivot, Block, View};
use rigor_model::declarations::Declarations;
use rigor_model::result::{Comparison, Row, RunResult, Verdict};

/// What the report leaves out, decided once per run.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    /// `--all-measurements`: nothing is left out.
    all: bool,
    /// The pivot's measurement and swept variable, when a pivot is shown.
    pivot: Option<(String, String)>,
    /// The report is for the terminal: its comparisons show the key figures and every
    /// measurement with a verdict, the rest are counted (files hold them all).
    terminal: bool,
    /// The key figures (the headline's), always shown.
    key: Vec<String>,
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
            terminal: view.terminal,
            key: super::headline::chosen_key(
                &result.comparisons,
                &view.key,
                view.primary.as_deref(),
            ),
        }
    }

    /// Everything shown, as `--all-measurements` asks.
    #[cfg(test)]
    pub fn everything() -> Shown {
        Shown {
            all: true,
            pivot: None,
            terminal: false,
            key: Vec::new(),
        }
    }

    /// Whether the tables of `rows` leave out the line of `id`.
    pub fn hides(&self, id: &str, rows: &[&Row]) -> bool {
        if self.all {
            return false;
        }
        let carrying = rows
            .iter()
            .filter(|r| r.summary.contains_key(id) || !r.values(id).is_empty())
            .map(|r| &r.variables);
        zero_everywhere(id, rows) || self.in_pivot(id, carrying)
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

    /// The comparison section's blocks for the comparisons shown; on the terminal the key
    /// figures and every regression or improvement, with a line counting the others.
    pub fn comparison_blocks(&self, cs: &[Comparison], decl: &Declarations) -> Vec<Block> {
        let mut shown = self.comparisons(cs);
        let before = shown.len();
        if self.terminal && !self.all {
            shown.retain(|c| {
                self.key.contains(&c.measurement)
                    || matches!(c.verdict, Verdict::Regression | Verdict::Improvement)
            });
        }
        let mut blocks = super::comparisons::comparison_blocks(&shown, decl);
        let left = before - shown.len();
        if left > 0 {
            blocks.push(Block::Text(format!(
                "{left} more comparison(s) of secondary measurements with no verdict of change: \
                 --all-measurements shows them (the JSON, Markdown and HTML reports hold them)"
            )));
        }
        blocks
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
    use crate::sample::sample_result;

    #[test]
    fn zero_on_every_side_is_left_out_unless_all_are_asked_for() {
        let mut r = sample_result();
        for row in &mut r.rows {
            for it in &mut row.iterations {
                it.measurements.insert("load.errors.tls".into(), 0.0);
            }
            rigor_analysis::summary::summarize_row(row);
        }
        let rows: Vec<&Row> = r.rows.iter().collect();
        let shown = Shown::of(&r, &View::default());
        assert!(shown.hides("load.errors.tls", &rows));
        assert!(!shown.hides("load.rps", &rows));
        // One row with one error: the line is shown for both.
        r.rows[1].iterations[0]
            .measurements
            .insert("load.errors.tls".into(), 1.0);
        rigor_analysis::summary::summarize_row(&mut r.rows[1]);
        let rows: Vec<&Row> = r.rows.iter().collect();
        assert!(!shown.hides("load.errors.tls", &rows));
        assert!(!Shown::everything().hides("load.errors.tls", &rows[..1]));
        assert!(shown.hides("load.errors.tls", &rows[..1]));
    }

    #[test]
    fn a_commands_per_row_figures_the_pivot_shows_are_left_out_of_the_tables() {
        use rigor_analysis::summary::tests::row_with;
        let mut r = sample_result();
        r.rows.clear();
        r.comparisons.clear();
        // The row that ran the command (its own elapsed time), and one row per client count
        // with the command's figure.
        let mut parent = row_with(&[], Some("base"), "app.elapsed", &[10.0, 11.0, 12.0]);
        rigor_analysis::summary::summarize_row(&mut parent);
        r.rows.push(parent);
        for clients in ["1", "2", "4"] {
            for variant in ["base", "slow"] {
                let mut row = row_with(
                    &[("clients", clients)],
                    Some(variant),
                    "cmd.mps",
                    &[1.0, 2.0, 3.0],
                );
                rigor_analysis::summary::summarize_row(&mut row);
                r.rows.push(row);
            }
        }
        let rows: Vec<&Row> = r.rows.iter().collect();
        let shown = Shown::of(&r, &View::default());
        assert!(shown.hides("cmd.mps", &rows));
        assert!(!shown.hides("app.elapsed", &rows));
        let doc = crate::run_document(&r);
        assert!(
            !doc.tables()
                .iter()
                .any(|t| t.header.iter().any(|h| h == "clients=1 base")),
            "{:?}",
            doc.tables()
        );
        // The pivot shows them.
        assert!(doc
            .texts()
            .iter()
            .any(|t| t.starts_with("cmd.mps by clients")));
        assert!(!Shown::everything().hides("cmd.mps", &rows));
    }

    #[test]
    fn the_terminal_compares_the_key_figures_and_every_verdict() {
        let mut r = sample_result();
        let mut quiet = r.comparisons[0].clone();
        quiet.measurement = "app.threads.end".into();
        quiet.verdict = Verdict::NoChange;
        let mut loud = quiet.clone();
        loud.measurement = "app.rss.lifetime".into();
        loud.verdict = Verdict::Regression;
        r.comparisons.extend([quiet, loud]);
        let texts = |view: &View| {
            let doc = crate::Document {
                blocks: Shown::of(&r, view).comparison_blocks(&r.comparisons, &r.measurements),
            };
            doc.texts().join("\n")
        };
        let terminal = View::default().on_terminal();
        let t = texts(&terminal);
        assert!(t.contains("Requests/sec"), "{t}");
        assert!(t.contains("Lifetime Max Working Set"), "{t}");
        assert!(!t.contains("Threads at End"), "{t}");
        assert!(t.contains("1 more comparison(s)"), "{t}");
        for view in [
            View::default(),
            View {
                all_measurements: true,
                ..terminal
            },
        ] {
            let t = texts(&view);
            assert!(t.contains("Threads at End"), "{t}");
            assert!(!t.contains("more comparison(s)"), "{t}");
        }
    }
}
