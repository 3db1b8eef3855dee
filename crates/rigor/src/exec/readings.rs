//! Readings around an iteration's start: the page cache dropped before the app starts, and the
//! app's memory watched across a readiness probe that asks for another URL than the load.

use super::app::AppProcess;
use super::iteration::IterationContext;
use crate::config::Ready;
use crate::guards;
use crate::result::{Iteration, Warning, WarningKind};
use std::time::Duration;

/// Waits until the app is ready. An HTTP probe on another URL than the load's is watched: the
/// tree's memory is read once the app accepts connections (before any HTTP request) and again
/// once the probe passed; material growth in between is a warning naming the probe.
pub fn ready_watching_memory(
    ctx: &IterationContext,
    load_url: &str,
    it: &mut Iteration,
    app: &mut AppProcess,
) -> Result<Duration, String> {
    let (ready, timeout) = (&ctx.row.app.ready, ctx.row.app.ready_timeout);
    let watched = match ready {
        Ready::Http(url) if guards::probes_another_url(url, load_url) => {
            rigor_load::resolve_url(url).ok().map(|addr| (url, addr))
        }
        _ => None,
    };
    let Some((url, addr)) = watched else {
        return app.wait_ready(ready, timeout, &mut it.outside_window);
    };
    app.wait_ready(
        &Ready::Tcp(addr.to_string()),
        timeout,
        &mut it.outside_window,
    )?;
    let before = tree_rss_mib(app.pid);
    let took = app.wait_ready(ready, timeout, &mut it.outside_window)?;
    if let (Some(before), Some(after)) = (before, tree_rss_mib(app.pid)) {
        guards::readiness_memory_guard(url, load_url, before, after, &mut it.warnings);
    }
    Ok(took)
}

/// The tree's RSS now, in MiB.
fn tree_rss_mib(pid: i32) -> Option<f64> {
    rigor_probe::sample_tree(pid, None).map(|s| s.rss_bytes as f64 / (1024.0 * 1024.0))
}

/// Drops the page cache before the app starts and records whether it could.
pub fn drop_caches(it: &mut Iteration) {
    match rigor_probe::drop_page_cache() {
        Ok(()) => it.caches_dropped = Some(true),
        Err(why) => {
            it.caches_dropped = Some(false);
            it.warnings.push(Warning::of(
                WarningKind::DropCaches,
                format!("--drop-caches: the page cache was not dropped: {why}"),
            ));
        }
    }
}
