//! Release builds, verified: each variant runs exactly what its own build produced, staleness is
//! judged by the build's inputs, unoptimised profiles are named, and a hanging build is stopped.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A fresh folder for test `name` holding `mk.sh`: `mk.sh NAME` writes `app.sh`, a launcher
/// that prints `built-by-NAME`, then runs the testbed.
fn launcher_dir(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    std::fs::write(
        dir.join("mk.sh"),
        format!(
            "printf '#!/bin/sh\\necho built-by-%s\\nexec {} \"$@\"\\n' \"$1\" > app.sh\nchmod +x app.sh\n",
            hello_server().display()
        ),
    )
    .unwrap();
    dir
}

/// A testbed job whose command is `./app.sh`, with `lines` (its build) added to the job.
fn app_sh_config(port: u16, lines: &str) -> String {
    with_app(
        &with_program(&config(port, "", "/plaintext", ""), "./app.sh"),
        lines,
    )
}

/// A testbed job whose command is `./app.sh`, built by `build`, with two variants.
fn launcher_config(port: u16, build: &str, a: &str, b: &str) -> String {
    app_sh_config(port, &format!("build = \"{build}\"\nartifact = \"app.sh\""))
        + &format!("[scenarios.s.variants.a]\n{a}\n[scenarios.s.variants.b]\n{b}\n")
}

/// Variant `a` builds `app.sh` with `mk.sh A`; variant `b` runs `build` instead.
fn b_builds_otherwise(port: u16, build: &str) -> String {
    launcher_config(port, "sh mk.sh A", "", &format!("build = \"{build}\""))
}

/// Variants `a` and `b` whose builds differ only in the flavour they pass to `mk.sh`.
fn flavoured_config(port: u16) -> String {
    launcher_config(
        port,
        "sh mk.sh {{flavour}}",
        "variables = { flavour = \"A\" }",
        "variables = { flavour = \"B\" }",
    )
}

fn log_of(it: &Value) -> String {
    std::fs::read_to_string(it["log"].as_str().expect("log path")).unwrap_or_default()
}

/// Each row's variant, its iterations and the error of its build (`None` when it built).
fn rows_by_variant(json: &Value) -> Vec<(String, &Vec<Value>, Option<&str>)> {
    json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["variant"].as_str().unwrap().to_string(),
                r["iterations"].as_array().unwrap(),
                r["build_error"].as_str(),
            )
        })
        .collect()
}

