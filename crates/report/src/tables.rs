//! The measurement tables of one scenario (crank style): an application and a load table, plus
//! one for ids of neither, a column per row and a line per measurement; the line of how many
//! iterations each column stands on closes the first of them. Lines [`Shown`] leaves out (zero
//! everywhere, or in the pivot) are not drawn.

use super::cells::{iterations_cell, measurement_cell, outside_window_cell};
use super::shown::Shown;
use super::{Block, Cell, Table};
use rigor_model::declarations::{self, Declarations};
use rigor_model::measurements::{self, Group};
use rigor_model::result::Row;

/// The measurement tables of one scenario's rows; an `iterations` table alone when every
/// iteration failed before measuring anything, so the report still says how many ran.
pub fn blocks(rows: &[&Row], decl: &Declarations, shown: &Shown) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut iterations_shown = false;
    for (title, mut ids) in ids_by_table(rows) {
        ids.retain(|id| !shown.hides(id, rows));
        // Only the rows with a figure here: a command's own rows (one per client count) carry
        // its figures alone, the row that ran it the application's.
        let rows: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| ids.iter().any(|id| has(r, id)))
            .collect();
        if ids.is_empty() || rows.is_empty() {
            continue;
        }
        let mut lines: Vec<Vec<Cell>> = ids
            .iter()
            .map(|id| {
                line(Cell::plain(declarations::label(id, decl)), &rows, |r| {
                    measurement_cell(r, id)
                })
            })
            .collect();
        if title == "load" {
            lines.push(line(
                Cell::plain("Requests outside window"),
                &rows,
                outside_window_cell,
            ));
        }
        lines.push(iterations_line(&rows));
        iterations_shown = true;
        blocks.push(Block::Table(table(title, &rows, lines)));
    }
    if !iterations_shown && !rows.is_empty() {
        blocks.push(Block::Table(table(
            "iterations",
            rows,
            vec![iterations_line(rows)],
        )));
    }
    blocks
}

/// Whether the row has a figure for `id` in a kept iteration or its summary.
fn has(row: &Row, id: &str) -> bool {
    row.summary.contains_key(id)
        || row
            .kept_iterations()
            .any(|it| it.measurements.contains_key(id))
}

/// The ids the kept iterations (and stored summaries) carry, in catalogue order, split by the
/// table that shows them: application, load, and ids the catalogue does not know.
fn ids_by_table(rows: &[&Row]) -> [(&'static str, Vec<String>); 3] {
    let ids = measurements::order(
        rows.iter()
            .flat_map(|r| r.kept_iterations())
            .flat_map(|it| it.measurements.keys().cloned())
            .chain(rows.iter().flat_map(|r| r.summary.keys().cloned())),
    );
    let of = |group: Option<Group>| -> Vec<String> {
        ids.iter()
            .filter(|id| measurements::info(id).map(|m| m.group) == group)
            .cloned()
            .collect()
    };
    [
        ("application", of(Some(Group::Application))),
        ("load", of(Some(Group::Load))),
        ("measurements", of(None)),
    ]
}

/// A table line: its label, then one cell per row.
fn line(label: Cell, rows: &[&Row], cell: impl Fn(&Row) -> String) -> Vec<Cell> {
    let mut line = vec![label];
    line.extend(rows.iter().map(|r| Cell::plain(cell(r))));
    line
}

fn iterations_line(rows: &[&Row]) -> Vec<Cell> {
    line(
        Cell::plain("Iterations (used/total)"),
        rows,
        iterations_cell,
    )
}

/// A figures table titled `title` with a column per row, headed by the row's label.
fn table(title: &str, rows: &[&Row], lines: Vec<Vec<Cell>>) -> Table {
    let mut header = vec![title.to_string()];
    header.extend(rows.iter().map(|r| r.label()));
    Table {
        header,
        rows: lines,
        numeric: true,
    }
}
