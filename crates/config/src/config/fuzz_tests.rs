//! Arbitrary TOML-ish text through parsing and planning: whatever the file says, the answer is a
//! config or a list of problems, never a panic. A seeded generator keeps failures reproducible.

use super::resolve_load::LOAD_KEYS;
use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;

const TABLES: &[&str] = &[
    "[variables]",
    "[jobs.app]",
    "[jobs.load]",
    "[jobs.app.ready]",
    "[jobs.app.env]",
    "[jobs.load.headers]",
    "[jobs.load.validate]",
    "[scenarios.s]",
    "[scenarios.s.matrix]",
    "[scenarios.s.variants.v]",
    "[scenarios.s.variants.w]",
    "[profiles.local]",
    "[profiles.local.load]",
    "[profiles.local.application]",
    "[[jobs]]",
    "[",
    "[jobs.\"x y\"]",
];

/// The keys the generator writes: these, then the load keys, then `TAIL_KEYS`.
const HEAD_KEYS: &[&str] = &[
    "port",
    "n",
    "dir",
    "build",
    "artifact",
    "command",
    "ready",
    "ready_timeout",
    "stop_timeout",
    "build_timeout",
    "env",
    "versions",
    "configuration",
    "url",
];

const TAIL_KEYS: &[&str] = &[
    "method",
    "headers",
    "body",
    "validate",
    "application",
    "load",
    "iterations",
    "variables",
    "matrix",
    "variants",
    "cpus",
    "priority",
    "http",
    "tcp",
    "stdout",
    "stderr",
    "status",
    "body_contains",
    "\"quoted key\"",
    "a.b",
    "ünï",
];

/// One key drawn from all the generator writes.
fn key(rng: &mut StdRng) -> &'static str {
    let keys = [HEAD_KEYS, LOAD_KEYS, TAIL_KEYS].concat();
    keys[rng.random_range(0..keys.len())]
}

const STRINGS: &[&str] = &[
    "",
    "0",
    "1",
    "0s",
    "1s",
    "250ms",
    "99999999999999999999999h",
    "18446744074s",
    "24h",
    "1e9s",
    "-1s",
    "nan",
    "inf",
    "0-99999999999",
    "0-1",
    "5000",
    "0,",
    "-",
    "{{port}}",
    "{{n}}",
    "{{",
    "}}",
    "{{ }}",
    "{{{{port}}}}",
    "http://127.0.0.1:{{port}}/",
    "http://[::1]:0/",
    "https://x/",
    "http://",
    "127.0.0.1:5000",
    "localhost",
    "G T",
    "GET",
    "high",
    "normal",
    "X: y",
    "\\u0000",
    "ü{{port}}ß",
    "\\r\\n",
    "app",
    "load",
    "s",
    "v",
    ".",
    "/",
    "..",
];

fn scalar(rng: &mut StdRng) -> String {
    match rng.random_range(0..8) {
        0 => [
            "0",
            "-1",
            "1",
            "18446744073709551615",
            "99999999999999999999999",
            "9223372036854775807",
        ][rng.random_range(0..6)]
        .to_string(),
        1 => ["1.5", "1e308", "-0.0", "nan", "inf", "-inf"][rng.random_range(0..6)].to_string(),
        2 => ["true", "false"][rng.random_range(0..2)].to_string(),
        3 => "1979-05-27T07:32:00Z".to_string(),
        _ => format!("\"{}\"", STRINGS[rng.random_range(0..STRINGS.len())]),
    }
}

