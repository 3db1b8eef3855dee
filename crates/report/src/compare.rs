//! `rigor compare`'s report: the comparison as a format-neutral document (heading, what was
//! compared, warnings that no figure can change said first, the tables, the other warnings),
//! which the binary shows on the terminal and writes to `--json`, `--markdown`, `--html` (with
//! charts) and `$GITHUB_STEP_SUMMARY`.

use super::{format, warnings, Block, Document};
use rigor_analysis::matching::CompareReport;

/// The compare report without a pivot, as tests build it.
#[cfg(any(test, feature = "fixtures"))]
pub fn document(report: &CompareReport) -> Document {
    document_with(report, &[], &Key::default(), super::view::FILE_WIDTH)
}

/// What the headline of `rigor compare` shows: `--key`, else the default set of `primary`
/// (the first watched measurement).
#[derive(Debug, Clone, Copy, Default)]
pub struct Key<'a> {
    /// `--key`: the figures each pair's headline line shows; empty for the default set.
    pub ids: &'a [String],
    /// The measurement the default set starts with.
    pub primary: Option<&'a str>,
}

/// The compare report as a document, shared by the terminal, `--markdown` and the step summary,
/// with `pivot` (its pivot tables, if any) after the comparison tables, and the headline of
/// `key` (wrapped to `width`) under the title and again at the end.
pub fn document_with(report: &CompareReport, pivot: &[Block], key: &Key, width: usize) -> Document {
    document_built(report, pivot, key, width, false, None)
}

/// Lines a report may take and still show its headline on the same screen as its end: a
/// longer one says the headline again as its last lines.
pub const SCREEN_LINES: usize = 45;

/// [`document_with`] as the terminal shows it unless `--all-measurements`: the comparisons of
/// the key figures and of every verdict of change in one table per set of columns (a sweep's
/// points its lines), the primary's notes each said once, and one line counting what was left
/// out (the files hold it). The pivot of `pivot_of` (the default one, not asked for by name)
/// is left out when the table already compares each of its rows; the headline is said again at
/// the end only when the report is longer than [`SCREEN_LINES`] at `width`.
pub fn short_document(
    report: &CompareReport,
    pivot: &[Block],
    pivot_of: Option<&str>,
    key: &Key,
    width: usize,
) -> Document {
    let shown =
        super::shown::Shown::terminal_comparisons_of(&report.comparisons, key.ids, key.primary);
    let repeated = pivot_of.filter(|id| shown.tables_show_all_of(&report.comparisons, id));
    let pivot = if repeated.is_some() { &[] } else { pivot };
    let mut doc = document_built(report, pivot, key, width, true, repeated);
    let headline = super::headline::block(
        super::headline::lines(
            &report.comparisons,
            &report.measurements,
            key.ids,
            key.primary,
        ),
        width,
    );
    if let Some(headline) = headline {
        let tail = doc.blocks.len() - 1;
        let lines = super::terminal::render_document_at(
            &Document {
                blocks: doc.blocks[..tail].to_vec(),
            },
            false,
            width,
        )
        .lines()
        .count();
        if lines <= SCREEN_LINES && doc.blocks[tail] == headline {
            doc.blocks.truncate(tail);
        }
    }
    doc
}

