//! Our memory, not the kernel's: the app.* figures from the sampler, and the page-cache guard.

use crate::result::Warning;
use rigor_probe::AppFigures;
use std::collections::BTreeMap;

/// Puts every figure that was taken under its measurement id (absent ones stay absent).
pub fn record_figures(f: &AppFigures, m: &mut BTreeMap<String, f64>) {
    let pairs = [
        ("app.cpu", f.cpu_max_pct),
        ("app.cpu.avg", f.cpu_mean_pct),
        ("app.cores", f.cores_max_pct),
        ("app.rss", f.rss_max_mib),
        ("app.rss.lifetime", f.rss_lifetime_max_mib),
        ("app.private", f.private_max_mib),
        ("app.owned", f.owned_max_mib),
        ("app.cgroup.memory", f.cgroup_memory_max_mib),
        ("app.cgroup.cache", f.cgroup_cache_max_mib),
        ("app.threads.start", f.threads_start),
        ("app.threads.end", f.threads_end),
        ("app.threads.max", f.threads_max),
        ("app.ctx_switches.involuntary", f.nonvoluntary_ctxt_switches),
    ];
    for (id, v) in pairs {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            m.insert(id.to_string(), v);
        }
    }
}

/// Warns when cgroup memory exceeds the process tree's RSS by more than 25% and the page cache
/// explains the gap: `docker stats` would report the kernel's cache as the app's memory.
pub fn page_cache_guard(m: &BTreeMap<String, f64>, warnings: &mut Vec<Warning>) {
    let (Some(cg), Some(rss), Some(cache)) = (
        m.get("app.cgroup.memory"),
        m.get("app.rss"),
        m.get("app.cgroup.cache"),
    ) else {
        return;
    };
    let gap = cg - rss;
    if *cg > rss * 1.25 && *cache >= gap * 0.5 && gap > 8.0 {
        warnings.push(Warning::new(
            "page_cache",
            format!(
                "the cgroup holds {cache:.0} MiB of page cache, the process {rss:.0} MiB: cgroup memory \
                 ({cg:.0} MiB) is mostly the kernel's reclaimable cache, not the application's memory"
            ),
            "size the app by app.rss / app.private; cgroup totals (docker stats) include files it read",
        ));
    }
}
