//! rigor's eyes on the machine: the application's process tree, its cgroup, who owns the
//! port, and what the host was doing. Linux only; reads /proc and /sys directly and knows
//! nothing of HTTP or the CLI.

mod cgroup;
mod cpu_counters;
mod cpu_time;
mod environment;
mod figures;
mod git;
mod interference;
mod net_path;
mod page_cache;
pub mod priority;
mod procfs;
mod sample;
mod sampler;
mod schedstat;
mod sockets;
mod tree;

pub use cgroup::{cgroup_layout, Cgroup, CgroupError, CgroupJoiner};
pub use cpu_counters::{cpu_counters, CpuCounters};
pub use cpu_time::ProcCpu;
pub use environment::{environment, Environment};
pub use figures::{pair_cpu, AppFigures, PairCpu};
pub use git::{git_info, GitInfo};
pub use interference::{
    interference, machine_reading, tree_cpu_ns, Interference, MachineReading, SpanSamples,
};
pub use net_path::{local_addresses, net_path, NetPath};
pub use page_cache::{drop_page_cache, DropCacheError};
pub use priority::{nice, set_priority_high, PriorityError, HIGH_PRIORITY_NICE};
pub use procfs::{allowed_cpus, clock_ticks_per_second, online_cpus};
pub use sample::{sample_tree, ProcSample};
pub use sampler::{Mark, MarkRecord, Sampler, Samples};
pub use schedstat::{SchedTimes, SchedWatch};
pub use sockets::{listener_owners, SocketOwner};
pub use tree::descendants;
