//! rigor's reports: a result (and what the analysis said of it) as one format-neutral
//! [`Document`] (the tables crank users paste, plus comparisons, warnings and the machine)
//! rendered to the terminal, GitHub Markdown or HTML with SVG charts; CSV is one line per
//! iteration. `rigor history`'s series are drawn here too.
//!
//! Building the document once and rendering it several times keeps the outputs identical in
//! content; only the dress differs. The crate returns strings: it writes no file and computes
//! no statistic (summaries are the analysis's, completed when a result is loaded), so the
//! compiler keeps rendering apart from measuring.

pub mod capacity_text;
mod cells;
pub mod chart;
pub mod compare;
mod comparisons;
pub mod csv;
mod document;
pub mod environment;
mod failures;
mod fit;
pub use rigor_model::format;
pub mod headline;
pub mod history_html;
pub mod history_json;
pub mod history_text;
pub mod html;
pub mod limits;
pub mod load_text;
pub mod markdown;
pub mod pivot;
pub mod pivot_blocks;
#[cfg(test)]
mod pivot_merge_tests;
pub mod profiles;
mod replaced;
mod run;
#[cfg(any(test, feature = "fixtures"))]
pub mod sample;
mod shown;
pub mod sparkline;
mod tables;
pub mod terminal;
mod timeline;
pub mod view;
pub mod warnings;

pub use comparisons::{change_text, comparison_blocks};
pub use document::{Block, Cell, Document, Style, Table};
#[cfg(any(test, feature = "fixtures"))]
pub use run::run_document;
pub use run::run_document_with;
pub use view::View;
pub use warnings::warning_text;
