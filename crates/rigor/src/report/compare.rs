//! `rigor compare`'s report: the comparison as a format-neutral document (heading, what was
//! compared, warnings that no figure can change said first, the tables, the other warnings),
//! and where it goes: the terminal, `--json`, `--markdown` and `$GITHUB_STEP_SUMMARY`.

use super::{format, Block, Cell, Document, Style};
use crate::analysis::matching::CompareReport;
use crate::result::Warning;
use anyhow::Context;
use std::path::PathBuf;

/// The compare report as a document, shared by the terminal, `--markdown` and the step summary.
pub fn document(report: &CompareReport) -> Document {
    let mut blocks = vec![Block::Heading(1, "rigor compare".into())];
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
        "baseline {} · candidate{} {} · threshold ±{}% · {}% confidence",
        names[0],
        if names.len() > 2 { "s" } else { "" },
        names[1..].join(", "),
        format::number(report.threshold_pct),
        format::number(report.confidence * 100.0)
    )));
    // Said before the tables: no figure in them can change it.
    let (up_front, rest): (Vec<&Warning>, Vec<&Warning>) = report
        .warnings
        .iter()
        .partition(|w| w.kind == "too_few_iterations");
    if !up_front.is_empty() {
        blocks.push(Block::List(
            up_front
                .iter()
                .map(|w| Cell::styled(super::warning_text(w), Style::Warning))
                .collect(),
        ));
    }
    blocks.extend(super::comparison_blocks(
        &report.comparisons,
        &report.measurements,
    ));
    if !rest.is_empty() {
        blocks.push(Block::Heading(2, "warnings".into()));
        blocks.push(Block::List(
            rest.iter()
                .map(|w| Cell::styled(super::warning_text(w), Style::Warning))
                .collect(),
        ));
    }
    Document { blocks }
}

/// Shows the comparison on the terminal and writes it where it was asked for: `json` (the
/// report itself), `markdown`, and `$GITHUB_STEP_SUMMARY` when set. A file that cannot be
/// written is an error; a step summary that cannot be appended to is only said.
pub fn publish(
    report: &CompareReport,
    json: Option<&PathBuf>,
    markdown: Option<&PathBuf>,
) -> anyhow::Result<()> {
    let doc = document(report);
    crate::console::out(&super::terminal::render_document(
        &doc,
        super::terminal::use_color(),
    ));
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let text = super::markdown::render_document(&doc);
    if let Some(path) = markdown {
        std::fs::write(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(problem) = super::step_summary::append(&text) {
        crate::console::err(&problem);
    }
    Ok(())
}
