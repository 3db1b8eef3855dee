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
    document_built(report, pivot, key, width, false)
}

/// [`document_with`] as the terminal shows it unless `--all-measurements`: the comparisons of
/// the key figures and of every verdict of change, the primary's notes, a matrix's tables of
/// the same columns joined, and one line counting what was left out (the files hold it).
pub fn short_document(
    report: &CompareReport,
    pivot: &[Block],
    key: &Key,
    width: usize,
) -> Document {
    document_built(report, pivot, key, width, true)
}

fn document_built(
    report: &CompareReport,
    pivot: &[Block],
    key: &Key,
    width: usize,
    short: bool,
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
        if !parts.is_empty() {
            closing = Some(Block::Text(format!(
                "not shown: {} (--all-measurements); --json, --markdown and --html hold all",
                parts.join(", ")
            )));
        }
    } else {
        blocks.extend(super::comparison_blocks(
            &report.comparisons,
            &report.measurements,
        ));
    }
    blocks.extend_from_slice(pivot);
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
    /// `--all-measurements`: the terminal shows every comparison, as the files do.
    pub all_measurements: bool,
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
        all_measurements,
    } = *to;
    let width = super::view::terminal_width();
    let on_terminal = if all_measurements {
        document_with(report, pivot, &key, width)
    } else {
        short_document(report, pivot, &key, width)
    };
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
    shown
}
