//! Finding an application's whole process tree, so a server that forks workers (or a shell
//! wrapper around the real server) is measured as a whole.

use crate::procfs::{all_pids, Stat};
use std::collections::BTreeMap;
use std::path::Path;

/// The root and every live descendant of it, root first, then breadth-first.
///
/// Walks the parent links of /proc/*/stat (task/*/children is not compiled into every kernel).
/// Empty when the root no longer exists. A descendant whose parent exited is re-parented away
/// from the tree by the kernel and is no longer found: run the app in a cgroup to keep those.
pub fn descendants(root: i32) -> Vec<i32> {
    if root <= 0 || !Path::new(&format!("/proc/{root}")).exists() {
        return Vec::new();
    }
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for pid in all_pids() {
        if pid == root {
            continue;
        }
        if let Some(stat) = Stat::read(pid) {
            children.entry(stat.ppid()).or_default().push(pid);
        }
    }
    let mut out = vec![root];
    let mut next = 0;
    while next < out.len() {
        if let Some(kids) = children.remove(&out[next]) {
            out.extend(kids);
        }
        next += 1;
    }
    out
}
