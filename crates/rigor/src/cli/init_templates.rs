//! What `rigor init` writes: the commented rigor.toml for a project found by `init_detect`,
//! one application job, one load job and one scenario.

use super::init_detect::Project;

/// A TOML string holding `s`, quoted and escaped.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// `{ A = "x", B = "y" }`.
fn inline(pairs: &[(&str, String)]) -> String {
    let items: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k} = {}", quote(v)))
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// The commented rigor.toml for `project`: one application job, one load job, one scenario.
pub fn render(project: &Project) -> String {
    let mut t = String::new();
    let mut line = |s: &str| {
        t.push_str(s);
        t.push('\n');
    };
    line(&format!(
        "# rigor.toml for {}, written by `rigor init`.",
        project.found
    ));
    line("# Read it, change what is marked `edit:`, then `rigor run`. Every table and key:");
    line("# `rigor help config`; every flag: `rigor help cli`.");
    line("");
    line("[variables]");
    line("# The port the application listens on and the load is sent to.");
    line(&format!("port = {}", project.port));
    line("");
    line("# The application: built once per distinct build, started fresh for every iteration.");
    line("[jobs.app]");
    for note in &project.notes {
        line(&format!("# {note}"));
    }
    if let Some(build) = &project.build {
        line("# The release build, run in this folder before the first iteration.");
        line(&format!("build = {}", quote(build)));
    }
    if let Some(artifact) = &project.artifact {
        line("# What the build makes: hashed, copied into the run folder, checked before each start.");
        line(&format!("artifact = {}", quote(artifact)));
    }
    line("# How to start it (run by `sh -c` in this folder).");
    line(&format!("command = {}", quote(&project.command)));
    if !project.env.is_empty() {
        line(&format!("env = {}", inline(&project.env)));
    }
    if let Some(c) = project.configuration {
        line("# Read by the debug-build guard: say \"debug\" if you measure a debug build.");
        line(&format!("configuration = {}", quote(c)));
    }
    if !project.versions.is_empty() {
        line("# Recorded with the result, so you know later what was measured.");
        line(&format!("versions = {}", inline(&project.versions)));
    }
    line("# Ready once a connection to the port succeeds; to wait for a health URL instead:");
    line("# ready = { http = \"http://127.0.0.1:{{port}}/health\", timeout = \"60s\" }");
    line("ready = { tcp = \"127.0.0.1:{{port}}\", timeout = \"60s\" }");
    line("");
    line("# The load: the built-in engine, closed model (add `rate = 10000` for an open one).");
    line("[jobs.load]");
    line("# edit: the path to measure.");
    line("url = \"http://127.0.0.1:{{port}}/\"");
    line("connections = 64");
    line("warmup = \"3s\"");
    line("duration = \"10s\"");
    line("# Check once after readiness that the URL answers as it should:");
    line("# validate = { status = 200, body_contains = \"Hello\" }");
    line("");
    line("# What `rigor run` runs: the application under that load, 5 fresh iterations.");
    line("[scenarios.main]");
    line("application = \"app\"");
    line("load = \"load\"");
    line("iterations = 5");
    line("# To compare this checkout with the commit before it, interleaved in one run:");
    line("# [scenarios.main.variants.before]");
    line("# ref = \"HEAD~1\"");
    line("# [scenarios.main.variants.now]");
    t
}

#[cfg(test)]
mod tests {
    use super::super::init_detect::detect;
    use super::*;
    use crate::config::{Config, PlanRequest};
    use std::path::PathBuf;

    /// A fresh folder holding `files` (name, text).
    fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rigor-init-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    /// The template for `files`, written and read back by rigor's own loader and planner:
    /// no problem at all, one row that starts the expected command.
    fn loads(name: &str, files: &[(&str, &str)]) -> (Project, String) {
        let dir = folder(name, files);
        let project = detect(&dir);
        let text = render(&project);
        let path = dir.join("rigor.toml");
        std::fs::write(&path, &text).unwrap();
        let (config, problems) = Config::load_all(&path).unwrap();
        assert!(problems.is_empty(), "{name}: {problems}\n{text}");
        let request = PlanRequest {
            profile: "local".to_string(),
            ..Default::default()
        };
        let plan = config
            .plan("main", &request)
            .unwrap_or_else(|p| panic!("{name}: {p}\n{text}"));
        assert_eq!(plan.rows.len(), 1);
        assert_eq!(plan.iterations, Some(5));
        let command = &plan.rows[0].app.command;
        let expected = project
            .command
            .replace("{{port}}", &project.port.to_string());
        assert_eq!(command, &expected, "{name}");
        let _ = std::fs::remove_dir_all(&dir);
        (project, text)
    }

