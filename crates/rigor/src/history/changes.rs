//! Where a series stepped: E-divisive means over the run medians, each change point kept only
//! when its permutation test is significant, told with the run (and commit) after the step.

use super::series::{Change, Point};
use rigor_stats::{e_divisive, ChangePointOptions};

/// The change points of a series of run medians. The seed is fixed, so the same history shows
/// the same change points every time it is asked.
pub fn find(points: &[Point]) -> Vec<Change> {
    let medians: Vec<f64> = points.iter().map(|p| p.median).collect();
    let options = ChangePointOptions {
        seed: 0x5eed,
        ..ChangePointOptions::default()
    };
    e_divisive(&medians, &options)
        .into_iter()
        .filter_map(|c| {
            let p = points.get(c.index)?;
            Some(Change {
                index: c.index,
                run: p.run,
                started_at: p.started_at.clone(),
                commit: p.commit.clone(),
                before: c.before_median,
                after: c.after_median,
                change_pct: c.change_pct,
                p_value: c.p_value,
            })
        })
        .collect()
}
