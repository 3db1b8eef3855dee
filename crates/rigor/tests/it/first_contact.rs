//! A new user's first minutes, on the real binary: `rigor init` writes a rigor.toml that runs
//! the project it found, every mistake of a config is listed in one run, and the references
//! print from anywhere, with no repository at hand.

use crate::common;
use common::*;
use std::path::Path;

/// `rigor help TOPIC` in a folder with no docs/: exactly the page of docs/ it was built from.
#[test]
fn help_prints_each_reference_offline_from_a_folder_without_docs() {
    let dir = temp_dir("help-offline");
    assert!(!dir.join("docs").exists());
    for (topic, file) in [
        ("config", "docs/config.md"),
        ("cli", "docs/cli.md"),
        ("results", "docs/results.md"),
        ("warnings", "docs/warnings.md"),
    ] {
        let out = rigor(&dir, &["help", topic]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let page = std::fs::read_to_string(workspace().join(file)).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            page,
            "rigor help {topic}"
        );
    }
    let out = rigor(&dir, &["help", "config"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("## `[scenarios.NAME]`"));
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["init", "--help"],
    ] {
        let out = rigor(&dir, &args);
        let page = text(&out);
        assert_eq!(out.status.code(), Some(0), "{page}");
        assert!(page.contains("rigor help config"), "{args:?}: {page}");
        assert!(
            !page.contains("docs/"),
            "{args:?} points into the repository: {page}"
        );
    }
    let out = rigor(&dir, &["help", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("topics are cli, config, results, warnings"));
}

/// A reference lost to a full disk (`rigor help config > /dev/full`) is an error (exit 1), not
/// a success nobody could read.
#[test]
fn help_lost_to_a_full_disk_is_an_error() {
    let dir = temp_dir("help-full");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = rigor_command(&dir, &["help", "config"])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not written to standard output") && stderr.contains("No space left"),
        "{stderr}"
    );
}

/// Six mistakes of six kinds, one of them a scenario naming a job that does not exist (the
/// misspelt job has mistakes of its own): one run lists all six, each at its line and key, and
/// nothing is built or started.
#[test]
fn six_mistakes_of_different_kinds_are_reported_in_one_run() {
    let dir = temp_dir("six-mistakes");
    let toml = r#"[variables]
port = 5080

[jobs.app]
build = "touch built-marker"
command = "touch started-marker; sleep 5"
ready = { http = "http://127.0.0.1:{{prot}}/health" }
stop_timeout = "5 parsecs"

[jobs.plaintext]
url = "http://127.0.0.1:{{port}}/"
connections = 0
method = "GE T"

[scenarios.main]
application = "app"
load = "plaintxt"
iterations = 0
"#;
    let (out, _) = run(&dir, toml, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    let file = "rigor.toml";
    let expected = [
        (7, "jobs.app.ready", "undefined variable `prot`"),
        (8, "jobs.app.stop_timeout", "invalid duration `5 parsecs`"),
        (
            12,
            "jobs.plaintext.connections",
            "`0` is not a whole number",
        ),
        (13, "jobs.plaintext.method", "`GE T` is not an HTTP method"),
        (17, "scenarios.main.load", "no job named `plaintxt`"),
        (18, "scenarios.main.iterations", "must be at least 1"),
    ];
    let errors: Vec<&str> = t.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), expected.len(), "{t}");
    for ((line, key, what), error) in expected.iter().zip(&errors) {
        let at = format!("error: {file}:{line}: {key}: ");
        assert!(
            error.starts_with(&at) && error.contains(what),
            "{at}…{what}\nin: {t}"
        );
    }
    assert!(
        t.contains("6 problems; nothing was built or started"),
        "{t}"
    );
    for marker in ["built-marker", "started-marker", "result.json"] {
        assert!(!dir.join(marker).exists(), "{marker}: {t}");
    }
}

/// Runs `rigor init` in `dir`.
fn init(dir: &Path, args: &[&str]) -> std::process::Output {
    rigor(dir, &[&["init"], args].concat())
}

