//! Shared helpers for the end-to-end tests: the testbed binary, free ports, configs, running
//! rigor and reading its result, and finding processes that should not exist.
#![allow(dead_code)]

pub mod marks;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("workspace root")
        .to_path_buf()
}

/// The release testbed server, built once per test binary.
pub fn hello_server() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--release", "-q", "-p", "hello-server"])
            .current_dir(workspace())
            .status()
            .expect("cargo build hello-server");
        assert!(status.success(), "building hello-server failed");
        workspace().join("target/release/hello-server")
    })
    .clone()
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A fresh folder for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rigor-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A config whose application is the testbed on `port` with extra `flags`, loaded for `secs`.
pub fn config(port: u16, flags: &str, path: &str, extra_load: &str) -> String {
    format!(
        r#"
[jobs.app]
command = "{bin} --port {port} --threads 1 {flags}"
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "10s" }}
stop_timeout = "2s"

[jobs.load]
url = "http://127.0.0.1:{port}{path}"
connections = 8
warmup = "300ms"
duration = "1s"
{extra_load}

[scenarios.s]
application = "app"
load = "load"
"#,
        bin = hello_server().display()
    )
}

/// Runs rigor with `args` in `dir`.
pub fn rigor(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rigor"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run rigor")
}

/// Writes `rigor.toml` and runs `rigor run --json result.json` plus `args`.
pub fn run(dir: &Path, toml: &str, args: &[&str]) -> (Output, Option<Value>) {
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let mut all = vec!["run", "--json", "result.json", "--out-dir", "out"];
    all.extend_from_slice(args);
    let out = rigor(dir, &all);
    let json = std::fs::read_to_string(dir.join("result.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    (out, json)
}

/// stdout + stderr, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// PIDs of live (non-zombie) processes whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == std::process::id() as i32 {
            continue;
        }
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'));
        if cmd.contains(needle) && !zombie && !cmd.contains("rigor run") {
            out.push(pid);
        }
    }
    out
}

/// The iterations of the first row.
pub fn iterations(json: &Value) -> &Vec<Value> {
    json["rows"][0]["iterations"]
        .as_array()
        .expect("iterations")
}

/// A measurement of an iteration.
pub fn m(it: &Value, id: &str) -> Option<f64> {
    it["measurements"][id].as_f64()
}

/// The testbed's closing stats line (`hello-server stats: {json}`) from an iteration's log.
pub fn server_stats(it: &Value) -> Value {
    let log = it["log"].as_str().expect("log path");
    let text = std::fs::read_to_string(log).expect("read log");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("hello-server stats: "))
        .unwrap_or_else(|| panic!("no stats line in {log}:\n{text}"));
    serde_json::from_str(line).expect("stats json")
}