#[test]
fn variants_that_build_to_one_path_each_run_their_own_build() {
    let dir = launcher_dir("same-artifact");
    let toml = flavoured_config(free_port());
    let (t, json) = run_exit(&dir, &toml, &["-i", "2", "--allow-inconclusive"], 0);
    let json = json.unwrap();
    for (variant, its, _) in rows_by_variant(&json) {
        let mine = format!("built-by-{}", variant.to_uppercase());
        assert_eq!(its.len(), 2, "{t}");
        for it in its {
            let log = log_of(it);
            assert!(
                log.contains(&mine)
                    && !log.contains(&format!(
                        "built-by-{}",
                        if variant == "a" { "B" } else { "A" }
                    )),
                "variant {variant} ran another build:\n{log}"
            );
        }
    }
    let builds = json["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 2, "{builds:?}");
    let hashes: Vec<&str> = builds
        .iter()
        .map(|b| b["artifact_hash"].as_str().expect("artifact_hash"))
        .collect();
    assert!(
        hashes
            .iter()
            .all(|h| h.starts_with("sha256:") && h.len() == 71),
        "{hashes:?}"
    );
    assert_ne!(hashes[0], hashes[1]);
    // Each copy kept in the run folder holds its own build.
    for b in builds {
        let copy = std::fs::read_to_string(b["artifact_snapshot"].as_str().unwrap()).unwrap();
        let v = b["variant"].as_str().unwrap().to_uppercase();
        assert!(copy.contains(&format!("built-by-{v}")), "{copy}");
    }
}

#[test]
fn an_artifact_changed_after_its_build_is_put_back_before_the_next_start() {
    // The program rewrites its own file when it runs: the next start must still run the build.
    let dir = temp_dir("tampered");
    std::fs::write(
        dir.join("template.sh"),
        format!(
            "#!/bin/sh\necho built-by-A\nsed -i s/built-by-A/built-by-TAMPERED/ \"$0\"\nexec {} \"$@\"\n",
            hello_server().display()
        ),
    )
    .unwrap();
    let toml = app_sh_config(
        free_port(),
        "build = \"cp template.sh app.sh && chmod +x app.sh\"\nartifact = \"app.sh\"",
    );
    let (_, json) = run_exit(&dir, &toml, &["-i", "3"], 0);
    let json = json.unwrap();
    for it in iterations(&json) {
        let log = log_of(it);
        assert!(
            log.contains("built-by-A") && !log.contains("TAMPERED"),
            "{log}"
        );
    }
    assert!(std::fs::read_to_string(dir.join("app.sh"))
        .unwrap()
        .contains("TAMPERED"));
}

#[test]
fn two_builds_in_one_folder_without_an_artifact_are_refused_before_building() {
    let dir = launcher_dir("no-artifact");
    let toml = flavoured_config(free_port()).replace("artifact = \"app.sh\"", "");
    // An invalid plan: a usage error.
    let (t, _) = run_exit(&dir, &toml, &["-i", "1"], 2);
    assert!(
        t.contains("variant `a`")
            && t.contains("variant `b`")
            && t.contains("`artifact")
            && t.contains("[jobs.app]"),
        "{t}"
    );
    assert!(!dir.join("app.sh").exists(), "nothing was built: {t}");
}

#[test]
fn a_build_that_leaves_another_variants_artifact_in_place_is_refused() {
    // Like `make` that ignores changed flags: variant b's build succeeds without writing.
    let dir = launcher_dir("no-rebuild");
    let toml = b_builds_otherwise(free_port(), "echo 'make: app.sh is up to date.'");
    let (t, json) = run_exit(&dir, &toml, &["-i", "1", "--allow-inconclusive"], 1);
    assert!(
        t.contains("the build of `app` (variant `b`) did not rewrite")
            && t.contains("variant `a`")
            && t.contains("make -B"),
        "{t}"
    );
    let json = json.unwrap();
    for (variant, its, build_error) in rows_by_variant(&json) {
        if variant == "a" {
            assert!(
                build_error.is_none()
                    && its[0]["error"].is_null()
                    && log_of(&its[0]).contains("built-by-A")
            );
        } else {
            assert!(its.is_empty(), "{its:?}");
            assert!(build_error.unwrap().contains("did not rewrite"));
        }
    }
}

#[test]
fn different_builds_that_produce_identical_artifacts_are_warned_about() {
    // Variant b's build only touches the file: it "rewrote" it, yet runs what a built.
    let dir = launcher_dir("identical-artifacts");
    let toml = b_builds_otherwise(free_port(), "touch app.sh");
    // --strict fails on the warning: exit 4.
    let (t, json) = run_exit(
        &dir,
        &toml,
        &["-i", "1", "--allow-inconclusive", "--strict"],
        4,
    );
    assert!(
        t.contains("[identical_artifacts]")
            && t.contains("`app` (variant `a`) and `app` (variant `b`)")
            && t.contains("sha256:")
            && t.contains("same binary"),
        "{t}"
    );
    let json = json.unwrap();
    let w = message(&json["warnings"], "identical_artifacts");
    // Both builds hash alike; the message names the hash by its first 12 hex digits.
    let hash = json["builds"][0]["artifact_hash"].as_str().unwrap();
    assert_eq!(json["builds"][1]["artifact_hash"], hash);
    assert!(
        w.contains("`app` (variant `a`) and `app` (variant `b`)")
            && w.contains("byte-identical artifacts")
            && w.contains(&format!("{}…", &hash[..19])),
        "{w}"
    );
}

#[test]
fn newer_notes_and_outputs_beside_an_up_to_date_artifact_are_not_staleness() {
    let dir = launcher_dir("not-stale");
    assert!(std::process::Command::new("sh")
        .args(["mk.sh", "A"])
        .current_dir(&dir)
        .status()
        .unwrap()
        .success());
    std::thread::sleep(Duration::from_millis(20));
    // Written after the artifact: notes, a config under another name, redirected output.
    std::fs::write(dir.join("notes.md"), "try -i 10").unwrap();
    std::fs::write(dir.join("bench.toml"), "").unwrap();
    std::fs::write(dir.join("out.txt"), "earlier run").unwrap();
    let toml = app_sh_config(
        free_port(),
        "build = \"echo nothing to do\"\nartifact = \"app.sh\"",
    );
    let (t, json) = run_exit(&dir, &toml, &["-i", "1"], 0);
    assert!(t.contains("app.sh was up to date"), "{t}");
    assert_eq!(json.unwrap()["builds"][0]["rewritten"], false);
    // The real trap is still caught: a source newer than the artifact the build did not write.
    std::fs::write(dir.join("main.c"), "int main(){}").unwrap();
    let (t, _) = run_exit(&dir, &toml, &["-i", "1"], 1);
    assert!(t.contains("stale artifact") && t.contains("main.c"), "{t}");
}

#[test]
fn unoptimised_cargo_profiles_are_named_once_per_build_with_the_variant() {
    let dir = temp_dir("profiles");
    shim_crate(&dir, "[profile.fast]\ninherits = \"dev\"\n");
    let toml = with_app(
        &with_program(&config(free_port(), "", "/plaintext", ""), "target/{{out}}/shim"),
        "build = \"cargo build -q {{flags}}\"\nartifact = \"target/{{out}}/shim\"",
    ) + "[scenarios.s.variants.profile]\nvariables = { out = \"fast\", flags = \"--profile fast\" }\n\
           [scenarios.s.variants.rustflags]\nvariables = { out = \"release\", flags = \"--release\" }\n\
           env = { RUSTFLAGS = \"-C opt-level=0\" }\n";
    std::fs::write(dir.join("rigor.toml"), &toml).unwrap();
    let out = rigor_command(
        &dir,
        &[RUN, &["-i", "1", "--allow-inconclusive", "--strict"]].concat(),
    )
    .env("CARGO_INCREMENTAL", "0")
    .output()
    .unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(4), "--strict: {t}");
    let json = result(&dir);
    let debug = messages(&json["warnings"], "debug_build");
    assert_eq!(debug.len(), 2, "one per build: {debug:?}");
    assert!(
        debug.iter().any(|m| m.contains("(variant `profile`)")
            && m.contains("`fast`")
            && m.contains("inherits `dev`")),
        "{debug:?}"
    );
    assert!(
        debug
            .iter()
            .any(|m| m.contains("(variant `rustflags`)")
                && m.contains("RUSTFLAGS has `-C opt-level=0`")),
        "{debug:?}"
    );
    let opt: Vec<String> = json["builds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["optimisation"][0].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        opt.iter().any(|o| o.starts_with("fast: opt-level 0"))
            && opt.iter().any(|o| o.starts_with("release: opt-level 0")),
        "{opt:?}"
    );
    // Said once as the build ends (stderr) and once in the report (stdout).
    let said = "(variant `profile`) builds unoptimised";
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(stdout.matches(said).count(), 1, "{t}");
    assert_eq!(stderr.matches(said).count(), 1, "{t}");
    assert_eq!(
        json["environment"]["jobs"]["app"]["build_env"]["CARGO_INCREMENTAL"], "0",
        "{}",
        json["environment"]["jobs"]["app"]
    );
}

