//! A real neighbour during one iteration: the test itself spins CPU-bound threads (a process
//! outside the application's tree and cgroup, and not rigor) while the testbed's 2nd iteration
//! runs, and checks that rigor excluded that iteration for interference, re-ran its slot and
//! said so in the report.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The first file called `name` under `dir` (the run's folder has a timestamped name).
fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
        if p.is_dir() {
            if let Some(found) = find(&p, name) {
                return Some(found);
            }
        }
    }
    None
}

/// CPU the test process has used so far (all its threads), in seconds, from /proc.
fn own_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the comm.
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Spins `threads` busy threads until `stop` is set.
fn hog(threads: usize, stop: &Arc<AtomicBool>) -> Vec<std::thread::JoinHandle<()>> {
    (0..threads)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                // As root the hog outranks the application, as a greedy neighbour would; the
                // call fails harmlessly otherwise.
                unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as _, -10) };
                let mut x: u64 = 1;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..10_000 {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                }
            })
        })
        .collect()
}

/// What the hog did: the share of the machine's CPU it took while it ran, in %.
struct Hogged {
    share_pct: f64,
}

/// Waits for the 2nd iteration's log, hogs the CPUs until the next iteration's log appears
/// (its re-run or the 3rd). The 2nd, because the baseline is then one or two iterations, and
/// the rule before three is plain: above 15% and 15 points above them; later, this shared
/// machine's own spread can hide the hog.
fn hog_the_second_iteration(dir: &Path, child: &mut std::process::Child) -> Option<Hogged> {
    let out = dir.join("out");
    let deadline = Instant::now() + Duration::from_secs(120);
    while find(&out, "row1-iter2.log").is_none() {
        if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (cpu0, t0) = (own_cpu_seconds(), Instant::now());
    let handles = hog(2 * cores(), &stop);
    while find(&out, "row1-iter2-rerun1.log").is_none() && find(&out, "row1-iter3.log").is_none() {
        if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().unwrap();
    }
    let cpu = own_cpu_seconds() - cpu0;
    let wall = t0.elapsed().as_secs_f64();
    Some(Hogged {
        share_pct: 100.0 * cpu / (wall * cores() as f64),
    })
}

/// `index sequence excluded interference%` per iteration, for failure messages.
fn table(its: &[Value]) -> String {
    its.iter()
        .map(|it| {
            format!(
                "{} {} {} {:.1}\n",
                it["index"], it["sequence"], it["excluded"], it["machine"]["interference_pct"]
            )
        })
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (v[(n - 1) / 2] + v[n / 2]) / 2.0
}

/// docs/noise.md's rule: whether `x` is far above the run's `earlier` figures.
fn far_above(x: f64, earlier: &[f64]) -> bool {
    if earlier.is_empty() {
        return x > 15.0;
    }
    let base = median(earlier);
    if earlier.len() < 3 {
        return x > 15.0 && x > base + 15.0;
    }
    let deviations: Vec<f64> = earlier.iter().map(|v| (v - base).abs()).collect();
    x > base + f64::max(5.0, 3.0 * 1.4826 * median(&deviations))
}

fn excluded(it: &Value) -> &Value {
    &it["excluded"]
}

#[test]
fn an_iteration_a_neighbour_hogged_is_excluded_and_re_run_in_its_slot() {
    let _one = crate::common::one_at_a_time();
    let dir = temp_dir("noisy-rerun");
    let port = free_port();
    std::fs::write(dir.join("rigor.toml"), config(port, "", "/json", "")).unwrap();
    let mut child = rigor_command(
        &dir,
        &[
            "run",
            "--json",
            "result.json",
            "--out-dir",
            "out",
            "-i",
            "6",
            "--markdown",
            "report.md",
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("start rigor");
    let hogged = hog_the_second_iteration(&dir, &mut child);
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let hogged = hogged.unwrap_or_else(|| panic!("the 2nd iteration never started:\n{t}"));
    let json = result(&dir);
    let its = iterations(&json);
    if its
        .iter()
        .all(|it| it["machine"]["interference_pct"].as_f64().is_none())
    {
        skip("this machine or build records no per-iteration interference figure");
        return;
    }
    // The hogged slot: its first attempt excluded for interference, its last one kept, both
    // with index 1, in the order they ran.
    let slot: Vec<&Value> = its.iter().filter(|it| it["index"] == 1).collect();
    let first = slot[0];
    let figure = |it: &Value| it["machine"]["interference_pct"].as_f64();
    let earlier: Vec<f64> = its
        .iter()
        .filter(|it| it["sequence"].as_u64() < first["sequence"].as_u64())
        .filter_map(figure)
        .collect();
    let hogged_figure = figure(first).expect("the hogged iteration's interference");
    if !far_above(hogged_figure, &earlier) {
        // Then rigor rightly kept it: the machine's own noise was as large as the hog.
        assert_eq!(excluded(first), false, "{}", table(its));
        skip(&format!(
            "the machine's own interference ({earlier:?}) hid the hog's ({hogged_figure:.1}%)"
        ));
        return;
    }
    assert!(
        slot.len() >= 2,
        "no re-run of iteration 2 (hog {:.1}%):\n{}\n{t}",
        hogged.share_pct,
        table(its)
    );
    assert_eq!(excluded(first), "interference", "{first}\n{t}");
    assert_eq!(excluded(slot[slot.len() - 1]), false, "{t}");
    let sequences: Vec<u64> = slot
        .iter()
        .map(|i| i["sequence"].as_u64().unwrap())
        .collect();
    assert!(sequences.windows(2).all(|w| w[0] < w[1]), "{sequences:?}");
    let message = message(&first["warnings"], "contaminated");
    assert!(message.ends_with("excluded and re-run"), "{message}");
    // The hogged iteration's figure names the other processes, and they took at least about
    // what the test's own threads took of the machine (other work on it only adds).
    let foreign = first["machine"]["foreign_pct"]
        .as_f64()
        .expect("foreign_pct");
    assert!(
        foreign >= 0.6 * hogged.share_pct,
        "foreign {foreign}% but the test's threads took {:.1}%",
        hogged.share_pct
    );
    // On a machine already busy the interference figure is near its cap, and the hog is told
    // by the run-queue delay it caused instead; otherwise by the other processes' share.
    assert!(
        message.contains(&format!("other processes {foreign:.1}%"))
            || message.contains("run-queue delay"),
        "{message}"
    );
    // Every slot ends with a kept iteration (the last try is kept once the budget, 3, is spent).
    for index in 0..6 {
        let last = its.iter().rev().find(|it| it["index"] == index).unwrap();
        assert_eq!(excluded(last), false, "iteration {}:\n{t}", index + 1);
    }
    let replaced = its
        .iter()
        .filter(|it| excluded(it) == "interference")
        .count();
    assert_eq!(its.len(), 6 + replaced);
    // The report counts them.
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let said = format!(
        "replaced: {replaced} iteration{}",
        if replaced == 1 { "" } else { "s" }
    );
    assert!(report.contains(&said), "{said} not in\n{report}");
    assert!(t.contains(&said), "{said} not in\n{t}");
    let _ = std::fs::remove_dir_all(&dir);
}
