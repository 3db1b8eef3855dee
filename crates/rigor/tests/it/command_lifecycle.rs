//! A command job's life: its CPU and run time against what the program measured itself, a
//! command that outlives its timeout, one that leaves a background child, and Ctrl-C — with
//! nothing of it left running afterwards.

use crate::common;

use common::marks::{self, MARK};
use common::{run_exit, temp_dir};
use std::time::Duration;

/// A command job `job` running `script` under `sh`, marked with `token`, `iterations` times.
fn command_config(script: &str, token: &str, extra: &str, iterations: usize) -> String {
    format!(
        "[jobs.job]\ncommand = {}\nenv = {{ {MARK} = \"{token}\" }}\n{extra}\n\
         [scenarios.s]\ncommand = \"job\"\niterations = {iterations}\n",
        common::toml_string(&format!("sh -c '{script}'"))
    )
}

/// Seconds in a `times` figure such as `0m0.520000s`.
fn seconds(field: &str) -> f64 {
    let (m, s) = field.trim_end_matches('s').split_once('m').unwrap();
    m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
}

#[test]
fn cpu_time_counts_short_lived_children_as_the_shell_itself_accounts_them() {
    let dir = temp_dir("command-cpu");
    let token = marks::token("cpu");
    // Six children that each burn CPU for a moment and exit; then the shell's own account of
    // itself and its children (`times`: user and system, shell then children).
    let script = "for k in 1 2 3 4 5 6; do (i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done); \
                  done; times";
    let (out, json) = run_exit(&dir, &command_config(script, &token, "", 2), &[], 0);
    let json = json.unwrap_or_else(|| panic!("{out}"));
    let iterations = json["rows"][0]["iterations"].as_array().unwrap();
    assert_eq!(iterations.len(), 2, "{out}");
    for it in iterations {
        let m = &it["measurements"];
        let stdout = it["log"].as_str().unwrap().replace(".log", ".stdout");
        let text = std::fs::read_to_string(&stdout).unwrap();
        let reference: f64 = text.split_whitespace().map(seconds).sum::<f64>() * 1e3;
        let measured = m["app.cpu_time"].as_f64().unwrap();
        // Clock ticks are 10 ms; each of the 8 processes may round by one.
        let slack = (reference * 0.05).max(90.0);
        assert!(
            (measured - reference).abs() <= slack,
            "app.cpu_time {measured:.1} ms, the shell's own account {reference:.1} ms ({text})"
        );
        assert!(reference > 50.0, "the children burned CPU: {text}");
        let elapsed = m["app.elapsed"].as_f64().unwrap();
        assert!(elapsed >= measured * 0.5 && elapsed < 60_000.0, "{m}");
        assert!(m["app.cpu.avg"].as_f64().unwrap() > 0.0, "{m}");
    }
    assert!(marks::left_after(&token, Duration::from_secs(3)).is_empty());
}

#[test]
fn a_command_past_its_timeout_is_stopped_and_fails_its_iteration() {
    let dir = temp_dir("command-timeout");
    let token = marks::token("timeout");
    let toml = command_config("echo begun; sleep 30", &token, "timeout = \"1s\"", 1);
    let started = std::time::Instant::now();
    let (out, json) = run_exit(&dir, &toml, &[], 1);
    assert!(started.elapsed() < Duration::from_secs(20), "{out}");
    let it = &json.unwrap()["rows"][0]["iterations"][0];
    let error = it["error"].as_str().unwrap();
    assert!(error.contains("timeout of 1.0s"), "{error}");
    assert!(
        error.contains("begun"),
        "the output's tail is shown: {error}"
    );
    assert!(marks::left_after(&token, Duration::from_secs(3)).is_empty());
}

#[test]
fn a_background_child_left_running_is_named_and_killed() {
    let dir = temp_dir("command-background");
    let token = marks::token("background");
    let toml = command_config("sleep 60 & echo done", &token, "", 1);
    let (out, json) = run_exit(&dir, &toml, &[], 0);
    let warnings = &json.unwrap()["rows"][0]["iterations"][0]["warnings"];
    let message = common::message(warnings, "left_behind");
    assert!(message.contains("(sleep)"), "{message}\n{out}");
    assert!(marks::left_after(&token, Duration::from_secs(3)).is_empty());
}

#[test]
fn ctrl_c_stops_the_command_and_keeps_the_finished_iterations() {
    let dir = temp_dir("command-interrupt");
    let token = marks::token("interrupt");
    std::fs::write(
        dir.join("rigor.toml"),
        command_config(
            "sleep 0.2; echo quick; if [ -e first ]; then sleep 60; else touch first; fi",
            &token,
            "",
            3,
        ),
    )
    .unwrap();
    let mut child = marks::spawn_rigor(&dir, common::RUN);
    marks::wait_for(
        "the second iteration's sleep",
        Duration::from_secs(20),
        // `first` before the sleep: a sleep seen after it is the second iteration's (the first
        // one's sleep, seen just before it ended, would send the signal between iterations).
        || dir.join("first").exists() && marks::marked(&token).iter().any(|(_, c)| c == "sleep"),
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = marks::wait_exit(&mut child, Duration::from_secs(15));
    assert_eq!(status.code(), Some(1), "an interrupted run failed");
    assert!(marks::left_after(&token, Duration::from_secs(3)).is_empty());
    let json = common::result(&dir);
    assert_eq!(json["status"], "interrupted");
    let its = json["rows"][0]["iterations"].as_array().unwrap();
    assert!(its.iter().any(|i| i["error"].is_null()), "{json}");
    assert!(its.iter().any(|i| i["error"]
        .as_str()
        .is_some_and(|e| e.contains("interrupted"))));
}

#[test]
fn a_reported_row_named_like_a_matrix_variable_fails_instead_of_pooling_rows() {
    let dir = temp_dir("command-row-clash");
    let token = marks::token("clash");
    let line = r###"echo "##rigor {\"name\":\"x\",\"value\":{{n}}0,\"direction\":\"higher\",\"row\":{\"n\":\"5\"}}""###;
    let toml = command_config(line, &token, "", 1).replace(
        "iterations = 1\n",
        "iterations = 1\nmatrix = { n = [1, 2] }\n",
    );
    let (out, json) = run_exit(&dir, &toml, &[], 1);
    let rows = json.unwrap()["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 2, "no row made of two rows' figures: {out}");
    let error = rows[0]["iterations"][0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.contains("`n` is already this row's variable (n=1)"),
        "{error}"
    );
}
