use super::*;
use crate::config::ValueError;
use std::path::Path;

const GOOD: &str = r#"
[variables]
port = 5000

[jobs.hello]
build = "cargo build --release -p hello-server"
artifact = "target/release/hello-server"
command = "target/release/hello-server --port {{port}}"
ready = { http = "http://127.0.0.1:{{port}}/health" }
env = { RUST_LOG = "off" }

[jobs.plaintext]
url = "http://127.0.0.1:{{port}}/plaintext"
connections = 256
pipeline = 16
warmup = "1s"
duration = "2s"

[scenarios.plaintext]
application = "hello"
load = "plaintext"
matrix = { connections = [16, 64], threads = [1, 2] }

[scenarios.plaintext.variants.base]
[scenarios.plaintext.variants.slow]
env = { HELLO_DELAY_US = "50" }
variables = { port = 6000 }

[profiles.local]
application = { cpus = "0" }
load = { cpus = "1" }
"#;

fn parse(text: &str) -> Result<Config, ValueError> {
    Config::parse(Path::new("/tmp/x/rigor.toml"), text.to_string())
        .map_err(|p| p.to_string())
        .map_err(Into::into)
}

/// The error planning `text` gives (the config itself parses).
fn plan_err(text: &str) -> String {
    parse(text)
        .unwrap()
        .plan("plaintext", &req())
        .err()
        .unwrap()
        .to_string()
}

fn req() -> PlanRequest {
    PlanRequest {
        profile: "local".into(),
        ..Default::default()
    }
}

#[test]
fn matrix_and_variants_expand_in_declared_order() {
    let c = parse(GOOD).unwrap();
    let plan = c.plan("plaintext", &req()).unwrap();
    assert_eq!(plan.rows.len(), 8);
    let r0 = &plan.rows[0];
    assert_eq!(r0.variant.as_deref(), Some("base"));
    assert_eq!(r0.work.load().unwrap().spec.connections, 16);
    assert_eq!(r0.work.load().unwrap().spec.threads, 1);
    assert_eq!(r0.work.load().unwrap().spec.pipeline, 16);
    assert_eq!(r0.app.command, "target/release/hello-server --port 5000");
    assert_eq!(r0.app.dir, Path::new("/tmp/x"));
    assert_eq!(r0.app.cpus, Some(vec![0]));
    assert_eq!(r0.work.load().unwrap().spec.cpus, Some(vec![1]));
    let r1 = &plan.rows[1];
    assert_eq!(r1.variant.as_deref(), Some("slow"));
    assert_eq!(r1.app.command, "target/release/hello-server --port 6000");
    assert!(r1.app.env.contains(&("HELLO_DELAY_US".into(), "50".into())));
    assert!(r1.app.env.contains(&("RUST_LOG".into(), "off".into())));
    assert_eq!(
        r1.work.load().unwrap().spec.url,
        "http://127.0.0.1:6000/plaintext"
    );
    assert_eq!(plan.rows[2].work.load().unwrap().spec.threads, 2);
    assert_eq!(plan.rows[4].work.load().unwrap().spec.connections, 64);
}

#[test]
fn cli_vars_win_over_everything() {
    let c = parse(GOOD).unwrap();
    let mut r = req();
    r.cli_vars = vec![("port".into(), "7000".into())];
    r.variants = Some(vec!["slow".into()]);
    let plan = c.plan("plaintext", &r).unwrap();
    assert_eq!(plan.rows.len(), 4);
    assert!(plan.rows[0].app.command.ends_with("7000"));
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let text = GOOD.replace("pipeline = 16", "pipelines = 16");
    let err = parse(&text).err().unwrap();
    assert!(err.0.starts_with("/tmp/x/rigor.toml:15:"), "{err}");
    assert!(
        err.0.contains("jobs.plaintext.pipelines: unknown field"),
        "{err}"
    );
}

#[test]
fn missing_job_is_named() {
    let text = GOOD.replace("load = \"plaintext\"", "load = \"plain\"");
    let err = parse(&text).err().unwrap();
    assert!(
        err.0.contains("scenarios.plaintext.load") && err.0.contains("`plain`"),
        "{err}"
    );
    assert!(err.0.contains("rigor.toml:21:"), "{err}");
}

#[test]
fn undefined_variable_and_bad_duration_are_located() {
    let text = GOOD.replace("--port {{port}}", "--port {{prot}}");
    let err = plan_err(&text);
    assert!(
        err.contains("jobs.hello.command") && err.contains("`prot`"),
        "{err}"
    );
    assert!(err.contains("rigor.toml:8:"), "{err}");
    let text = GOOD.replace("duration = \"2s\"", "duration = \"2 fortnights\"");
    let err = plan_err(&text);
    assert!(err.contains("jobs.plaintext.duration"), "{err}");
    assert!(err.contains("rigor.toml:17:"), "{err}");
}

