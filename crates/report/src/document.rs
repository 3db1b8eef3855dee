//! The format-neutral report: blocks of plain text, tables and lists, each cell with a style
//! rather than markup. Renderers (terminal, Markdown, HTML) decide how a style looks and escape
//! the text for their format; nothing here is Markdown, so no renderer has to undo another's.

use rigor_model::result::Verdict;

/// How a cell wants to be shown; terminals colour it, markdown emphasises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Most cells: figures and labels.
    Plain,
    /// A regression verdict or a failed iteration (red).
    Regression,
    /// An improvement verdict (green).
    Improvement,
    /// An inconclusive verdict or a note asking for more iterations (yellow).
    Inconclusive,
    /// A warning about the run (yellow).
    Warning,
}

impl Style {
    /// The style of a verdict, so every renderer colours verdicts alike.
    pub fn of_verdict(verdict: Verdict) -> Style {
        match verdict {
            Verdict::Regression => Style::Regression,
            Verdict::Improvement => Style::Improvement,
            Verdict::Inconclusive => Style::Inconclusive,
            Verdict::NoChange => Style::Plain,
        }
    }
}

/// Text plus how to show it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// What is shown, already formatted.
    pub text: String,
    /// How it is shown.
    pub style: Style,
}

impl Cell {
    /// An unstyled cell (most cells are).
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            style: Style::Plain,
        }
    }

    /// A styled cell.
    pub fn styled(text: impl Into<String>, style: Style) -> Cell {
        Cell {
            text: text.into(),
            style,
        }
    }
}

/// A table whose first column holds labels and the others values.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column titles; the first names the table (`application`, `load`, `measurement`…).
    pub header: Vec<String>,
    /// One line per measurement (or field), as many cells as the header.
    pub rows: Vec<Vec<Cell>>,
    /// Values are figures (right-aligned, so digits line up) rather than text (left-aligned).
    pub numeric: bool,
    /// Columns a terminal too narrow for the table may leave out rather than split it, least
    /// important first (each step every column of one kind: all the `p` columns, then all the
    /// intervals); files always show them.
    pub droppable: Vec<Vec<usize>>,
}

/// One piece of a report, in reading order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A section title; level 1 is the document, 2 a scenario or section, 3 a sub-table.
    Heading(u8, String),
    /// A sentence or two of prose.
    Text(String),
    /// A table (measurements, a comparison, the environment).
    Table(Table),
    /// Bulleted items (failures, warnings, notes).
    List(Vec<Cell>),
}

/// A whole report, independent of where it is shown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// The blocks in reading order.
    pub blocks: Vec<Block>,
}

impl Document {
    /// Every table in the document, so tests can check structure rather than rendered text.
    #[cfg(any(test, feature = "fixtures"))]
    pub fn tables(&self) -> Vec<&Table> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect()
    }
}

#[cfg(any(test, feature = "fixtures"))]
impl Document {
    /// Every list item in the document, in order.
    pub fn list_items(&self) -> Vec<&Cell> {
        self.blocks
            .iter()
            .filter_map(|b| match b {
                Block::List(l) => Some(l),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Every piece of text the document holds: headings, prose, table headers and cells, list
    /// items.
    pub fn texts(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for b in &self.blocks {
            match b {
                Block::Heading(_, t) | Block::Text(t) => out.push(t.as_str()),
                Block::Table(t) => {
                    out.extend(t.header.iter().map(String::as_str));
                    out.extend(t.rows.iter().flatten().map(|c| c.text.as_str()));
                }
                Block::List(l) => out.extend(l.iter().map(|c| c.text.as_str())),
            }
        }
        out
    }
}
