//! CPU profiles of an application under load: `perf record` sampling its processes (or its
//! cgroup) during the measured window, the samples folded into stacks (`inferno`), merged
//! over iterations, shared out per function, and drawn as flame graphs and differential
//! flame graphs. Knows nothing of HTTP, configs or the CLI.

mod availability;
mod error;
mod fold;
mod folded;
mod perf_cgroup;
mod recorder;
mod shares;
mod svg;

pub use availability::{check, Unavailable};
pub use error::ProfileError;
pub use fold::fold_perf_data;
pub use folded::Folded;
pub use perf_cgroup::PerfCgroup;
pub use recorder::{CallGraph, Recorder, Settings, Target};
pub use shares::{profile_diff, FunctionShare, DIFF_LIMIT};
pub use svg::{diff_flame_graph, flame_graph};
