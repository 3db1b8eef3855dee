//! Throwaway git repositories for the bisect and `ref` tests: a history of commits where one
//! file's value changes at a chosen commit, and a config whose build copies that file into the
//! artifact the testbed's command reads.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Runs git in `dir` with a fixed author; its trimmed stdout. Skips nothing: callers check
/// [`have_git`] first.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "rigor test")
        .env("GIT_AUTHOR_EMAIL", "test@rigor.invalid")
        .env("GIT_COMMITTER_NAME", "rigor test")
        .env("GIT_COMMITTER_EMAIL", "test@rigor.invalid")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Whether git can run here; prints why a test is skipped when not.
pub fn have_git() -> bool {
    let ok = Command::new("git").arg("--version").output().is_ok();
    if !ok {
        eprintln!("skipped: git is not installed");
    }
    ok
}

/// One commit of a made-up history: the value of the file, or `None` for a commit that
/// deletes it (its build fails), and its subject.
pub struct Change<'a> {
    pub value: Option<&'a str>,
    pub subject: String,
}

/// Makes `repo` a repository with one commit per change of `file`; returns the commits' full
/// hashes in order.
pub fn history(repo: &Path, file: &str, changes: &[Change]) -> Vec<String> {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README"), "a project\n").unwrap();
    let mut shas = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        match c.value {
            Some(v) => std::fs::write(repo.join(file), format!("{v}\n")).unwrap(),
            None => {
                let _ = std::fs::remove_file(repo.join(file));
            }
        }
        std::fs::write(repo.join("README"), format!("a project, version {i}\n")).unwrap();
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-q", "-m", &c.subject]);
        shas.push(git(repo, &["rev-parse", "HEAD"]));
    }
    shas
}

/// Eight commits whose `file` holds `before` up to commit `k - 1` and `after` from commit `k`
/// on (1-based), with commit `broken` (if any) deleting it; subjects say which.
pub fn step_history(
    repo: &Path,
    file: &str,
    before: &str,
    after: &str,
    k: usize,
    broken: Option<usize>,
) -> Vec<String> {
    step_history_of(8, repo, file, before, after, k, broken)
}

/// [`step_history`] with `n` commits.
pub fn step_history_of(
    n: usize,
    repo: &Path,
    file: &str,
    before: &str,
    after: &str,
    k: usize,
    broken: Option<usize>,
) -> Vec<String> {
    let changes: Vec<Change> = (1..=n)
        .map(|i| {
            let value = if i >= k { after } else { before };
            if Some(i) == broken {
                Change {
                    value: None,
                    subject: format!("commit {i}: loses {file}"),
                }
            } else {
                Change {
                    value: Some(value),
                    subject: format!("commit {i}: {file} = {value}"),
                }
            }
        })
        .collect();
    history(repo, file, &changes)
}

/// A load scenario `s` whose application job in `dir` (relative to the config) copies `file`
/// to the artifact `app.value` and starts the testbed with `flag VALUE` from it.
pub fn value_config(port: u16, dir: &str, file: &str, flag: &str) -> String {
    format!(
        r#"
[jobs.app]
dir = "{dir}"
build = "cp {file} app.value"
artifact = "app.value"
command = "exec {bin} --port {port} --threads 1 {flag} $(cat app.value)"
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "10s" }}
stop_timeout = "2s"

[jobs.load]
url = "http://127.0.0.1:{port}/plaintext"
connections = 8
warmup = "200ms"
duration = "600ms"

[scenarios.s]
application = "app"
load = "load"
"#,
        bin = super::common::hello_server().display()
    )
}

/// Busy loops on every core until dropped (or `most` has passed, so a failing test cannot leave
/// them spinning): the machine a bisection meets when something else runs beside it. Each loop
/// spins half of every 20 ms (a build or a browser rather than a benchmark of its own), so the
/// cores are shared, not taken.
pub struct CpuHog {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl CpuHog {
    /// Starts one busy thread per core.
    pub fn start(most: std::time::Duration) -> CpuHog {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..cores)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let until = std::time::Instant::now() + most;
                    let mut x: u64 = 1;
                    let half = std::time::Duration::from_millis(10);
                    while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                        let spin = std::time::Instant::now();
                        while spin.elapsed() < half {
                            x = std::hint::black_box(
                                x.wrapping_mul(6364136223846793005).wrapping_add(1),
                            );
                        }
                        std::thread::sleep(half);
                    }
                })
            })
            .collect();
        CpuHog { stop, threads }
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
