//! Statistics for rigor: numbers come with their noise.
//!
//! Everything here is a pure function of its inputs (no I/O, no global state, no randomness
//! but what a caller-given seed drives), so a saved result can always be re-analysed to the
//! same verdict.
//! The methods are distribution-free on purpose: benchmark samples are small, skewed
//! and full of outliers, and a normal-theory interval would promise more than it has.

mod change_points;
mod cuped;
mod hodges_lehmann;
mod mann_whitney;
mod median_ci;
mod normal;
mod outliers;
mod paired;
mod power;
mod sequential;
mod settle;
mod signed_rank;
mod spread;
mod summary;
mod tied_exact;
mod verdict;

#[cfg(test)]
mod change_points_tests;
#[cfg(test)]
mod honesty_tests;
#[cfg(test)]
mod paired_honesty_tests;
#[cfg(test)]
mod paired_tests;
#[cfg(test)]
mod test_support;

pub use change_points::{e_divisive, ChangePoint, ChangePointOptions};
pub use cuped::{adjust, Adjustment};
pub use hodges_lehmann::{compare, Change};
pub use mann_whitney::mann_whitney_p;
pub use median_ci::median_ci;
pub use outliers::outliers;
pub use paired::{can_ever_be_significant_paired, compare_paired};
pub use power::{detectable_change_pct, pairs_needed};
pub use sequential::look_confidence;
pub use settle::iterations_to_settle;
pub use spread::{log_ratio_spread, log_spread};
pub use summary::{summarize, Summary};
pub use verdict::{can_ever_be_significant, verdict, Direction, Verdict};