#[test]
fn unknown_scenario_profile_and_variant_are_named() {
    let c = parse(GOOD).unwrap();
    assert!(c
        .plan("nope", &req())
        .err()
        .unwrap()
        .to_string()
        .contains("plaintext"));
    let mut r = req();
    r.profile = "far".into();
    assert!(c
        .plan("plaintext", &r)
        .err()
        .unwrap()
        .to_string()
        .contains("`far`"));
    let mut r = req();
    r.variants = Some(vec!["fast".into()]);
    let err = c.plan("plaintext", &r).err().unwrap().to_string();
    assert!(
        err.contains("`fast`") && err.contains("base, slow"),
        "{err}"
    );
}

#[test]
fn readiness_defaults_to_a_tcp_connect_on_the_load_url() {
    let text = GOOD.replace(
        "ready = { http = \"http://127.0.0.1:{{port}}/health\" }\n",
        "",
    );
    let plan = parse(&text).unwrap().plan("plaintext", &req()).unwrap();
    assert_eq!(plan.rows[0].app.ready, Ready::Tcp("127.0.0.1:5000".into()));
}

#[test]
fn a_bad_load_url_is_located() {
    let text = GOOD.replace(
        "url = \"http://127.0.0.1:{{port}}/plaintext\"",
        "url = \"gopher://127.0.0.1:{{port}}/plaintext\"",
    );
    let err = plan_err(&text);
    assert!(
        err.contains("rigor.toml:13:")
            && err.contains("jobs.plaintext.url")
            && err.contains("gopher"),
        "{err}"
    );
}

