//! CPU profiles in the report: per compared pair the functions whose share of the samples
//! grew most (the terminal shows five), and where the flame graphs are.

use super::{Block, Cell, Table};
use rigor_model::result::{ProfileComparison, RunResult};

/// How many functions the report lists per compared pair; the JSON keeps more.
pub const SHOWN_FUNCTIONS: usize = 5;

/// The section: a table per compared pair with profiles, then where the flame graphs are.
pub fn blocks(result: &RunResult) -> Vec<Block> {
    let graphs: Vec<&str> = result
        .rows
        .iter()
        .filter_map(|r| r.profile.as_ref()?.flame_graph.as_deref())
        .collect();
    blocks_of(&result.profiles, &graphs)
}

/// [`blocks`] of compared pairs and flame graphs however they were found (`rigor compare`
/// diffs saved results' profiles again).
pub fn blocks_of(profiles: &[ProfileComparison], graphs: &[&str]) -> Vec<Block> {
    if profiles.is_empty() && graphs.is_empty() {
        return Vec::new();
    }
    let mut out = vec![Block::Heading(2, "CPU profile".into())];
    out.push(Block::Text(
        "share of the CPU samples whose stack holds the function (inclusive), each side in % \
         of its own samples; the largest increase first"
            .into(),
    ));
    for p in profiles {
        out.push(Block::Table(table(p)));
    }
    let mut files: Vec<Cell> = profiles
        .iter()
        .filter_map(|p| {
            Some(Cell::plain(format!(
                "{} vs {}: {}",
                p.candidate,
                p.baseline,
                p.diff_flame_graph.as_deref()?
            )))
        })
        .collect();
    files.extend(
        graphs
            .iter()
            .map(|g| Cell::plain(format!("flame graph: {g}"))),
    );
    if !files.is_empty() {
        out.push(Block::List(files));
    }
    out
}

/// The top functions of one pair.
fn table(p: &ProfileComparison) -> Table {
    let detail: Vec<String> = p.row.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let title = match detail.is_empty() {
        true => format!("{} vs {}", p.candidate, p.baseline),
        false => format!("{} vs {} ({})", p.candidate, p.baseline, detail.join(" ")),
    };
    let rows = p
        .profile_diff
        .iter()
        .take(SHOWN_FUNCTIONS)
        .map(|f| {
            vec![
                Cell::plain(f.function.clone()),
                Cell::plain(format!("{:.1}%", f.baseline_pct)),
                Cell::plain(format!("{:.1}%", f.candidate_pct)),
                Cell::plain(format!("{:+.1} pts", f.candidate_pct - f.baseline_pct)),
            ]
        })
        .collect();
    Table {
        header: vec![
            title,
            format!("{} ({} samples)", p.baseline, p.baseline_samples),
            format!("{} ({} samples)", p.candidate, p.candidate_samples),
            "change".into(),
        ],
        rows,
        numeric: true,
        droppable: Vec::new(),
    }
}

/// A flame graph the HTML report shows: its title and its SVG text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlameGraph {
    pub title: String,
    pub svg: String,
}
