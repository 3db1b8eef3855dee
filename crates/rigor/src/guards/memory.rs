//! Our memory, not the kernel's: the page-cache guards and the readiness probe's growth.

use crate::measurements::ids;
use crate::result::{Warning, WarningKind};
use std::collections::BTreeMap;

/// Warns when cgroup memory exceeds the process tree's RSS by more than 25% and the page cache
/// explains the gap: `docker stats` would report the kernel's cache as the app's memory.
pub fn page_cache_guard(m: &BTreeMap<String, f64>, warnings: &mut Vec<Warning>) {
    let (Some(cg), Some(rss), Some(cache)) = (
        m.get(ids::APP_CGROUP_MEMORY),
        m.get(ids::APP_RSS),
        m.get(ids::APP_CGROUP_CACHE),
    ) else {
        return;
    };
    let gap = cg - rss;
    if *cg > rss * 1.25 && *cache >= gap * 0.5 && gap > 8.0 {
        // The share as measured: "mostly" only where the cache is more than half of it.
        let share = cache / cg * 100.0;
        let how = if share > 50.0 { "mostly " } else { "" };
        warnings.push(Warning::of(
            WarningKind::PageCache,
            format!(
                "the cgroup holds {cache:.0} MiB of page cache, the process {rss:.0} MiB: cgroup \
                 memory ({cg:.0} MiB) is {how}the kernel's reclaimable cache ({share:.0}% of it), \
                 not the application's memory"
            ),
        ));
    }
}

/// The path (and query) of a URL, `/` when it has none: what tells two probes apart.
fn url_path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// Whether a readiness probe on `ready_url` asks for something else than the load on `load_url`.
pub fn probes_another_url(ready_url: &str, load_url: &str) -> bool {
    url_path(ready_url) != url_path(load_url)
}

/// Growth (MiB) that counts as material: a pre-warmed cache or heap, not allocator noise.
const MATERIAL_GROWTH_MIB: f64 = 16.0;

/// Warns when the readiness probe, on another URL than the load's, grew the application's
/// memory materially (`before`/`after` MiB around it): the load then runs on a heap or cache
/// its own URL never built, and app.rss reports the probe's memory as the load's.
pub fn readiness_memory_guard(
    ready_url: &str,
    load_url: &str,
    before_mib: f64,
    after_mib: f64,
    warnings: &mut Vec<Warning>,
) {
    let load = url_path(load_url);
    let growth = after_mib - before_mib;
    if !probes_another_url(ready_url, load_url)
        || growth < MATERIAL_GROWTH_MIB
        || growth < 0.25 * before_mib
    {
        return;
    }
    warnings.push(Warning::of(
        WarningKind::ReadinessMemory,
        format!(
            "the readiness probe {ready_url} grew the application's memory by {growth:.0} MiB \
             ({before_mib:.0} → {after_mib:.0} MiB) before the load on {load}: the load ran on \
             memory its own URL did not build, and app.rss counts it"
        ),
    ));
}

/// How far back, before the reading that preceded the first answer, the tree's own growth is
/// looked at.
pub const STARTING_LOOKBACK: std::time::Duration = std::time::Duration::from_millis(250);

/// Whether the tree was still growing on its own when the probe was first answered: over the
/// readings of the last [`STARTING_LOOKBACK`] before the answer (`readings` oldest first, each
/// `(age at the last reading, MiB)`), it grew as much as the probe's warning would call
/// material. A server that is still taking its start-up memory as it begins to answer (behind a
/// front that held the probe's connection until it listened) cannot have its growth put on the
/// probe.
pub fn still_starting(readings: &[(std::time::Duration, f64)]) -> bool {
    let Some(&(_, last)) = readings.last() else {
        return false;
    };
    readings
        .iter()
        .filter(|(age, _)| *age <= STARTING_LOOKBACK)
        .any(|&(_, mib)| {
            let growth = last - mib;
            growth >= MATERIAL_GROWTH_MIB && growth >= 0.25 * mib
        })
}