fn document_built(
    report: &CompareReport,
    pivot: &[Block],
    key: &Key,
    width: usize,
    short: bool,
    pivot_left_out: Option<&str>,
) -> Document {
    let headline = super::headline::block(
        super::headline::lines(
            &report.comparisons,
            &report.measurements,
            key.ids,
            key.primary,
        ),
        width,
    );
    let mut blocks = vec![Block::Heading(1, "rigor compare".into())];
    blocks.extend(headline.clone());
    let names: Vec<String> = report
        .files
        .iter()
        .map(|f| {
            if f.path.contains(&f.name) {
                f.path.clone()
            } else {
                format!("{} ({})", f.name, f.path)
            }
        })
        .collect();
    blocks.push(Block::Text(format!(
        "{} · threshold ±{}% · {}% confidence",
        sides(&names, report),
        format::number(report.threshold_pct),
        format::number(report.confidence * 100.0)
    )));
    // Said before the tables: no figure in them can change it.
    blocks.extend(warnings::up_front_block(&report.warnings));
    let mut closing = None;
    if short {
        let shown =
            super::shown::Shown::terminal_comparisons_of(&report.comparisons, key.ids, key.primary);
        blocks.extend(shown.comparison_blocks(&report.comparisons, &report.measurements));
        let (comparisons, notes) = shown.folded_comparisons(&report.comparisons);
        let mut parts = Vec::new();
        for (n, what) in [
            (comparisons, "comparison(s) without a verdict of change"),
            (notes, "note(s)"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        let mut said = Vec::new();
        if !parts.is_empty() {
            said.push(format!("{} (--all-measurements)", parts.join(", ")));
        }
        if let Some(id) = pivot_left_out {
            said.push(format!("the pivot table (--pivot {id})"));
        }
        if !said.is_empty() {
            closing = Some(Block::Text(format!(
                "not shown: {}; --json, --markdown and --html hold all",
                said.join(", ")
            )));
        }
    } else {
        blocks.extend(super::comparison_blocks(
            &report.comparisons,
            &report.measurements,
        ));
    }
    blocks.extend_from_slice(pivot);
    blocks.extend(super::profiles::blocks_of(&report.profiles, &[]));
    blocks.extend(warnings::section(warnings::items(&report.warnings)));
    blocks.extend(closing);
    blocks.extend(headline);
    Document { blocks }
}

/// What is compared with what: the files, or with one file its own variants (the file has no
/// candidate beside it, so the candidates are named from its comparisons).
fn sides(names: &[String], report: &CompareReport) -> String {
    let plural = |n: usize| if n > 1 { "s" } else { "" };
    if names.len() > 1 {
        return format!(
            "baseline {} · candidate{} {}",
            names[0],
            plural(names.len() - 1),
            names[1..].join(", ")
        );
    }
    let mut candidates: Vec<&str> = Vec::new();
    for c in &report.comparisons {
        if !candidates.contains(&c.candidate.as_str()) {
            candidates.push(&c.candidate);
        }
    }
    let baseline = report
        .comparisons
        .first()
        .map_or("", |c| c.baseline.as_str());
    format!(
        "{}: its variants {} vs {baseline}",
        names.first().map_or("", String::as_str),
        candidates.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Block;
    use rigor_analysis::matching::tests::{compare, noisy, result};
    use std::path::PathBuf;

    #[test]
    fn three_files_give_a_column_group_per_candidate() {
        let inputs = vec![
            (
                PathBuf::from("/tmp/net5.json"),
                result(None, &noisy(243_000.0, 10), "6.8"),
            ),
            (
                PathBuf::from("/tmp/net6.json"),
                result(None, &noisy(260_928.0, 10), "6.8"),
            ),
            (
                PathBuf::from("/tmp/pr.json"),
                result(Some("this PR"), &noisy(200_000.0, 10), "6.9"),
            ),
        ];
        let report = compare(&inputs, &[]).unwrap();
        let doc = document(&report);
        let table = doc.tables()[0].clone();
        assert_eq!(
            table.header,
            vec![
                "measurement",
                "net5",
                "net6",
                "Δ median",
                "95% CI",
                "p",
                "verdict",
                "this PR",
                "Δ median",
                "95% CI",
                "p",
                "verdict"
            ]
        );
        assert_eq!(table.rows[0][0].text, "Max Working Set (MiB)");
        assert_eq!(table.rows[1][0].text, "Requests/sec (1/s)");
        assert_eq!(table.rows[1][1].text, "243,000");
    }

    #[test]
    fn the_terminal_leaves_out_a_pivot_its_table_repeats_and_a_headline_on_the_same_screen() {
        let inputs = vec![
            (
                PathBuf::from("/tmp/a/result.json"),
                result(None, &noisy(1000.0, 10), "6.8"),
            ),
            (
                PathBuf::from("/tmp/b/result.json"),
                result(None, &noisy(900.0, 10), "6.8"),
            ),
        ];
        let report = compare(&inputs, &[]).unwrap();
        let key = Key {
            ids: &[],
            primary: Some("load.rps"),
        };
        let pivot = vec![Block::Text("the pivot".into())];
        let text = |doc: &Document| crate::terminal::render_document_at(doc, false, 100);
        let headline = |t: &str| t.lines().filter(|l| l.starts_with("• b vs a")).count();
        // The table compares load.rps in every row: its default pivot would repeat it.
        let short = text(&short_document(
            &report,
            &pivot,
            Some("load.rps"),
            &key,
            100,
        ));
        assert!(!short.contains("the pivot\n"), "{short}");
        assert!(
            short.contains("the pivot table (--pivot load.rps)"),
            "{short}"
        );
        assert!(short.lines().count() <= SCREEN_LINES, "{short}");
        let once = headline(&short);
        // A pivot asked for by name stays.
        let asked = text(&short_document(&report, &pivot, None, &key, 100));
        assert!(asked.contains("the pivot\n"), "{asked}");
        assert!(!asked.contains("--pivot"), "{asked}");
        // Longer than a screen (a narrow terminal wraps every line): the headline again at the
        // end, as the files always have it.
        let narrow = crate::terminal::render_document_at(
            &short_document(&report, &pivot, Some("load.rps"), &key, 30),
            false,
            30,
        );
        assert!(narrow.lines().count() > SCREEN_LINES, "{narrow}");
        assert_eq!(headline(&narrow), 2, "{narrow}");
        assert_eq!(once, 1, "{short}");
        let file = text(&document_with(&report, &pivot, &key, 100));
        assert_eq!(headline(&file), 2, "{file}");
    }

    #[test]
    fn too_few_kept_iterations_are_said_before_the_tables() {
        // 6 recorded, 3 excluded (as -i 6 --exclude 2:1 leaves them): 3 vs 3 can never reach 95%.
        let mk = |center: f64| {
            let mut r = result(None, &noisy(center, 6), "6.8");
            for it in r.rows[0].iterations.iter_mut().take(3) {
                it.excluded = rigor_model::result::Exclusion::Order;
            }
            r
        };
        let inputs = vec![
            (PathBuf::from("a.json"), mk(1000.0)),
            (PathBuf::from("b.json"), mk(900.0)),
        ];
        let doc = document(&compare(&inputs, &[]).unwrap());
        let first_table = doc
            .blocks
            .iter()
            .position(|b| matches!(b, Block::Table(_)))
            .unwrap();
        let said = doc
            .blocks
            .iter()
            .position(
                |b| matches!(b, Block::List(l) if l[0].text.starts_with("[too_few_iterations]")),
            )
            .unwrap();
        assert!(said < first_table);
    }
}
