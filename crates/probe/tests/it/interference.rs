//! Foreign CPU against what the kernel accounts to each process: a busy "application" and a
//! busy thread of this process (standing for rigor) are not foreign; a hog the test spawns is,
//! and so is whatever else this shared machine runs, which the test reads from /proc too.

use crate::common;

use common::*;
use rigor_probe::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const SPAN: Duration = Duration::from_millis(1500);

/// utime + stime (ticks) and start time of every process but the excluded.
fn accounts(exclude: &[i32]) -> BTreeMap<i32, (u64, u64)> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if exclude.contains(&pid) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let f: Vec<u64> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .map(|v| v.parse::<i64>().unwrap_or(0) as u64)
            .collect();
        // f[0] is field 3 of proc(5): utime and stime are fields 14 and 15, starttime 22.
        out.insert(pid, (f[11] + f[12], f[19]));
    }
    out
}

/// Now in clock ticks since boot, the clock of /proc start times.
fn boot_ticks() -> u64 {
    let up = std::fs::read_to_string("/proc/uptime").unwrap();
    let secs: f64 = up.split_whitespace().next().unwrap().parse().unwrap();
    (secs * clock_ticks_per_second() as f64) as u64
}

/// Every other process's CPU over a span, polled so that processes that start or exit inside
/// it count too (all of a new one's CPU; an exiting one up to its last poll): the reference for
/// everything that is neither the app nor this process. It can only read low (a process that
/// lived less than a poll, the last poll's worth of one that exited).
struct Others {
    exclude: Vec<i32>,
    since_ticks: u64,
    /// (pid, start time) → (CPU when first seen or 0 when born inside the span, last seen).
    seen: BTreeMap<(i32, u64), (u64, u64)>,
}

impl Others {
    fn start(exclude: Vec<i32>) -> Others {
        let since_ticks = boot_ticks();
        let seen = accounts(&exclude)
            .into_iter()
            .map(|(pid, (cpu, st))| ((pid, st), (cpu, cpu)))
            .collect();
        Others {
            exclude,
            since_ticks,
            seen,
        }
    }

    fn poll(&mut self) {
        for (pid, (cpu, st)) in accounts(&self.exclude) {
            let born_inside = st >= self.since_ticks;
            let e = self
                .seen
                .entry((pid, st))
                .or_insert((if born_inside { 0 } else { cpu }, cpu));
            e.1 = cpu;
        }
    }

    /// Their CPU in % of the machine over `wall` seconds.
    fn pct(&self, wall: f64) -> f64 {
        let ticks: u64 = self.seen.values().map(|(a, b)| b.saturating_sub(*a)).sum();
        let hz = clock_ticks_per_second() as f64;
        ticks as f64 / hz / (wall * online_cpus() as f64) * 100.0
    }
}

/// One measured span with this process spinning a thread (rigor's own CPU) and `app` busy:
/// (foreign_pct, hog's share, the rest of the machine's share), shares from /proc.
fn measure(app: i32, hog: Option<i32>) -> (f64, f64, f64) {
    let me = std::process::id() as i32;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                std::hint::black_box(0u64);
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        let mut exclude = vec![me, app];
        exclude.extend(hog);
        // The reference's own span runs from the middle of its first reads to the middle of
        // its last: on a saturated machine a scan of /proc takes long enough to matter.
        let r0 = Instant::now();
        let hog_before = hog.map(tree_cpu_secs_from_stat);
        let mut others = Others::start(exclude);
        let r0 = r0 + r0.elapsed() / 2;
        let t0 = Instant::now();
        let before = machine_reading(tree_cpu_ns(app));
        let mut samples = SpanSamples::every(Duration::from_millis(100));
        samples.sample_now();
        while t0.elapsed() < SPAN {
            samples.sample();
            others.poll();
            std::thread::sleep(Duration::from_millis(10));
        }
        samples.sample_now();
        let after = machine_reading(tree_cpu_ns(app));
        let r1 = Instant::now();
        others.poll();
        let hog_secs = hog.map(tree_cpu_secs_from_stat);
        let wall = (r1 + r1.elapsed() / 2 - r0).as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        let i = interference(&before, &after, &samples);
        let hog_pct = match (hog_before, hog_secs) {
            (Some(a), Some(b)) => (b - a) / (wall * online_cpus() as f64) * 100.0,
            _ => 0.0,
        };
        let rest = others.pct(wall);
        eprintln!(
            "foreign {:?} hog {hog_pct:.1} rest {rest:.1} run_queue {:?} freq {:?} pressure {:?}",
            i.foreign_pct, i.run_queue, i.freq_mhz, i.cpu_pressure_pct
        );
        assert!(i.run_queue.is_some_and(|r| r >= 0.0), "{i:?}");
        if std::path::Path::new("/proc/pressure/cpu").exists() {
            let p = i.cpu_pressure_pct.expect("PSI is there");
            assert!((0.0..=100.0).contains(&p), "{p}");
        }
        (
            i.foreign_pct.expect("the app's tree is readable"),
            hog_pct,
            rest,
        )
    })
}

/// Foreign CPU matches the reference within `tol` (% of the machine): never below it (the
/// reference can only miss CPU); above it only on a span where something short-lived ran, so
/// a few spans are tried. With a hog, a span counts only where the hog got a share the
/// tolerance could not hide. `false` when every span that did not count was saturated by
/// other work (over half the machine, or the hog starved): then neither holds for sure.
fn matches_reference(app: i32, hog: Option<i32>, tol: f64) -> bool {
    let mut seen = Vec::new();
    for _ in 0..4 {
        let (foreign, hog_pct, rest) = measure(app, hog);
        let reference = hog_pct + rest;
        assert!(
            foreign >= reference - tol,
            "foreign {foreign:.1}% below the hog's {hog_pct:.1}% + the rest's {rest:.1}%"
        );
        let starved = hog.is_some() && hog_pct < 2.0 * tol;
        if foreign <= reference + tol && !starved {
            return true;
        }
        seen.push((foreign, reference, starved || rest > 50.0));
    }
    if seen.iter().all(|s| s.2) {
        return false;
    }
    panic!(
        "foreign CPU above the reference on every span (foreign, reference, saturated): {seen:?}"
    );
}

#[test]
fn foreign_cpu_is_the_hog_not_the_app_nor_rigor() {
    let _serial = CPU_HOG.lock().unwrap_or_else(|e| e.into_inner());
    let app = sh("while :; do :; done");
    // Without a hog, the busy app and this process's busy thread are not foreign: only the
    // rest of the machine is.
    let saturated = "other work saturated the machine: the reference misses its short-lived \
                     processes, or the hog never got 8% of it";
    if !matches_reference(app.pid(), None, 4.0) {
        return testkit::skip(saturated);
    }
    let hog = sh("while :; do :; done");
    if !matches_reference(app.pid(), Some(hog.pid()), 4.0) {
        testkit::skip(saturated);
    }
}

#[test]
fn foreign_cpu_is_unknown_when_the_app_cannot_be_read() {
    let before = machine_reading(None);
    std::thread::sleep(Duration::from_millis(50));
    let after = machine_reading(None);
    let i = interference(&before, &after, &SpanSamples::every(Duration::from_secs(1)));
    assert_eq!(i.foreign_pct, None);
    assert_eq!(i.run_queue, None, "no samples, no mean");
    assert_eq!(tree_cpu_ns(i32::MAX), None);
}