/// Warns when the cgroup's page cache differs materially between iterations of a row
/// (`caches[i]` = app.cgroup.cache of iteration i, MiB): files an earlier iteration brought
/// into the cache stay there and are charged to nobody in the next, so app.cgroup.memory
/// differs by iteration for a reason that is not the app.
pub fn carried_page_cache_guard(caches: &[(usize, f64)], warnings: &mut Vec<Warning>) {
    let (Some(max), Some(min)) = (
        caches.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
        caches.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
    ) else {
        return;
    };
    if max.1 - min.1 < MATERIAL_GROWTH_MIB || min.1 > 0.5 * max.1 {
        return;
    }
    warnings.push(Warning::of(
        WarningKind::PageCacheCarried,
        format!(
            "the application's page cache differs by iteration ({:.1} MiB in iteration {}, \
             {:.1} MiB in iteration {}): files cached by an earlier iteration are not charged \
             to the next, so app.cgroup.memory differs by iteration",
            max.1,
            max.0 + 1,
            min.1,
            min.0 + 1
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_growing_just_before_the_answer_is_still_starting() {
        use std::time::Duration as D;
        let ms = D::from_millis;
        // 10 → 64 MiB in the last 100 ms: a start-up, not yet done.
        assert!(still_starting(&[
            (ms(400), 10.0),
            (ms(100), 10.0),
            (ms(0), 64.0)
        ]));
        // A few MiB as the server starts: the tree was settled.
        assert!(!still_starting(&[
            (ms(200), 10.0),
            (ms(100), 13.0),
            (ms(0), 14.0)
        ]));
        // Growth older than the look-back does not count.
        assert!(!still_starting(&[
            (ms(900), 10.0),
            (ms(200), 64.0),
            (ms(0), 65.0)
        ]));
        assert!(!still_starting(&[]));
        assert!(!still_starting(&[(ms(0), 64.0)]));
    }

    #[test]
    fn the_page_cache_warning_says_mostly_only_for_more_than_half() {
        let m = |cg: f64, rss: f64, cache: f64| {
            BTreeMap::from([
                (ids::APP_CGROUP_MEMORY.to_string(), cg),
                (ids::APP_RSS.to_string(), rss),
                (ids::APP_CGROUP_CACHE.to_string(), cache),
            ])
        };
        let mut w = Vec::new();
        page_cache_guard(&m(193.0, 100.0, 80.0), &mut w);
        page_cache_guard(&m(193.0, 40.0, 150.0), &mut w);
        assert_eq!(w.len(), 2);
        assert!(
            w[0].message
                .contains("(193 MiB) is the kernel's reclaimable cache (41% of it)"),
            "{}",
            w[0].message
        );
        assert!(
            w[1].message.contains("is mostly the kernel's"),
            "{}",
            w[1].message
        );
    }

    #[test]
    fn url_paths() {
        assert_eq!(url_path("http://127.0.0.1:8080/big?x=1"), "/big?x=1");
        assert_eq!(url_path("http://[::1]:80"), "/");
        assert_eq!(url_path("/small"), "/small");
    }

    #[test]
    fn readiness_growth_is_named_only_when_material_and_on_another_url() {
        let mut w = Vec::new();
        let (big, small) = ("http://h:1/big", "http://h:1/small");
        readiness_memory_guard(big, small, 10.0, 20.0, &mut w); // below 16 MiB
        readiness_memory_guard(big, small, 400.0, 450.0, &mut w); // below 25%
        readiness_memory_guard(small, small, 10.0, 180.0, &mut w); // the load's own URL
        assert!(w.is_empty());
        readiness_memory_guard(big, small, 10.0, 180.0, &mut w);
        assert_eq!(
            w,
            vec![Warning::of(
                WarningKind::ReadinessMemory,
                "the readiness probe http://h:1/big grew the application's memory by 170 MiB \
                 (10 → 180 MiB) before the load on /small: the load ran on memory its own URL \
                 did not build, and app.rss counts it"
            )]
        );
    }

    #[test]
    fn carried_cache_needs_a_material_spread() {
        let mut w = Vec::new();
        carried_page_cache_guard(&[(0, 64.0), (1, 60.0)], &mut w);
        carried_page_cache_guard(&[(0, 10.0), (1, 0.0)], &mut w);
        carried_page_cache_guard(&[], &mut w);
        assert!(w.is_empty());
        carried_page_cache_guard(&[(0, 64.0), (1, 0.2), (2, 0.3)], &mut w);
        assert_eq!(
            w,
            vec![Warning::of(
                WarningKind::PageCacheCarried,
                "the application's page cache differs by iteration (64.0 MiB in iteration 1, \
                 0.2 MiB in iteration 2): files cached by an earlier iteration are not charged \
                 to the next, so app.cgroup.memory differs by iteration"
            )]
        );
    }
}
