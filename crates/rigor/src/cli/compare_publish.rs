//! Where `rigor compare`'s report goes: the terminal, `--json`, `--markdown`, `--html` (with
//! charts) and `$GITHUB_STEP_SUMMARY`. The report crate renders the strings; writing them is
//! the command's.

use crate::analysis::matching::CompareReport;
use crate::report::{compare::document_with, compare::short_document, compare::Key, Block};
use anyhow::Context;
use std::path::PathBuf;

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
    /// The measurement of the default pivot (none asked for by name): the terminal leaves it
    /// out when the comparison table shows each of its rows.
    pub pivot_of: Option<&'a str>,
    /// The pivot as the terminal shows it (its tables of the same columns joined).
    pub terminal_pivot: &'a [Block],
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
        pivot_of,
        terminal_pivot,
    } = *to;
    let width = crate::report::view::terminal_width();
    let on_terminal = if all_measurements {
        document_with(report, pivot, &key, width)
    } else {
        short_document(report, terminal_pivot, pivot_of, &key, width)
    };
    // The files are written even when the terminal's copy is lost; the loss is the error.
    let shown = crate::console::report(&crate::report::terminal::render_document(
        &on_terminal,
        crate::report::terminal::use_color(),
    ));
    let doc = document_with(report, pivot, &key, crate::report::view::FILE_WIDTH);
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = html {
        let page = crate::report::html::render_page(
            &doc,
            "rigor compare",
            &crate::report::chart::compare_section(report),
        );
        std::fs::write(path, page).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let text = crate::report::markdown::render_document(&doc);
    if let Some(path) = markdown {
        std::fs::write(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(problem) = crate::step_summary::append(&text) {
        crate::console::err(&problem);
    }
    shown
}
