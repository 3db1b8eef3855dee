//! Shared helpers for the end-to-end tests: the testbed binary, free ports, configs, running
//! rigor and reading its result, and finding processes that should not exist.
#![allow(dead_code)]

pub mod marks;

#[allow(unused_imports)]
pub use testkit::{cold_file, is_root, require_root, skip};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// `rigor run` arguments that keep the result (`result.json`) and the logs (`out/`) in the
/// test's folder; tests add `-i N` and their own flags. `--keep-noisy`: on a machine shared
/// with other work an iteration may be contaminated, and a re-run would change the number of
/// iterations a test counts (noisy_rerun.rs tests the re-runs without it).
pub const RUN: &[&str] = &[
    "run",
    "--json",
    "result.json",
    "--out-dir",
    "out",
    "--keep-noisy",
];

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

/// The build logs (`build-*`) of every run folder under `results` (a run's `--out` folder).
pub fn build_logs(results: &Path) -> Vec<String> {
    std::fs::read_dir(results)
        .unwrap()
        .flatten()
        .flat_map(|run| std::fs::read_dir(run.path()).unwrap().flatten())
        .filter(|f| f.file_name().to_string_lossy().starts_with("build-"))
        .map(|f| std::fs::read_to_string(f.path()).unwrap())
        .collect()
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

/// `config` with `lines` added to the application's job, after its `stop_timeout`.
pub fn with_app(toml: &str, lines: &str) -> String {
    let at = "stop_timeout = \"2s\"";
    assert!(toml.contains(at), "no `{at}` in {toml}");
    toml.replacen(at, &format!("{at}\n{lines}"), 1)
}

/// `config` (for `port`) with the application's command replaced by `command`.
pub fn with_command(toml: &str, port: u16, command: &str) -> String {
    let plain = format!(
        "command = \"{} --port {port} --threads 1 \"",
        hello_server().display()
    );
    assert!(toml.contains(&plain), "no `{plain}` in {toml}");
    toml.replacen(&plain, &format!("command = {}", toml_string(command)), 1)
}

/// `config` with `program` started in place of the testbed binary, with the same arguments.
pub fn with_program(toml: &str, program: &str) -> String {
    let bin = hello_server().display().to_string();
    assert!(toml.contains(&bin), "no `{bin}` in {toml}");
    toml.replacen(&bin, program, 1)
}

/// A tiny real Cargo crate `shim` in `dir` whose binary execs the testbed, for tests of what
/// rigor says about a build; `manifest_extra` ends its Cargo.toml (profiles, say).
pub fn shim_crate(dir: &Path, manifest_extra: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"shim\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n\
             {manifest_extra}"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        format!(
            "use std::os::unix::process::CommandExt;\nfn main() {{ let e = std::process::Command::new({:?}).args(std::env::args().skip(1)).exec(); panic!(\"{{e}}\"); }}\n",
            hello_server().display().to_string()
        ),
    )
    .unwrap();
}

/// A TOML basic string holding `s`.
pub fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The rigor binary in `dir` with colour off, for a test that sets more (a user, an
/// environment, pipes) before running it.
pub fn rigor_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rigor"));
    cmd.args(args).current_dir(dir).env("NO_COLOR", "1");
    cmd
}

/// Runs rigor with `args` in `dir`.
pub fn rigor(dir: &Path, args: &[&str]) -> Output {
    rigor_command(dir, args).output().expect("run rigor")
}

/// Writes `rigor.toml` and runs `rigor run --json result.json` plus `args`.
pub fn run(dir: &Path, toml: &str, args: &[&str]) -> (Output, Option<Value>) {
    std::fs::write(dir.join("rigor.toml"), toml).unwrap();
    let out = rigor(dir, &[RUN, args].concat());
    (out, try_result(dir))
}

/// Runs `toml` in `dir` as `run` does and asserts rigor's exit code; returns its output (stdout
/// and stderr) and its result.
pub fn run_exit(dir: &Path, toml: &str, args: &[&str], code: i32) -> (String, Option<Value>) {
    let (out, json) = run(dir, toml, args);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(code), "{t}");
    (t, json)
}

/// The result `rigor run` wrote to `dir/result.json`, if it wrote a valid one.
pub fn try_result(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("result.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// The result `rigor run` wrote to `dir/result.json`; a test that expects one fails without it.
pub fn result(dir: &Path) -> Value {
    try_result(dir).unwrap_or_else(|| panic!("no valid {}", dir.join("result.json").display()))
}

/// The kinds of a list of warnings, in order.
pub fn kinds(warnings: &Value) -> Vec<String> {
    warnings
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|w| w["kind"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The warning of `kind` in a list of warnings; the test fails, showing the list, without one.
pub fn warning<'a>(warnings: &'a Value, kind: &str) -> &'a Value {
    warnings
        .as_array()
        .into_iter()
        .flatten()
        .find(|w| w["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} warning in {warnings}"))
}

/// The messages of every warning of `kind` in a list of warnings, in order.
pub fn messages(warnings: &Value, kind: &str) -> Vec<String> {
    warnings
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["kind"] == kind)
        .map(|w| w["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The message of the warning of `kind` in a list of warnings.
pub fn message<'a>(warnings: &'a Value, kind: &str) -> &'a str {
    let w = warning(warnings, kind);
    w["message"].as_str().unwrap_or_else(|| panic!("{w}"))
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

/// Asserts that a result is a valid `rigor.run.v1` (docs/rigor.run.v1.schema.json), naming every
/// place where it is not.
pub fn assert_schema(result: &Value) {
    let path = workspace().join("docs/rigor.run.v1.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let errors: Vec<String> = v
        .iter_errors(result)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Whether `program` is on PATH.
pub fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// Held by each test that loads or measures the machine (CPU hogs, timed loads, bisections):
/// the integration tests are one binary, and two such tests side by side would each be the
/// other's noise. One lock for all of them, whichever module they are in.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