#[test]
fn variants_override_command_build_dir_and_artifact() {
    let text = GOOD.to_string()
        + "[scenarios.plaintext.variants.other]\ncommand = \"./alt --port {{port}}\"\nbuild = \"make alt\"\ndir = \"sub\"\nartifact = \"alt\"\n";
    let root = std::env::temp_dir().join(format!("rigor-variant-dir-{}", std::process::id()));
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let config = Config::parse(&root.join("rigor.toml"), text).unwrap();
    let plan = config.plan("plaintext", &req()).unwrap();
    let other: Vec<_> = plan
        .rows
        .iter()
        .filter(|r| r.variant.as_deref() == Some("other"))
        .collect();
    assert_eq!(other.len(), 4);
    let app = &other[0].app;
    assert_eq!(app.command, "./alt --port 5000");
    assert_eq!(app.build.as_deref(), Some("make alt"));
    assert_eq!(app.dir, root.join("sub"));
    assert_eq!(app.artifact, Some(root.join("sub/alt")));
    let base = &plan.rows[0].app;
    assert_eq!(
        base.build.as_deref(),
        Some("cargo build --release -p hello-server")
    );
    assert_eq!(base.dir, root);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn https_urls_and_insecure_reach_the_load_spec() {
    let text = GOOD.replace(
        "url = \"http://127.0.0.1:{{port}}/plaintext\"",
        "url = \"https://127.0.0.1:{{port}}/plaintext\"\ninsecure = true",
    );
    let plan = parse(&text).unwrap().plan("plaintext", &req()).unwrap();
    let spec = &plan.rows[0].work.load().unwrap().spec;
    assert_eq!(spec.url, "https://127.0.0.1:5000/plaintext");
    assert!(spec.insecure);
    let plan = parse(GOOD).unwrap().plan("plaintext", &req()).unwrap();
    assert!(!plan.rows[0].work.load().unwrap().spec.insecure);
}

#[test]
fn insecure_with_an_http_url_names_the_key() {
    let text = GOOD.replace("pipeline = 16", "pipeline = 16\ninsecure = true");
    let err = plan_err(&text);
    assert!(err.contains("jobs.plaintext.insecure"), "{err}");
    assert!(err.contains("https:// URLs only"), "{err}");
    let text = GOOD.replace("pipeline = 16", "pipeline = 16\ninsecure = \"yes\"");
    let err = parse(&text).err().unwrap();
    assert!(err.0.contains("insecure"), "{err}");
}

#[test]
fn the_io_key_reaches_the_load_spec_and_a_bad_value_names_the_key() {
    let plan = parse(GOOD).unwrap().plan("plaintext", &req()).unwrap();
    let spec = &plan.rows[0].work.load().unwrap().spec;
    assert_eq!(spec.io, rigor_load::IoMode::Auto);
    let text = GOOD.replace("pipeline = 16", "pipeline = 16\nio = \"epoll\"");
    let plan = parse(&text).unwrap().plan("plaintext", &req()).unwrap();
    let spec = &plan.rows[0].work.load().unwrap().spec;
    assert_eq!(spec.io, rigor_load::IoMode::Epoll);
    let text = GOOD.replace("pipeline = 16", "pipeline = 16\nio = \"kqueue\"");
    let err = plan_err(&text);
    assert!(err.contains("jobs.plaintext.io"), "{err}");
    assert!(err.contains("io_uring"), "{err}");
}

#[test]
fn requests_and_stages_reach_the_load_spec_and_mistakes_name_their_key() {
    let text = GOOD.replace(
        "duration = \"2s\"",
        "stages = [{ rate = 100, for = \"1s\" }, { rate = 300, for = \"2s\" }]\n\
         measure = \"stage 2\"\nseed = 4\n\n\
         [[jobs.plaintext.requests]]\nname = \"plain\"\npath = \"/plaintext\"\nweight = 3\n\n\
         [[jobs.plaintext.requests]]\nurl = \"http://127.0.0.1:{{port}}/json\"\nmethod = \"POST\"\nbody = \"{}\"\n",
    );
    let plan = parse(&text).unwrap().plan("plaintext", &req()).unwrap();
    let spec = &plan.rows[0].work.load().unwrap().spec;
    let mix = spec.mix.as_ref().expect("a mix");
    assert_eq!(mix.seed, 4);
    assert_eq!(mix.requests[0].weight, 3);
    assert_eq!(mix.requests[1].name, "post_json");
    assert_eq!(mix.requests[1].path, "/json");
    assert_eq!(spec.stages.len(), 2);
    assert_eq!(spec.stages[1].duration, std::time::Duration::from_secs(2));
    assert_eq!(spec.measure_stage, Some(1));
    assert_eq!(
        spec.duration,
        std::time::Duration::from_secs(2),
        "the measured stage"
    );

    for (fault, needle) in [
        ("method = \"POST\"", "invalid method `GE T`"),
        ("body = \"{}\"", "invalid header name `Bad Name`"),
    ] {
        let bad = text
            .replace("method = \"POST\"", "method = \"GE T\"")
            .replace("body = \"{}\"", "headers = { \"Bad Name\" = \"v\" }");
        let bad = if fault.starts_with("method") {
            bad.replace("headers = { \"Bad Name\" = \"v\" }", "")
        } else {
            bad.replace("method = \"GE T\"", "")
        };
        let err = plan_err(&bad);
        assert!(err.contains("jobs.plaintext.requests"), "{err}");
        assert!(err.contains(needle), "{err}");
    }

    let other = text.replace("http://127.0.0.1:{{port}}/json", "http://127.0.0.1:9/json");
    let err = plan_err(&other);
    assert!(err.contains("jobs.plaintext.requests"), "{err}");
    assert!(err.contains("not on the job's origin"), "{err}");
    let err = plan_err(&text.replace("stage 2", "stage 3"));
    assert!(err.contains("jobs.plaintext.measure"), "{err}");
    assert!(err.contains("only 2 stages"), "{err}");
    let err = plan_err(&text.replace("measure = \"stage 2\"", "rate = 50"));
    assert!(err.contains("give one"), "{err}");
    let err = plan_err(&GOOD.replace("pipeline = 16", "pipeline = 16\nseed = 1"));
    assert!(err.contains("jobs.plaintext.seed"), "{err}");
}

#[test]
fn find_rate_reaches_the_load_job_and_its_faults_name_the_key() {
    let text = GOOD.replace(
        "pipeline = 16",
        "pipeline = 16\nrate = 300\nfind_rate = { slo = \"p99 < 50ms\", max = 5000, precision = \"10%\", probe = \"2s\" }",
    );
    let plan = parse(&text).unwrap().plan("plaintext", &req()).unwrap();
    let find = plan.rows[0].work.load().unwrap().find_rate.clone().unwrap();
    assert_eq!(find.objective.to_string(), "p99<50ms");
    assert_eq!((find.start, find.max, find.precision), (300.0, 5000.0, 0.1));
    assert_eq!(find.probe_duration(), std::time::Duration::from_secs(2));
    for (find_rate, needle) in [
        (
            "{ slo = \"p99<\" }",
            "slo `p99<`: `p99<` has no limit after its operator",
        ),
        ("{ slo = \"p95<1ms\" }", "unknown figure `p95`"),
        (
            "{ slo = \"p99<1ms\", start = 1000, max = 10 }",
            "max 10 rps is below the start rate 1000 rps",
        ),
        (
            "{ slo = \"p99<1ms\", precision = true }",
            "precision `true` is not a number",
        ),
        ("{ slo = \"p99<1ms\", probe = \"soon\" }", "probe `soon`"),
    ] {
        let text = GOOD.replace(
            "pipeline = 16",
            &format!("pipeline = 16\nfind_rate = {find_rate}"),
        );
        let err = plan_err(&text);
        assert!(err.contains("jobs.plaintext.find_rate"), "{err}");
        assert!(err.contains(needle), "{find_rate}: {err}");
    }
    let text = GOOD.replace("pipeline = 16", "pipeline = 16\nfind_rate = { max = 10 }");
    assert!(parse(&text).err().unwrap().0.contains("slo"));
}

#[test]
fn find_rate_with_stages_is_refused_when_the_config_is_read() {
    let text = GOOD.replace("duration = \"2s\"\n", "").replace(
        "pipeline = 16",
        "pipeline = 16\nstages = [{ rate = 100, for = \"1s\" }]\nfind_rate = { slo = \"p99<50ms\" }",
    );
    let err = plan_err(&text);
    assert!(err.contains("jobs.plaintext.find_rate"), "{err}");
    assert!(err.contains("cannot run `stages`"), "{err}");
}
