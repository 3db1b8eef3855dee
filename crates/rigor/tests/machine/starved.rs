//! CPU starvation the machine's busy share cannot show: the test pins CPU-bound threads of its
//! own (outside the application's tree and rigor) to the CPU the application and the load are
//! pinned to, and checks what rigor made of the waits the scheduler accounted
//! (/proc/PID/task/TID/schedstat), against this test's own reading of the same accounts.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

/// Held by each test: one test's hogs would starve the other's run.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    crate::common::one_at_a_time()
}

/// CPU-bound threads pinned to `cpu` at `nice` (a negative nice needs root; elsewhere it stays
/// 0), spinning until dropped.
struct Hogs {
    stop: Arc<AtomicBool>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Hogs {
    fn start(threads: usize, cpu: usize, nice: i32) -> Hogs {
        let stop = Arc::new(AtomicBool::new(false));
        let handles = (0..threads)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    unsafe {
                        let mut set: libc::cpu_set_t = std::mem::zeroed();
                        libc::CPU_SET(cpu, &mut set);
                        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set);
                        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as _, nice);
                    }
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
            .collect();
        Hogs { stop, handles }
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// The application on CPU `app` and the load on CPU `load`.
fn pinned_config(port: u16, app: usize, load: usize) -> String {
    format!(
        "{}\n[profiles.pinned]\napplication = {{ cpus = \"{app}\" }}\nload = {{ cpus = \"{load}\" }}\n",
        config(port, "", "/plaintext", "")
    )
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn figure(it: &Value, key: &str) -> Option<f64> {
    it["machine"][key].as_f64()
}

/// Whether the iteration logs of `dir` include `name`.
fn has_log(dir: &Path, name: &str) -> bool {
    let Ok(runs) = std::fs::read_dir(dir.join("out")) else {
        return false;
    };
    runs.flatten().any(|r| r.path().join(name).exists())
}

#[test]
fn a_starved_iteration_on_a_fully_busy_machine_is_excluded_by_its_run_queue_delay() {
    let _serial = one_at_a_time();
    let dir = temp_dir("starved-iteration");
    let port = free_port();
    // The application alone on CPU 0, the load on the last CPU, so only the application
    // starves (and rigor, which runs the load, stays quick).
    let last = cpus() - 1;
    std::fs::write(dir.join("rigor.toml"), pinned_config(port, 0, last)).unwrap();
    // The machine is busy before and during the whole run: one spinning thread on each CPU.
    // Its busy share before the run is then ~100%, the figure interference is judged from.
    let _busy: Vec<Hogs> = (0..cpus()).map(|c| Hogs::start(1, c, 0)).collect();
    let mut child = rigor_command(
        &dir,
        &[
            "run",
            "--json",
            "result.json",
            "--out-dir",
            "out",
            "-i",
            "3",
            "-p",
            "pinned",
        ],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("start rigor");
    // During the 2nd iteration, neighbours that outrank the application take its CPU; they
    // stop once the next attempt starts.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !has_log(&dir, "row1-iter2.log") && Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let greedy = Hogs::start(2, 0, -20);
    while !has_log(&dir, "row1-iter2-rerun1.log")
        && !has_log(&dir, "row1-iter3.log")
        && Instant::now() < deadline
    {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(greedy);
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = result(&dir);
    assert_schema(&json);
    let its = iterations(&json);
    let table: String = its
        .iter()
        .map(|it| {
            format!(
                "{} {} {} interference {:?} wait {:?}\n",
                it["index"],
                it["sequence"],
                it["excluded"],
                figure(it, "interference_pct"),
                figure(it, "app_wait_per_cpu")
            )
        })
        .collect();
    eprintln!("{table}");
    let slot: Vec<&Value> = its.iter().filter(|it| it["index"] == 1).collect();
    let starved = slot[0];
    let others: Vec<f64> = its
        .iter()
        .filter(|it| it["index"] != 1)
        .filter_map(|it| figure(it, "app_wait_per_cpu"))
        .collect();
    let app = figure(starved, "app_wait_per_cpu").expect("the starved iteration's wait");
    // The load waits on the starved application, so its own figure may be the larger one.
    let waited = app.max(figure(starved, "client_wait_per_cpu").unwrap_or(0.0));
    assert!(
        others.iter().all(|o| app > *o),
        "the starved iteration waited no longer than the others:\n{table}"
    );
    assert_eq!(starved["excluded"], "interference", "{table}\n{t}");
    assert!(slot.len() >= 2, "no re-run:\n{table}");
    let said = message(&starved["warnings"], "contaminated");
    assert!(
        said.contains(&format!("waited {waited:.2} s for a CPU per CPU second")),
        "{said}"
    );
    assert!(said.ends_with("excluded and re-run"), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run-queue delay and CPU of every thread of `pid` so far, ns (the test's own reading).
fn sched(pid: u32) -> (u64, u64) {
    let mut sum = (0, 0);
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) {
            let f: Vec<u64> = s
                .split_whitespace()
                .filter_map(|v| v.parse().ok())
                .collect();
            sum.0 += f[1];
            sum.1 += f[0];
        }
    }
    sum
}

#[test]
fn a_load_engine_starved_of_its_cpu_is_warned_about() {
    let _serial = one_at_a_time();
    let dir = temp_dir("starved-client");
    let port = free_port();
    std::fs::write(dir.join("rigor.toml"), pinned_config(port, cpus() - 1, 0)).unwrap();
    // Four neighbours on the load's CPU: the engine gets about a fifth of it.
    let _hogs = Hogs::start(4, 0, 0);
    let mut child = rigor_command(
        &dir,
        &["run", "--json", "result.json", "-i", "1", "-p", "pinned"],
    )
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .expect("start rigor");
    // The test's reading of rigor's own threads (the engine's) while it runs.
    let pid = child.id();
    // The largest wait per CPU second seen while the load's threads lived (they take their
    // counters with them when they exit), over readings of at least 50 ms of CPU.
    let mut whole: f64 = 0.0;
    while child.try_wait().unwrap().is_none() {
        let (wait, cpu) = sched(pid);
        if cpu >= 50_000_000 {
            whole = whole.max(wait as f64 / cpu as f64);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = result(&dir);
    let it = &iterations(&json)[0];
    let ratio = figure(it, "client_wait_per_cpu").expect("client_wait_per_cpu");
    // rigor's threads, read by the test, waited at least half as much per CPU second as
    // rigor says its load did.
    assert!(
        ratio >= 1.0 && whole >= 0.5,
        "client {ratio}, rigor's whole life {whole}\n{t}"
    );
    let said = message(&it["warnings"], "client_starved");
    assert!(said.starts_with("the load engine waited"), "{said}");
    assert!(
        said.contains(&format!("({ratio:.1} s per CPU second")),
        "{said}"
    );
    assert!(t.contains("client_starved"), "{t}");
}
