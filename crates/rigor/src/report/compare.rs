//! `rigor compare`'s report: the comparison as a format-neutral document (heading, what was
//! compared, warnings that no figure can change said first, the tables, the other warnings),
//! and where it goes: the terminal, `--json`, `--markdown`, `--html` (with charts) and
//! `$GITHUB_STEP_SUMMARY`.

use super::{format, warnings, Block, Document};
use crate::analysis::matching::CompareReport;
use anyhow::Context;
use std::path::PathBuf;

/// The compare report without a pivot, as tests build it.
#[cfg(test)]
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
    blocks.extend(super::comparison_blocks(
        &report.comparisons,
        &report.measurements,
    ));
    blocks.extend_from_slice(pivot);
    blocks.extend(warnings::section(warnings::items(&report.warnings)));
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
        "{}: its variants, baseline {baseline} · candidate{} {}",
        names.first().map_or("", String::as_str),
        plural(candidates.len()),
        candidates.join(", ")
    )
}

/// Where `rigor compare` writes its report besides the terminal.
pub struct Outputs<'a> {
    /// `--json`: the report itself.
    pub json: Option<&'a PathBuf>,
    /// `--markdown`.
    pub markdown: Option<&'a PathBuf>,
    /// `--html`: the tables and a chart per measurement in one self-contained page.
    pub html: Option<&'a PathBuf>,
    /// What the headline shows.
    pub key: Key<'a>,
}

/// Shows the comparison and its `pivot` blocks on the terminal and writes it where it was asked
/// for, and to `$GITHUB_STEP_SUMMARY` when set. A file that cannot be written is an error; a
/// step summary that cannot be appended to is only said.
pub fn publish(report: &CompareReport, pivot: &[Block], to: &Outputs) -> anyhow::Result<()> {
    let Outputs {
        json,
        markdown,
        html,
        key,
    } = *to;
    let on_terminal = document_with(report, pivot, &key, super::view::terminal_width());
    // The files are written even when the terminal's copy is lost; the loss is the error.
    let shown = crate::console::report(&super::terminal::render_document(
        &on_terminal,
        super::terminal::use_color(),
    ));
    let doc = document_with(report, pivot, &key, super::view::FILE_WIDTH);
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = html {
        let page = super::html::render_page(
            &doc,
            "rigor compare",
            &super::chart::compare_section(report),
        );
        std::fs::write(path, page).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let text = super::markdown::render_document(&doc);
    if let Some(path) = markdown {
        std::fs::write(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(problem) = super::step_summary::append(&text) {
        crate::console::err(&problem);
    }
    shown.map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::matching::tests::{compare, noisy, result};
    use crate::report::Block;
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
    fn too_few_kept_iterations_are_said_before_the_tables() {
        // 6 recorded, 3 excluded (as -i 6 --exclude 2:1 leaves them): 3 vs 3 can never reach 95%.
        let mk = |center: f64| {
            let mut r = result(None, &noisy(center, 6), "6.8");
            for it in r.rows[0].iterations.iter_mut().take(3) {
                it.excluded = crate::result::Exclusion::Order;
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
