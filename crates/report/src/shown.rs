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
    /// The key figures the reader named (`--key`, `[report] key`); empty lets each scenario's
    /// tables take [`super::headline::default_key_of`] of what its rows measured.
    named_key: Vec<String>,
    /// The run's primary measurement, first of a default key.
    primary: Option<String>,
    /// Measurements a limit checks: their lines stay in the tables beside the key figures.
    limited: Vec<String>,
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
            named_key: view.key.clone(),
            primary: view.primary.clone(),
            limited: result.limits.iter().map(|l| l.measure.clone()).collect(),
        }
    }

    /// What the terminal shows of comparisons alone (`rigor compare`): the key figures of
    /// `named` (else the default set of `primary`) and every verdict of change.
    pub fn terminal_comparisons_of(
        cmps: &[Comparison],
        named: &[String],
        primary: Option<&str>,
    ) -> Shown {
        Shown {
            all: false,
            pivot: None,
            terminal: true,
            key: super::headline::chosen_key(cmps, named, primary),
            named_key: named.to_vec(),
            primary: primary.map(str::to_string),
            limited: Vec::new(),
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
            named_key: Vec::new(),
            primary: None,
            limited: Vec::new(),
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

    /// Whether the terminal's tables of `rows` fold the line of `id` away as a secondary
    /// measurement: on the terminal, unless `--all-measurements`, the tables show the key
    /// figures (the headline's set for these rows), the measurements a limit checks and any
    /// error count that is not zero; the files show every line.
    pub fn folds(&self, id: &str, rows: &[&Row]) -> bool {
        if !self.folding() || is_error_count(id) || self.limited.iter().any(|l| l == id) {
            return false;
        }
        !self.table_key(rows).iter().any(|k| k == id)
    }

    /// The key figures of the tables of `rows`: the named ones, else the default key of what
    /// the rows measured.
    pub fn table_key(&self, rows: &[&Row]) -> Vec<String> {
        if !self.named_key.is_empty() {
            return self.named_key.clone();
        }
        let measured = rigor_model::measurements::order(
            rows.iter()
                .flat_map(|r| r.kept_iterations())
                .flat_map(|it| it.measurements.keys().cloned())
                .chain(rows.iter().flat_map(|r| r.summary.keys().cloned())),
        );
        let measured: Vec<&str> = measured.iter().map(String::as_str).collect();
        super::headline::default_key_of(&measured, self.primary.as_deref())
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
    /// figures and every regression or improvement, with the notes of the primary figure
    /// ([`Shown::folded_comparisons`] counts what is left out).
    pub fn comparison_blocks(&self, cs: &[Comparison], decl: &Declarations) -> Vec<Block> {
        let (shown, _) = self.terminal_comparisons(cs);
        if self.folding() {
            // The key figures in the tables; a secondary figure with a verdict of change in a
            // line per compared pair under them (a wide label would split every table).
            let (key, others): (Vec<Comparison>, Vec<Comparison>) = shown
                .into_iter()
                .partition(|c| self.key.contains(&c.measurement));
            let primary = self.key.first();
            let noted = |c: &Comparison| primary == Some(&c.measurement);
            let mut blocks = super::comparisons::comparison_blocks_noting(&key, decl, &noted, true);
            blocks.extend(also_changed(&others, decl));
            blocks
        } else {
            super::comparisons::comparison_blocks(&shown, decl)
        }
    }

    /// Whether the terminal's comparison tables show every comparison of `id` (a key figure
    /// none of whose comparisons is left out): a pivot of `id` would repeat them.
    pub fn tables_show_all_of(&self, cs: &[Comparison], id: &str) -> bool {
        let of_id = cs.iter().filter(|c| c.measurement == id).count();
        self.folding()
            && self.key.iter().any(|k| k == id)
            && of_id > 0
            && self
                .comparisons(cs)
                .iter()
                .filter(|c| c.measurement == id)
                .count()
                == of_id
    }

    /// How many comparisons of secondary measurements with no verdict of change, and how many
    /// notes of the other figures, the terminal leaves out (the files hold them).
    pub fn folded_comparisons(&self, cs: &[Comparison]) -> (usize, usize) {
        let (shown, left) = self.terminal_comparisons(cs);
        if !self.folding() {
            return (left, 0);
        }
        let primary = self.key.first();
        let notes = shown
            .iter()
            .filter(|c| c.note.is_some() && primary != Some(&c.measurement))
            .count();
        (left, notes)
    }

    /// Whether this is the terminal's short report (`--all-measurements` shows everything).
    pub fn folding(&self) -> bool {
        self.terminal && !self.all
    }

    /// The comparisons shown and how many of the others the terminal leaves out.
    fn terminal_comparisons(&self, cs: &[Comparison]) -> (Vec<Comparison>, usize) {
        let mut shown = self.comparisons(cs);
        let before = shown.len();
        if self.folding() {
            shown.retain(|c| {
                self.key.contains(&c.measurement)
                    || matches!(c.verdict, Verdict::Regression | Verdict::Improvement)
            });
        }
        let left = before - shown.len();
        (shown, left)
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

/// `slowed vs baseline (window=16): also changed CPU Time +77.8% regression · …`: the
/// secondary figures with a verdict of change, a line per compared pair, coloured by the worst.
fn also_changed(others: &[Comparison], decl: &Declarations) -> Option<Block> {
    let several_scenarios = others.iter().any(|c| c.scenario != others[0].scenario);
    let mut pairs: Vec<Vec<&Comparison>> = Vec::new();
    for c in others {
        let same = |p: &&mut Vec<&Comparison>| {
            let f = p[0];
            f.scenario == c.scenario
                && f.row == c.row
                && f.baseline == c.baseline
                && f.candidate == c.candidate
        };
        match pairs.iter_mut().find(|p| same(p)) {
            Some(p) => p.push(c),
            None => pairs.push(vec![c]),
        }
    }
    let items: Vec<super::Cell> = pairs
        .iter()
        .map(|pair| {
            let first = pair[0];
            let row = first.row_key();
            let row = if several_scenarios {
                row.label()
            } else {
                row.detail()
            };
            let mut head = format!("{} vs {}", first.candidate, first.baseline);
            if !row.is_empty() {
                head = format!("{head} ({row})");
            }
            let pieces: Vec<String> = pair
                .iter()
                .map(|c| {
                    format!(
                        "{} {} {}",
                        super::headline::short_name(&c.measurement, decl),
                        super::comparisons::change_text(c),
                        super::comparisons::verdict_text(c)
                    )
                })
                .collect();
            let style = if pair.iter().any(|c| c.verdict == Verdict::Regression) {
                super::Style::Regression
            } else {
                super::Style::Improvement
            };
            super::Cell::styled(
                format!("{head}: also changed {}", pieces.join(" · ")),
                style,
            )
        })
        .collect();
    (!items.is_empty()).then_some(Block::List(items))
}

/// Whether `id` counts failures of the load (responses, sockets, each kind of error): a count
/// that is not zero always shows.
fn is_error_count(id: &str) -> bool {
    use rigor_model::measurements::ids;
    [
        ids::LOAD_BAD_RESPONSES,
        ids::LOAD_SOCKET_ERRORS,
        ids::LOAD_ERRORS_CONNECT,
        ids::LOAD_ERRORS_READ,
        ids::LOAD_ERRORS_WRITE,
        ids::LOAD_ERRORS_TIMEOUT,
        ids::LOAD_ERRORS_PARSE,
        ids::LOAD_ERRORS_CLOSED,
        ids::LOAD_ERRORS_TLS,
        ids::LOAD_ERRORS_RESET,
        ids::LOAD_ERRORS_GOAWAY,
    ]
    .contains(&id)
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
        loud.note = Some("a note on the working set".into());
        r.comparisons[0].note = Some("a note on the requests".into());
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
        // A secondary figure with a verdict: said under the tables, not a line of them.
        assert!(t.contains("also changed Lifetime Max Working Set"), "{t}");
        assert!(!t.contains("Threads at End"), "{t}");
        // The primary's note alone; the other counted with the comparison left out.
        assert!(t.contains("a note on the requests"), "{t}");
        assert!(!t.contains("a note on the working set"), "{t}");
        let folded = Shown::of(&r, &terminal).folded_comparisons(&r.comparisons);
        assert_eq!(folded, (1, 1));
        for view in [
            View::default(),
            View {
                all_measurements: true,
                ..terminal
            },
        ] {
            let t = texts(&view);
            assert!(t.contains("Threads at End"), "{t}");
            assert!(t.contains("a note on the working set"), "{t}");
            let folded = Shown::of(&r, &view).folded_comparisons(&r.comparisons);
            assert_eq!(folded, (0, 0));
        }
    }

    #[test]
    fn the_terminal_tables_show_the_key_figures_limits_and_errors() {
        use rigor_model::measurements::ids;
        let mut r = sample_result();
        for row in &mut r.rows {
            for it in &mut row.iterations {
                it.measurements.insert(ids::LOAD_ERRORS_READ.into(), 3.0);
                it.measurements.insert(ids::APP_THREADS_END.into(), 4.0);
                it.measurements.insert(ids::LOAD_LATENCY_P90.into(), 5.0);
            }
            rigor_analysis::summary::summarize_row(row);
        }
        let rows: Vec<&Row> = r.rows.iter().collect();
        let terminal = View::default().on_terminal();
        let shown = Shown::of(&r, &terminal);
        // The key figures of a load job, and an error count that is not zero.
        for id in [ids::LOAD_RPS, ids::LOAD_LATENCY_P99, ids::LOAD_ERRORS_READ] {
            assert!(!shown.folds(id, &rows), "{id}");
        }
        assert!(shown.folds(ids::APP_THREADS_END, &rows));
        assert!(shown.folds(ids::LOAD_LATENCY_P90, &rows));
        let text = crate::terminal::render_with(&r, &terminal, false);
        assert!(text.contains("Requests/sec"), "{text}");
        assert!(!text.contains("Threads at End"), "{text}");
        assert!(text.contains("not shown: "), "{text}");
        // A limit on p90 keeps its line; a named key replaces the default one.
        r.limits.push(rigor_analysis::limits::Outcome {
            measure: ids::LOAD_LATENCY_P90.into(),
            condition: "< 50ms".into(),
            bound: Some(50.0),
            scenario: r.scenario.clone(),
            variables: Default::default(),
            variant: None,
            value: Some(5.0),
            unit: "ms".into(),
            passed: true,
        });
        let named = View {
            key: vec![ids::APP_THREADS_END.into()],
            ..terminal.clone()
        };
        let shown = Shown::of(&r, &named);
        assert!(!shown.folds(ids::LOAD_LATENCY_P90, &rows));
        assert!(!shown.folds(ids::APP_THREADS_END, &rows));
        assert!(shown.folds(ids::LOAD_RPS, &rows));
        // Files and --all-measurements fold nothing.
        for view in [
            View::default(),
            View {
                all_measurements: true,
                ..terminal
            },
        ] {
            assert!(!Shown::of(&r, &view).folds(ids::APP_THREADS_END, &rows));
        }
    }
}