    #[test]
    fn every_kind_of_project_gets_a_template_rigor_loads_and_plans() {
        let (p, t) = loads(
            "cargo",
            &[(
                "Cargo.toml",
                "[package]\nname = \"hello-api\"\nversion = \"0.1.0\"\n",
            )],
        );
        assert_eq!(p.command, "target/release/hello-api");
        assert!(t.contains("build = \"cargo build --release\""), "{t}");
        let (p, _) = loads(
            "cargo-bin",
            &[(
                "Cargo.toml",
                "[package]\nname = \"x\"\n[[bin]]\nname = \"srv\"\npath = \"src/main.rs\"\n",
            )],
        );
        assert_eq!(p.command, "target/release/srv");
        let (p, _) = loads(
            "go",
            &[("go.mod", "module github.com/acme/ping-svc\n\ngo 1.22\n")],
        );
        assert_eq!(p.build.as_deref(), Some("go build -o bin/ping-svc ."));
        let (p, _) = loads(
            "go-cmd",
            &[
                ("go.mod", "module acme/lib\n"),
                ("cmd/api/main.go", "package main\n"),
            ],
        );
        assert_eq!(p.build.as_deref(), Some("go build -o bin/api ./cmd/api"));
        let (p, _) = loads(
            "dotnet",
            &[("Web.Api.csproj", "<Project Sdk=\"Microsoft.NET.Sdk.Web\"/>")],
        );
        assert_eq!(p.command, "dotnet bin/rigor-publish/Web.Api.dll");
        assert_eq!(p.configuration, Some("Release"));
        let (p, _) = loads(
            "node",
            &[(
                "package.json",
                r#"{"name":"api","main":"src/server.js","scripts":{"build":"tsc"}}"#,
            )],
        );
        assert_eq!(p.command, "node src/server.js");
        assert_eq!(p.build.as_deref(), Some("npm install && npm run build"));
        let (p, _) = loads(
            "python",
            &[
                ("requirements.txt", "fastapi\nuvicorn\n"),
                ("server.py", ""),
            ],
        );
        assert_eq!(
            p.command,
            ".venv/bin/python -m uvicorn server:app --host 127.0.0.1 --port {{port}}"
        );
        let (p, _) = loads(
            "python-plain",
            &[
                ("pyproject.toml", "[project]\nname = \"s\"\n"),
                ("server.py", ""),
            ],
        );
        assert_eq!(p.command, ".venv/bin/python server.py");
        let (p, _) = loads("docker", &[("Dockerfile", "FROM nginx\nEXPOSE 80/tcp\n")]);
        assert!(
            p.command
                .contains("-p 127.0.0.1:{{port}}:80 rigor-rigor-init-docker-"),
            "{}",
            p.command
        );
        let (p, _) = loads("cargo-broken", &[("Cargo.toml", "[package\n")]);
        assert_eq!(p.found, "a Cargo project");
        assert!(p
            .command
            .starts_with("target/release/rigor-init-cargo-broken-"));
        let (p, _) = loads("node-broken", &[("package.json", "{")]);
        assert_eq!(p.command, "node index.js");
        let (p, t) = loads("nothing", &[("README", "hi")]);
        assert_eq!(p.command, "./server");
        assert!(t.contains("no project rigor recognises"), "{t}");
    }

    #[test]
    fn a_workspace_member_starts_the_binary_in_the_workspace_target() {
        let dir = folder(
            "workspace",
            &[
                ("Cargo.toml", "[workspace]\nmembers = [\"svc/api\"]\n"),
                ("svc/api/Cargo.toml", "[package]\nname = \"api\"\n"),
            ],
        );
        let p = detect(&dir.join("svc/api"));
        assert_eq!(p.command, "../../target/release/api");
        assert_eq!(p.artifact.as_deref(), Some("../../target/release/api"));
        let p = detect(&dir);
        assert_eq!(p.found, "a Cargo workspace");
        assert!(p
            .command
            .starts_with("target/release/rigor-init-workspace-"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn cargo_comes_before_a_dockerfile_beside_it() {
        let dir = folder(
            "order",
            &[
                ("Dockerfile", "FROM rust\n"),
                ("Cargo.toml", "[package]\nname = \"a\"\n"),
            ],
        );
        assert!(detect(&dir).found.starts_with("a Cargo project"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_from_the_project_are_quoted_so_the_file_stays_valid_toml() {
        let (p, t) = loads(
            "quotes",
            &[("package.json", r#"{"name":"x","main":"a \"b\".js"}"#)],
        );
        assert_eq!(p.command, "node a \"b\".js");
        assert!(
            t.contains(r#"command = 'node a "b".js'"#)
                || t.contains(r#"command = "node a \"b\".js""#),
            "{t}"
        );
    }
}
