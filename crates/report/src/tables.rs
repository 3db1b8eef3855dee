//! The measurement tables of one scenario (crank style): an application and a load table, plus
//! one for ids of neither, a column per row and a line per measurement; the line of how many
//! iterations each column stands on closes the first of them. Lines [`Shown`] leaves out (zero
//! everywhere, or in the pivot) are not drawn, nor on the terminal the secondary ones it folds.

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
        ids.retain(|id| !shown.hides(id, rows) && !shown.folds(id, rows));
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

/// The terminal's short table of one scenario's rows, titled `scenario`: a line per row and a
/// column per figure it shows (the key figures first, then a non-zero error count or a limited
/// figure), then the iterations each line stands on. A handful of figures read across a line
/// per variant take a few lines where a column per row took a line per measurement.
pub fn key_table(scenario: &str, rows: &[&Row], decl: &Declarations, shown: &Shown) -> Vec<Block> {
    let key = shown.table_key(rows);
    let mut ids: Vec<String> = ids_by_table(rows)
        .into_iter()
        .flat_map(|(_, ids)| ids)
        .filter(|id| !shown.hides(id, rows) && !shown.folds(id, rows))
        .collect();
    // The key figures in the key's order (the primary first), the others after them.
    ids.sort_by_key(|id| key.iter().position(|k| k == id).unwrap_or(key.len()));
    let with: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| ids.iter().any(|id| has(r, id)))
        .collect();
    let rows = if with.is_empty() { rows.to_vec() } else { with };
    if rows.is_empty() {
        return Vec::new();
    }
    let mut header = vec![scenario.to_string()];
    header.extend(ids.iter().map(|id| column_name(id, decl)));
    header.push("iterations".into());
    let lines = rows
        .iter()
        .map(|r| {
            let mut line = vec![Cell::plain(r.label())];
            line.extend(ids.iter().map(|id| Cell::plain(measurement_cell(r, id))));
            line.push(Cell::plain(iterations_cell(r)));
            line
        })
        .collect();
    vec![Block::Table(Table {
        header,
        rows: lines,
        numeric: true,
        droppable: Vec::new(),
    })]
}

/// A column's name in [`key_table`]: the short name people use (`p99`, `RSS`) with the
/// label's unit.
fn column_name(id: &str, decl: &Declarations) -> String {
    let short = super::headline::short_name(id, decl);
    let label = declarations::label(id, decl);
    match label.rfind(" (") {
        Some(i) if label.ends_with(')') && !short.ends_with(')') => {
            format!("{short}{}", &label[i..])
        }
        _ => short,
    }
}

/// How many measurement lines the terminal's tables of `rows` fold away ([`Shown::folds`]),
/// for the line that says where they are.
pub fn folded(rows: &[&Row], shown: &Shown) -> usize {
    ids_by_table(rows)
        .iter()
        .flat_map(|(_, ids)| ids)
        .filter(|id| !shown.hides(id, rows) && shown.folds(id, rows))
        .count()
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
        droppable: Vec::new(),
    }
}
