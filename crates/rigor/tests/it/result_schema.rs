//! docs/rigor.run.v1.schema.json describes what `rigor run` really writes: a short run of the
//! testbed with two variants, a build and a declared measurement (so builds, comparisons and
//! declarations are present, not just rows) validates against it, and copies of that result with
//! a required field removed, a wrong type, an unknown field or a verdict outside the enum do not.
//! A run whose build fails writes its row-level `build_error` in the same schema.

use crate::common;
use common::*;
use jsonschema::Validator;
use serde_json::{json, Value};

/// The schema file, checked against the JSON Schema meta-schema before it is used.
fn validator() -> Validator {
    let path = workspace().join("docs/rigor.run.v1.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
        panic!("the schema is not valid JSON Schema 2020-12: {e}");
    }
    jsonschema::draft202012::new(&schema).expect("the schema compiles")
}

/// Breaks a copy of a result in one place.
type Mutation = fn(&mut Value);

/// Every error as `instance path: message`.
fn errors(validator: &Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// A run of about two seconds: two variants × two short iterations, one shared build.
fn real_result() -> Value {
    let port = free_port();
    let dir = temp_dir("result-schema");
    let app = format!("build = \"true\"\nmetrics = \"http://127.0.0.1:{port}/metrics\"");
    let toml = with_app(&config(port, "", "/plaintext", ""), &app)
        .replace("warmup = \"300ms\"", "warmup = \"100ms\"")
        .replace("duration = \"1s\"", "duration = \"300ms\"")
        + r#"
[scenarios.s.variants.base]
[scenarios.s.variants.other]
variables = { unused = "1" }

[measurements."cmd.msgs_per_sec"]
unit = "1/s"
direction = "higher"
"#;
    let (_, json) = run_exit(&dir, &toml, &["-i", "2", "--allow-inconclusive"], 0);
    let json = json.expect("result.json");
    // The parts the schema is meant to check are really there.
    for part in ["builds", "rows", "comparisons"] {
        assert!(
            json[part].as_array().is_some_and(|a| !a.is_empty()),
            "{part} is empty: {json:#}"
        );
    }
    assert!(
        json["measurements"]["cmd.msgs_per_sec"].is_object(),
        "{json:#}"
    );
    assert!(iterations(&json)[0]["load"].is_object(), "{json:#}");
    assert!(iterations(&json)[0]["metrics_scrapes"].is_u64(), "{json:#}");
    assert!(
        iterations(&json)[0]["series"]["load"].is_object(),
        "{json:#}"
    );
    json
}

#[test]
fn a_real_result_matches_the_schema_and_broken_copies_do_not() {
    let validator = validator();
    let result = real_result();
    let found = errors(&validator, &result);
    assert!(
        found.is_empty(),
        "a real result.json breaks the schema:\n{}",
        found.join("\n")
    );

    let mutations: [(&str, Mutation); 6] = [
        ("/rows/0/iterations/0", |v| {
            v["rows"][0]["iterations"][0]
                .as_object_mut()
                .unwrap()
                .remove("index");
        }),
        ("/status", |v| v["status"] = json!(5)),
        ("/rows/0", |v| v["rows"][0]["label"] = json!("made up")),
        ("/comparisons/0/verdict", |v| {
            v["comparisons"][0]["verdict"] = json!("better")
        }),
        ("/builds/0/artifact_hash", |v| {
            v["builds"][0]["artifact_hash"] = json!("md5:0")
        }),
        ("/rows/0/iterations/0/load", |v| {
            v["rows"][0]["iterations"][0]["load"]["latency"]["p99_ms"] = json!("4 ms")
        }),
    ];
    for (at, mutate) in mutations {
        let mut broken = result.clone();
        mutate(&mut broken);
        let found = errors(&validator, &broken);
        assert!(
            found.iter().any(|e| e.starts_with(at)),
            "breaking {at} was not caught: {found:?}"
        );
    }
}

#[test]
fn a_failed_build_is_a_row_level_error_the_schema_accepts() {
    let validator = validator();
    let port = free_port();
    let dir = temp_dir("result-schema-build-error");
    let toml = with_app(
        &config(port, "", "/plaintext", ""),
        "build = \"echo no compiler here >&2; exit 3\"",
    );
    let (_, json) = run_exit(&dir, &toml, &["-i", "1"], 1);
    let json = json.expect("result.json");
    assert!(
        json["rows"][0]["build_error"].is_string(),
        "no build_error on the row: {json:#}"
    );
    let found = errors(&validator, &json);
    assert!(found.is_empty(), "{}", found.join("\n"));
    let mut broken = json.clone();
    broken["rows"][0]["build_error"] = json!(["not", "a", "string"]);
    assert!(errors(&validator, &broken)
        .iter()
        .any(|e| e.starts_with("/rows/0/build_error")));
}

#[test]
fn a_run_with_the_application_and_the_load_on_a_host_matches_the_schema() {
    let port = free_port();
    let dir = temp_dir("result-schema-hosts");
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(hello_server(), src.join("hello-server.bin")).unwrap();
    // The host is this machine, reached through `env`: its agent builds, starts and loads.
    let toml = format!(
        r#"
[jobs.app]
dir = {src}
build = "cp hello-server.bin app && chmod +x app"
artifact = "app"
command = "./app --port {port} --threads 1"
ready = {{ http = "http://127.0.0.1:{port}/health", timeout = "10s" }}

[jobs.load]
url = "http://127.0.0.1:{port}/plaintext"
connections = 2
warmup = "100ms"
duration = "300ms"

[scenarios.s]
application = "app"
load = "load"

[hosts.h1]
transport = {transport}

[profiles.lab]
application = {{ host = "h1" }}
load = {{ hosts = ["h1"] }}
"#,
        src = toml_string(&src.display().to_string()),
        transport = toml_string(&format!(
            "env XDG_CACHE_HOME={}",
            dir.join("cache").display()
        )),
    );
    let (_, json) = run_exit(&dir, &toml, &["-p", "lab", "-i", "1"], 0);
    let json = json.expect("result.json");
    let it = &iterations(&json)[0];
    assert!(it["load"]["hosts"]["h1"]["report"].is_object(), "{json:#}");
    assert!(json["environment"]["hosts"]["h1"].is_object(), "{json:#}");
    let found = errors(&validator(), &json);
    assert!(
        found.is_empty(),
        "a result with hosts breaks the schema:\n{}",
        found.join("\n")
    );
}