#[test]
fn init_never_overwrites_a_config_unless_forced() {
    let dir = temp_dir("init-force");
    std::fs::write(dir.join("go.mod"), "module example.com/acme/pong\n").unwrap();
    let out = init(&dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("a Go module (`example.com/acme/pong`)"));
    let path = dir.join("rigor.toml");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.contains("build = \"go build -o bin/pong .\""),
        "{written}"
    );

    std::fs::write(&path, "# mine\n").unwrap();
    let out = init(&dir, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    assert!(
        t.contains(&format!("{} already exists", path.display())) && t.contains("--force"),
        "{t}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# mine\n");

    let out = init(&dir, &["--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
}

/// A small Node server: `rigor init` finds it, and the file it writes — with the port, warmup
/// and duration edited as a user would — builds, starts and loads it; the server's own count
/// of requests matches what the engine sent.
#[test]
fn init_writes_a_config_that_runs_the_project_it_found() {
    if !installed("node") || !installed("npm") {
        return skip("node and npm are not installed");
    }
    let dir = temp_dir("init-node");
    std::fs::write(
        dir.join("package.json"),
        r#"{"name":"tiny","version":"1.0.0","main":"server.js"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("server.js"),
        "const http = require('http');\n\
         let served = 0;\n\
         http.createServer((req, res) => { served++; res.end('hello'); })\n\
         \x20 .listen(Number(process.env.PORT), '127.0.0.1');\n\
         process.on('SIGTERM', () => { console.log(`served ${served}`); process.exit(0); });\n",
    )
    .unwrap();
    let out = init(&dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("a Node project (`tiny`)"));
    let written = std::fs::read_to_string(dir.join("rigor.toml")).unwrap();
    for line in [
        "command = \"node server.js\"",
        "port = 3000",
        "warmup = \"3s\"",
        "duration = \"10s\"",
    ] {
        assert!(written.lines().any(|l| l == line), "{line}: {written}");
    }
    let edited = written
        .replace("port = 3000", &format!("port = {}", free_port()))
        .replace("warmup = \"3s\"", "warmup = \"0s\"")
        .replace("duration = \"10s\"", "duration = \"1s\"");
    let (t, json) = run_exit(&dir, &edited, &["-i", "2"], 0);
    let json = json.unwrap_or_else(|| panic!("no result: {t}"));
    let its = iterations(&json);
    assert_eq!(its.len(), 2, "{t}");
    for it in its {
        let log = std::fs::read_to_string(it["log"].as_str().unwrap()).unwrap();
        let served: f64 = log
            .lines()
            .find_map(|l| l.strip_prefix("served "))
            .unwrap_or_else(|| panic!("no count in {log}"))
            .parse()
            .unwrap();
        let in_window = m(it, "load.requests").unwrap();
        assert!(in_window > 0.0, "{it}");
        let load = &it["load"];
        let outside = load["outside_window"]["requests"].as_f64().unwrap();
        let in_flight = load["in_flight_at_end"].as_f64().unwrap();
        let sent = in_window + outside + 1.0; // + the first request
        assert!(
            served <= sent && served >= sent - in_flight,
            "server answered {served}; engine: {in_window} measured + {outside} outside \
             (+1 first request), {in_flight} in flight at the end"
        );
    }
}

/// Mistakes that used to stop the checks early: a misspelt `command` (the job cannot start, yet
/// its other keys are checked), a matrix variable with no values (no row, yet the jobs are
/// checked), a wrong type and an unknown key in the load job, and a bad CPU list in a profile
/// the run does not select.
#[test]
fn a_job_that_cannot_play_its_role_and_an_empty_matrix_hide_no_other_mistake() {
    let dir = temp_dir("ten-mistakes");
    let toml = r#"[variables]
port = 5080

[jobs.app]
comand = "touch started-marker"
stop_timeout = "5 parsecs"
ready = { http = "http://127.0.0.1:{{prot}}/health" }

[jobs.load]
url = "http://127.0.0.1:{{port}}/"
connections = "lots"
method = "GE T"
colour = "red"

[scenarios.main]
application = "app"
load = "load"
iterations = "x"
matrix = { c = [] }

[profiles.p]
application = { cpus = "99-100x" }
"#;
    let (out, _) = run(&dir, toml, &[]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(2), "{t}");
    let expected = [
        (4, "jobs.app", "needs `command`"),
        (5, "jobs.app.comand", "unknown field `comand`"),
        (6, "jobs.app.stop_timeout", "invalid duration"),
        (7, "jobs.app.ready", "undefined variable `prot`"),
        (11, "jobs.load.connections", "`lots` is not a whole number"),
        (12, "jobs.load.method", "`GE T` is not an HTTP method"),
        (13, "jobs.load.colour", "unknown field `colour`"),
        (18, "scenarios.main.iterations", "expected a whole number"),
        (19, "scenarios.main.matrix", "`c` has no values"),
        (22, "profiles.p.application", "invalid CPU list `99-100x`"),
    ];
    let errors: Vec<&str> = t.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), expected.len(), "{t}");
    for ((line, key, what), error) in expected.iter().zip(&errors) {
        let at = format!("error: rigor.toml:{line}: {key}: ");
        assert!(
            error.starts_with(&at) && error.contains(what),
            "{at}…{what}\nin: {t}"
        );
    }
    assert!(!dir.join("started-marker").exists(), "{t}");
}
