//! Failed builds and iterations of a scenario, listed under its tables with the error and where
//! the log is.

use super::{Block, Cell, Style};
use rigor_model::result::{Iteration, Row};

/// The `failed iterations` heading and list (a row whose build failed first, with the build's
/// error), or nothing when every iteration ran.
pub fn blocks(rows: &[&Row]) -> Vec<Block> {
    let failures: Vec<Cell> =
        rows.iter()
            .flat_map(|r| {
                let build = r.build_error.as_ref().map(|e| {
                    Cell::styled(format!("{} · build: {e}", r.label()), Style::Regression)
                });
                build.into_iter().chain(
                    r.iterations
                        .iter()
                        .filter(|it| it.error.is_some())
                        .map(move |it| Cell::styled(text(r, it), Style::Regression)),
                )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::sample_result;

    #[test]
    fn a_failed_build_comes_before_the_failed_iterations() {
        let mut r = sample_result();
        r.rows[0].build_error = Some("build of `app` failed (exit 1)".into());
        let rows: Vec<&Row> = r.rows.iter().collect();
        assert_eq!(
            blocks(&rows),
            vec![
                Block::Heading(3, "failed iterations".into()),
                Block::List(vec![
                    Cell::styled(
                        "connections=16 · build: build of `app` failed (exit 1)",
                        Style::Regression
                    ),
                    Cell::styled(
                        "connections=64 · iteration 4: app exited with code 1 before ready \
                         (log: logs/4.log)",
                        Style::Regression
                    ),
                ]),
            ]
        );
        r.rows[0].build_error = None;
        r.rows[1].iterations.pop();
        let rows: Vec<&Row> = r.rows.iter().collect();
        assert!(blocks(&rows).is_empty());
    }
}
