//! Failed iterations of a scenario, listed under its tables with the error and where the log is.

use super::{Block, Cell, Style};
use crate::result::{Iteration, Row};

/// The `failed iterations` heading and list, or nothing when every iteration ran.
pub fn blocks(rows: &[&Row]) -> Vec<Block> {
    let failures: Vec<Cell> = rows
        .iter()
        .flat_map(|r| {
            r.iterations
                .iter()
                .filter(|it| it.error.is_some())
                .map(move |it| Cell::styled(text(r, it), Style::Regression))
        })
        .collect();
    if failures.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Heading(3, "failed iterations".into()),
        Block::List(failures),
    ]
}

/// `connections=64 · iteration 4: the error (log: logs/4.log)`
fn text(row: &Row, it: &Iteration) -> String {
    let mut s = format!(
        "{} · iteration {}: {}",
        row.label(),
        it.number(),
        it.error.as_deref().unwrap_or("")
    );
    if let Some(log) = &it.log {
        s.push_str(&format!(" (log: {log})"));
    }
    s
}