#[test]
fn a_hanging_build_is_killed_after_build_timeout_and_other_rows_still_run() {
    let dir = launcher_dir("build-timeout");
    let toml = b_builds_otherwise(
        free_port(),
        "echo compiling the world; setsid sleep 41.5 & sleep 42.5",
    )
    .replace(
        "artifact = \"app.sh\"",
        "artifact = \"app.sh\"\nbuild_timeout = \"1s\"",
    );
    let started = Instant::now();
    let (t, json) = run_exit(&dir, &toml, &["-i", "1", "--allow-inconclusive"], 1);
    assert!(started.elapsed() < Duration::from_secs(30), "{t}");
    assert!(
        t.contains("build of `app` still running after 1s (`build_timeout`)")
            && t.contains("compiling the world"),
        "{t}"
    );
    for needle in ["sleep 41.5", "sleep 42.5"] {
        assert!(processes_with(needle).is_empty(), "{needle} survived: {t}");
    }
    let json = json.unwrap();
    for (variant, its, build_error) in rows_by_variant(&json) {
        match variant.as_str() {
            "a" => assert!(
                build_error.is_none() && its[0]["error"].is_null(),
                "{its:?}"
            ),
            _ => assert!(build_error.unwrap().contains("build_timeout"), "{json}"),
        }
    }
}