fn value(rng: &mut StdRng, depth: u32) -> String {
    match rng.random_range(0..10) {
        0 | 1 if depth < 3 => {
            let n = rng.random_range(0..4);
            let items: Vec<String> = (0..n).map(|_| value(rng, depth + 1)).collect();
            format!("[{}]", items.join(", "))
        }
        2 | 3 if depth < 3 => {
            let n = rng.random_range(0..4);
            let items: Vec<String> = (0..n)
                .map(|_| format!("{} = {}", key(rng), value(rng, depth + 1)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        _ => scalar(rng),
    }
}

/// A random document: sometimes a good config with noise added, sometimes noise alone.
fn document(rng: &mut StdRng) -> String {
    if rng.random_bool(0.5) {
        return substituted(rng);
    }
    let mut text = if rng.random_bool(0.6) {
        GOOD.to_string()
    } else {
        String::new()
    };
    for _ in 0..rng.random_range(0..12) {
        if rng.random_bool(0.3) {
            text.push_str(TABLES[rng.random_range(0..TABLES.len())]);
        } else {
            text.push_str(&format!("{} = {}", key(rng), value(rng, 0)));
        }
        text.push('\n');
    }
    // Byte-level damage at character boundaries.
    for _ in 0..rng.random_range(0..3) {
        let at = rng.random_range(0..=text.len());
        if text.is_char_boundary(at) {
            let c = [
                '"', '[', ']', '{', '}', '=', '\n', ',', '#', '\'', 'é', '\0',
            ][rng.random_range(0..12)];
            text.insert(at, c);
        }
    }
    text
}

/// The good config with some values replaced by random ones (reaches planning more often).
fn substituted(rng: &mut StdRng) -> String {
    let mut text = String::new();
    for line in GOOD.lines() {
        match line.split_once(" = ") {
            Some((key, _)) if rng.random_bool(0.15) => {
                let v = if rng.random_bool(0.6) {
                    format!("\"{}\"", STRINGS[rng.random_range(0..STRINGS.len())])
                } else {
                    value(rng, 0)
                };
                text.push_str(&format!("{key} = {v}"));
            }
            _ => text.push_str(line),
        }
        text.push('\n');
        if line.starts_with("[jobs.load]") && rng.random_bool(0.5) {
            let keys = [LOAD_KEYS, &["method", "body"]].concat();
            let key = keys[rng.random_range(0..keys.len())];
            text.push_str(&format!("{key} = {}\n", value(rng, 0)));
        }
    }
    text
}

const GOOD: &str = r#"[variables]
port = 5000
[jobs.app]
command = "./app --port {{port}}"
ready = { http = "http://127.0.0.1:{{port}}/health" }
[jobs.load]
url = "http://127.0.0.1:{{port}}/"
[scenarios.s]
application = "app"
load = "load"
matrix = { connections = [1, 2] }
[scenarios.s.variants.v]
[scenarios.s.variants.w]
variables = { port = 6000 }
[profiles.local]
load = { cpus = "0" }
"#;

#[test]
fn arbitrary_documents_give_a_config_or_problems_never_a_panic() {
    let mut rng = StdRng::seed_from_u64(0x0072_6967_6f72);
    let limits = Limits {
        online_cpus: Some(vec![0, 1]),
        max_open_files: Some(4096),
    };
    let mut planned = 0;
    for _ in 0..4000 {
        let text = document(&mut rng);
        let Ok(config) = Config::parse(Path::new("/tmp/fuzz/rigor.toml"), text.clone()) else {
            continue;
        };
        for scenario in config.scenario_names() {
            let req = PlanRequest {
                profile: ["local", "other"][rng.random_range(0..2)].into(),
                cli_vars: vec![(
                    "port".into(),
                    STRINGS[rng.random_range(0..STRINGS.len())].into(),
                )],
                variants: rng
                    .random_bool(0.3)
                    .then(|| vec!["v".to_string(), "w".to_string(), "v".to_string()]),
                limits: limits.clone(),
            };
            if let Err(p) = config.plan(&scenario, &req) {
                assert!(!p.is_empty(), "an error without a problem for:\n{text}");
            }
            planned += 1;
        }
    }
    assert!(
        planned > 500,
        "the generator should reach planning often ({planned})"
    );
}
