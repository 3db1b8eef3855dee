//! cgroup creation, accounting and clean-up against the real kernel.

use crate::common;

use common::*;
use rigor_probe::*;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;
use testkit::{cold_file, is_root, require_root, skip};

/// A fresh cgroup for a root-only test; `None`, after a counted skip, where the kernel gives
/// none even to root.
fn make() -> Option<Cgroup> {
    require_root();
    match Cgroup::create_unique() {
        Ok(cg) => Some(cg),
        Err(why) => {
            eprintln!("{why}");
            skip("needs a cgroup");
            None
        }
    }
}

/// A fresh cgroup that counts CPU time; `None`, after a counted skip, where it has no counter.
fn make_counting_cpu() -> Option<Cgroup> {
    let cg = make()?;
    if cg.cpu_usage_ns().is_some() {
        return Some(cg);
    }
    eprintln!("{} has no CPU counter", cg.describe());
    let _ = cg.remove();
    skip("needs a cgroup CPU counter");
    None
}

#[test]
#[ignore = "needs root"]
fn page_cache_of_a_read_file_is_charged_and_kill_all_cleans_up() {
    let Some(cg) = make() else { return };
    eprintln!("{}", cg.describe());
    let dir = TempDir::new("cgroup-cache");
    let file = dir.0.join("data");
    cold_file(&file, 48);

    let joiner = cg.joiner().unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(format!(
        "cat {} > /dev/null; sleep 30 & sleep 30 & echo read; wait",
        file.display()
    ));
    // SAFETY: join_self only calls write(2) on already-open descriptors.
    unsafe { cmd.pre_exec(move || joiner.join_self()) };
    let mut p = spawn(&mut cmd);
    assert_eq!(p.wait_line().trim(), "read");
    let root = p.pid();

    let pids = wait_for(Duration::from_secs(5), || {
        let pids = cg.pids();
        (pids.len() >= 3).then_some(pids)
    })
    .expect("shell and two sleeps in the cgroup");
    assert!(pids.contains(&root));

    let cache = cg.page_cache_bytes().unwrap();
    let memory = cg.memory_bytes().unwrap();
    let anon = cg.anon_bytes().unwrap();
    eprintln!("memory {memory} cache {cache} anon {anon}");
    assert!(
        cache >= 40 << 20,
        "page cache {cache} should hold the 48 MiB file"
    );
    assert!(memory >= cache);
    assert!(cg.peak_memory_bytes().unwrap() >= memory);

    let s = sample_tree(root, Some(&cg)).unwrap();
    assert_eq!(s.cgroup_memory.map(|m| m >= 40 << 20), Some(true));
    assert!(s.cgroup_cache.is_some() && s.cgroup_anon.is_some());
    // Page cache is the kernel's memory, not the processes'.
    assert!(s.rss_bytes < 20 << 20);

    cg.kill_all();
    assert!(cg.pids().is_empty());
    p.child.wait().unwrap();
    let dirs: Vec<_> = cg
        .procs_path()
        .iter()
        .map(|p| p.parent().unwrap().to_path_buf())
        .collect();
    cg.remove().unwrap();
    for d in dirs {
        assert!(!d.exists(), "{} left behind", d.display());
    }
    for pid in pids {
        let alive =
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
        assert!(!alive, "{pid} survived kill_all");
    }
}

#[test]
#[ignore = "needs root"]
fn add_pid_moves_a_running_process_and_cpu_is_accounted() {
    let Some(cg) = make() else { return };
    let p = python("while True: pass");
    cg.add_pid(p.pid()).unwrap();
    assert_eq!(cg.pids(), vec![p.pid()]);
    let before = cg.cpu_usage_ns();
    std::thread::sleep(Duration::from_millis(300));
    match (before, cg.cpu_usage_ns()) {
        (Some(a), Some(b)) => assert!(b > a, "cgroup cpu usage should grow: {a} -> {b}"),
        _ => skip("needs a cgroup CPU counter"),
    }
    let sampler = Sampler::start(p.pid(), Some(cg.clone()), Duration::from_millis(100)).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let f = sampler.stop().figures();
    assert!(f.cgroup_memory_max_mib.unwrap() > 0.0);
    assert!(f.cgroup_cache_max_mib.is_some());
    assert!(f.cgroup_anon_mib.is_some());
    cg.kill_all();
    drop(p);
    cg.remove().unwrap();
}

#[test]
#[ignore = "needs root"]
fn a_process_that_left_the_tree_is_still_counted_through_the_cgroup() {
    let Some(cg) = make() else { return };
    let root = spawn(Command::new("sleep").arg("30"));
    // A process outside root's tree, but in the app's cgroup (like a daemonised worker).
    let mut stray = python(
        "b=bytearray(32<<20)\nfor i in range(0,len(b),4096): b[i]=1\nprint('ready',flush=True)\nimport time; time.sleep(30)",
    );
    stray.wait_line();
    cg.add_pid(root.pid()).unwrap();
    cg.add_pid(stray.pid()).unwrap();
    let without = sample_tree(root.pid(), None).unwrap();
    let with = sample_tree(root.pid(), Some(&cg)).unwrap();
    assert_eq!(without.pids, 1);
    assert_eq!(with.pids, 2);
    assert!(with.rss_bytes >= without.rss_bytes + (32 << 20));
    cg.kill_all();
    drop((root, stray));
    cg.remove().unwrap();
}

#[test]
fn names_are_validated_and_unique() {
    assert!(Cgroup::create("a/b").is_err());
    assert!(Cgroup::create("").is_err());
    if !is_root() {
        // Not permitted: the error explains why, for the report.
        let why = Cgroup::create_unique().unwrap_err().to_string();
        eprintln!("{why}");
        assert!(why.starts_with("no cgroup could be made: "), "{why}");
    }
    assert_ne!(Cgroup::unique_name(), Cgroup::unique_name());
    assert!(Cgroup::unique_name().starts_with(&format!("rigor-{}-", std::process::id())));
}

#[test]
#[ignore = "needs root"]
fn the_cgroup_counter_counts_children_shorter_than_a_sample() {
    let Some(cg) = make_counting_cpu() else {
        return;
    };
    let _hog = CPU_HOG.lock().unwrap_or_else(|e| e.into_inner());
    let (measured, truth) = measure_short_lived_children(Some(cg.clone()));
    eprintln!("window CPU {measured:.3} s, kernel's count for the shell {truth:.3} s");
    assert!(truth > 0.2, "the children burned only {truth} s");
    // As in the tree test: the reference has clock-tick resolution.
    assert!(
        (measured - truth).abs() <= 0.08 + 0.05 * truth,
        "window CPU {measured:.3} s vs kernel {truth:.3} s"
    );
    cg.kill_all();
    cg.remove().unwrap();
}

#[test]
#[ignore = "needs root"]
fn the_cgroup_counter_counts_orphans_the_tree_cannot_see() {
    let Some(cg) = make_counting_cpu() else {
        return;
    };
    let _hog = CPU_HOG.lock().unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("orphans");
    let ledger = dir.0.join("ns");
    // Each busy child is orphaned at once (its parent subshell exits), so it leaves the tree;
    // before exiting it appends its own runtime in ns (the shell's own schedstat) to a ledger.
    let script = format!(
        "sleep 0.4; k=0; while [ $k -lt 16 ]; do \
           (sh -c 'i=0; while [ $i -lt 12000 ]; do i=$((i+1)); done; \
                   read ns rest < /proc/self/schedstat; echo $ns >> {ledger}' &); \
           sleep 0.05; k=$((k+1)); \
         done; sleep 0.5; echo done; exec sleep 30",
        ledger = ledger.display()
    );
    let joiner = cg.joiner().unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    // SAFETY: join_self only calls write(2) on already-open descriptors.
    unsafe { cmd.pre_exec(move || joiner.join_self()) };
    let mut p = spawn(&mut cmd);
    let pid = p.pid();
    let with_cgroup = Sampler::start(pid, Some(cg.clone()), Duration::from_millis(250)).unwrap();
    let tree_only = Sampler::start(pid, None, Duration::from_millis(250)).unwrap();
    with_cgroup.mark(Mark::WindowStart);
    tree_only.mark(Mark::WindowStart);
    let before = tree_cpu_secs_from_stat(pid);
    assert_eq!(p.wait_line().trim(), "done");
    with_cgroup.mark(Mark::WindowEnd);
    tree_only.mark(Mark::WindowEnd);
    let shell = tree_cpu_secs_from_stat(pid) - before;
    let ledger: Vec<f64> = std::fs::read_to_string(&ledger)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse::<f64>().unwrap() / 1e9)
        .collect();
    assert_eq!(ledger.len(), 16, "every orphan wrote its runtime");
    let truth = shell + ledger.iter().sum::<f64>();
    let (counted, tree) = (
        window_cpu_secs(&with_cgroup.stop()),
        window_cpu_secs(&tree_only.stop()),
    );
    eprintln!(
        "cgroup {counted:.3} s, tree {tree:.3} s; truth {truth:.3} s (orphans {:.3} s)",
        truth - shell
    );
    // The orphans' own runtimes are exact but end before their exit (a few ms each of
    // teardown the cgroup does count); the shell's part has tick resolution.
    assert!(
        (counted - truth).abs() <= 0.08 + 0.05 * truth,
        "cgroup window CPU {counted:.3} s vs {truth:.3} s"
    );
    // The condition is real: the tree alone does not see them.
    assert!(tree < counted - 0.5 * (truth - shell), "tree {tree:.3} s");
    cg.kill_all();
    cg.remove().unwrap();
}
