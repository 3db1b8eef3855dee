//! Bad configs: each problem is found while planning, named with file, line and key, and all of
//! them are listed together.

use super::*;
use std::path::Path;

const BASE: &str = r#"[variables]
port = 5000

[jobs.app]
command = "./app --port {{port}}"
ready = { tcp = "127.0.0.1:{{port}}" }

[jobs.load]
url = "http://127.0.0.1:{{port}}/"
duration = "2s"

[scenarios.s]
application = "app"
load = "load"
"#;

fn limits() -> Limits {
    Limits {
        online_cpus: Some(vec![0, 1]),
        max_open_files: Some(1024),
    }
}

/// Every problem planning `text` gives, one per line.
fn problems(text: &str) -> Vec<String> {
    let req = PlanRequest {
        profile: "local".into(),
        limits: limits(),
        ..Default::default()
    };
    // As `rigor run` gathers them: the file's problems and the plan's, in line order.
    let path = Path::new("/tmp/x/rigor.toml");
    match Config::parse_all(path, text.to_string()) {
        Err(p) => p.messages().to_vec(),
        Ok((c, mut found)) => {
            if let Err(p) = c.plan("s", &req) {
                found.extend(p);
            }
            found.sort_by_line(path);
            found.messages().to_vec()
        }
    }
}

fn one(text: &str) -> String {
    let p = problems(text);
    assert_eq!(p.len(), 1, "{p:#?}");
    p[0].clone()
}

#[test]
fn every_problem_is_listed_with_its_line_and_key() {
    let text = BASE
        .replace("duration = \"2s\"", "duration = \"0s\"\nmethod = \"G T\"\nheaders = { \"X Y\" = \"1\" }\nconnections = 100000\ntimeout = \"99999999999999999999999h\"")
        .replace("command = ", "dir = \"no-such-folder\"\ncommand = ");
    let p = problems(&text);
    let expect = [
        ("rigor.toml:5: jobs.app.dir", "does not exist"),
        (
            "rigor.toml:14: jobs.load.connections",
            "open-file limit is 1024",
        ),
        (
            "rigor.toml:11: jobs.load.duration",
            "must be more than zero",
        ),
        ("rigor.toml:15: jobs.load.timeout", "limit of 24h"),
        ("rigor.toml:13: jobs.load.headers", "`X Y`"),
        ("rigor.toml:12: jobs.load.method", "`G T`"),
    ];
    for (at, what) in expect {
        assert!(
            p.iter().any(|m| m.contains(at) && m.contains(what)),
            "{at} {what} missing in {p:#?}"
        );
    }
    assert_eq!(p.len(), expect.len(), "{p:#?}");
}

#[test]
fn a_variable_that_expands_to_itself_is_named() {
    let text = BASE.replace("port = 5000", "port = \"{{port}}\"");
    let p = problems(&text);
    assert!(
        p.iter()
            .any(|m| m.contains("jobs.app.command") && m.contains("`port` refers to itself")),
        "{p:#?}"
    );
}

#[test]
fn profile_cpus_are_checked_against_the_machine_and_named() {
    let text = BASE.to_string() + "[profiles.local]\napplication = { cpus = \"5000\" }\nload = { cpus = \"7\", priority = \"max\" }\n";
    let p = problems(&text);
    assert_eq!(p.len(), 3, "{p:#?}");
    assert!(p[0].contains("rigor.toml:16: profiles.local.application") && p[0].contains("5000"));
    assert!(p[1].contains("priority `max`"), "{p:#?}");
    assert!(
        p[2].contains("rigor.toml:17: profiles.local.load") && p[2].contains("CPU 7 is not online")
    );
    let nested = BASE.to_string() + "[profiles.local.load]\ncpus = \"3\"\n";
    assert!(one(&nested).contains("rigor.toml:16: profiles.local.load.cpus"));
}

#[test]
fn matrix_values_are_checked_per_row_and_point_at_the_matrix() {
    let text =
        BASE.to_string() + "matrix = { connections = [8, 0, 5000], warmup = [\"1s\", \"-1s\"] }\n";
    let p = problems(&text);
    assert_eq!(p.len(), 3, "{p:#?}");
    assert!(
        p.iter()
            .all(|m| m.contains("rigor.toml:15: scenarios.s.matrix")),
        "{p:#?}"
    );
    assert!(p.iter().any(|m| m.contains("connections: `0`")));
    assert!(p
        .iter()
        .any(|m| m.contains("connections: `5000` is more than")));
    assert!(p
        .iter()
        .any(|m| m.contains("warmup: invalid duration `-1s`")));
}

#[test]
fn a_huge_matrix_is_counted_not_built() {
    let values = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
    let keys: Vec<String> = "abcdefg"
        .chars()
        .map(|k| format!("{k} = {values}"))
        .collect();
    let text = BASE.to_string() + &format!("matrix = {{ {} }}\n", keys.join(", "));
    let start = std::time::Instant::now();
    let m = one(&text);
    assert!(start.elapsed().as_secs() < 5);
    assert!(
        m.contains("10000000 rows") && m.contains("scenarios.s.matrix"),
        "{m}"
    );
}

#[test]
fn a_list_where_one_value_belongs_says_what_was_expected() {
    let m = one(&BASE.replace("duration = \"2s\"", "connections = [1, 2]"));
    assert!(!m.contains("untagged"), "{m}");
    assert!(m.contains("rigor.toml:10") && m.contains("matrix"), "{m}");
}

#[test]
fn bad_readiness_status_and_env_are_found() {
    let text = BASE.replace(
        "ready = { tcp = \"127.0.0.1:{{port}}\" }",
        "ready = { tcp = \"localhost\", timeout = \"0s\" }\nenv = { \"A=B\" = \"1\" }",
    ) + "[jobs.load.validate]\nstatus = 1000\n";
    let p = problems(&text);
    assert_eq!(p.len(), 4, "{p:#?}");
    assert!(p
        .iter()
        .any(|m| m.contains("jobs.app.ready") && m.contains("HOST:PORT")));
    assert!(p
        .iter()
        .any(|m| m.contains("jobs.app.ready") && m.contains("more than zero")));
    assert!(p
        .iter()
        .any(|m| m.contains("jobs.app.env") && m.contains("`A=B`")));
    assert!(p
        .iter()
        .any(|m| m.contains("jobs.load.validate") && m.contains("1000")));
}

#[test]
fn missing_roles_are_all_reported() {
    let text = BASE
        .replace("application = \"app\"\n", "")
        .replace("url = \"http://127.0.0.1:{{port}}/\"\n", "");
    let p = problems(&text);
    assert_eq!(p.len(), 2, "{p:#?}");
    // In line order: `[jobs.load]` comes before `[scenarios.s]`.
    assert!(p[0].contains("jobs.load") && p[0].contains("needs `url`"));
    assert!(p[1].contains("scenarios.s") && p[1].contains("missing `application`"));
}

#[test]
fn a_lone_matrix_value_says_a_list_was_expected() {
    let m = one(&(BASE.to_string() + "matrix = { connections = 16 }\n"));
    assert!(
        m.contains("rigor.toml:15") && m.contains("a list of values"),
        "{m}"
    );
}

#[test]
fn engine_limits_are_checked_while_planning() {
    let text = BASE.replace(
        "duration = \"2s\"",
        "timeout = \"2h\"\nconnections = 5000\npipeline = 1000\nthreads = 5000\nrate = 1e13",
    );
    let req = PlanRequest {
        profile: "local".into(),
        limits: Limits {
            online_cpus: None,
            max_open_files: Some(1 << 20),
        },
        ..Default::default()
    };
    let c = Config::parse(Path::new("/tmp/x/rigor.toml"), text).unwrap();
    let p = c.plan("s", &req).unwrap_err().messages().to_vec();
    assert_eq!(p.len(), 4, "{p:#?}");
    assert!(p
        .iter()
        .any(|m| m.contains("rigor.toml:10: jobs.load.timeout") && m.contains("3600s")));
    assert!(p
        .iter()
        .any(|m| m.contains("rigor.toml:14: jobs.load.rate") && m.contains("1e12")));
    assert!(p.iter().any(
        |m| m.contains("rigor.toml:12: jobs.load.pipeline") && m.contains("requests in flight")
    ));
    assert!(p
        .iter()
        .any(|m| m.contains("rigor.toml:13: jobs.load.threads: `5000` is more than 1024")));
}

#[test]
fn every_string_is_expanded_and_variant_env_problems_point_at_the_variant() {
    let text = BASE.to_string()
        + "[jobs.load.validate]\nbody_contains = \"{{nope}}\"\n[scenarios.s.variants.v]\nenv = { \"A=B\" = \"1\" }\n";
    let p = problems(&text);
    assert_eq!(p.len(), 2, "{p:#?}");
    assert!(p[0].contains("rigor.toml:15: jobs.load.validate") && p[0].contains("`nope`"));
    assert!(
        p[1].contains("rigor.toml:18: scenarios.s.variants.v.env") && p[1].contains("`A=B`"),
        "{p:#?}"
    );
}

#[test]
fn range_errors_of_overridden_load_keys_point_at_the_variable() {
    let req = |vars: &[(&str, &str)]| PlanRequest {
        profile: "local".into(),
        cli_vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        limits: Limits {
            online_cpus: None,
            max_open_files: Some(1 << 20),
        },
        ..Default::default()
    };
    let c = Config::parse(Path::new("/tmp/x/rigor.toml"), BASE.to_string()).unwrap();
    let p = c.plan("s", &req(&[("timeout", "2h")])).unwrap_err();
    assert_eq!(p.len(), 1, "{p}");
    assert!(p.messages()[0].starts_with("--var timeout: "), "{p}");
    assert!(p.messages()[0].contains("3600s"), "{p}");
    let p = c
        .plan("s", &req(&[("connections", "5000"), ("pipeline", "1000")]))
        .unwrap_err();
    assert_eq!(p.len(), 1, "{p}");
    assert!(p.messages()[0].starts_with("--var pipeline: "), "{p}");
    assert!(p.messages()[0].contains("requests in flight"), "{p}");
    let variant = BASE.to_string() + "[scenarios.s.variants.v]\nvariables = { timeout = \"2h\" }\n";
    let c = Config::parse(Path::new("/tmp/x/rigor.toml"), variant).unwrap();
    let p = c.plan("s", &req(&[])).unwrap_err();
    assert!(
        p.messages()[0].contains("rigor.toml:16: scenarios.s.variants.v.variables: timeout:"),
        "{p}"
    );
}

#[test]
fn wrong_types_unknown_keys_and_semantic_problems_are_listed_at_once_in_line_order() {
    let text = BASE.replace("duration = \"2s\"", "duration = \"0s\"\nconections = 8")
        + "iterations = 0\nbogus = 1\n[measurements.\"cmd.x\"]\ndirection = \"up\"\nunit = 5\n\
           [measurements.\"load.rps\"]\ndir = \"x\"\ndirection = \"lower\"\n";
    let (config, mut p) =
        Config::parse_all(Path::new("/tmp/x/rigor.toml"), text).expect("no syntax error");
    // The entries that are right are still planned: their rows' problems join the list.
    let req = PlanRequest {
        profile: "local".into(),
        ..Default::default()
    };
    if let Err(more) = config.plan("s", &req) {
        p.extend(more);
    }
    p.sort_by_line(Path::new("/tmp/x/rigor.toml"));
    let lines: Vec<&str> = p
        .messages()
        .iter()
        .map(|m| m.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "/tmp/x/rigor.toml:10",
            "/tmp/x/rigor.toml:11",
            "/tmp/x/rigor.toml:16",
            "/tmp/x/rigor.toml:17",
            "/tmp/x/rigor.toml:19",
            "/tmp/x/rigor.toml:20",
            "/tmp/x/rigor.toml:22",
            "/tmp/x/rigor.toml:23",
        ],
        "{p}"
    );
    let all = p.to_string();
    for what in [
        "jobs.load.duration: `0s` must be more than zero",
        "jobs.load.conections: unknown field",
        "scenarios.s.iterations: must be at least 1",
        "scenarios.s.bogus: unknown field",
        "measurements.\"cmd.x\".direction: direction must be",
        "measurements.\"cmd.x\".unit: invalid type: integer `5`",
        "measurements.\"load.rps\".dir: unknown field",
        "measurements.\"load.rps\".direction: `load.rps` is rigor's own",
    ] {
        assert!(all.contains(what), "{what} missing in {all}");
    }
    // A syntax error is the one problem that stops the reading.
    let err = Config::parse_all(Path::new("/tmp/x/rigor.toml"), "[jobs\n".into())
        .err()
        .unwrap();
    assert_eq!(err.len(), 1, "{err}");
}

#[test]
fn a_vanishing_rate_is_rejected_while_planning() {
    let m = one(&BASE.replace("duration = \"2s\"", "duration = \"2s\"\nrate = 1e-300"));
    assert!(m.contains("jobs.load.rate") && m.contains("0.001"), "{m}");
}

#[test]
fn hosts_are_checked_where_they_are_written() {
    let text = BASE.to_string()
        + r#"
[hosts.local]
ssh = "me@there"

[hosts.evil]
ssh = "-oProxyCommand=touch /tmp/pwned"

[hosts.both]
ssh = "a@b"
transport = "docker exec -i c"

[hosts.neither]
port = 22

[hosts.pod]
transport = "kubectl exec -i p --"
identity = "id"

[hosts."web.1"]
ssh = "a@b"
port = 0
"#;
    let p = problems(&text);
    let has = |what: &str, line: usize| {
        assert!(
            p.iter()
                .any(|m| m.contains(&format!("rigor.toml:{line}: ")) && m.contains(what)),
            "no `{what}` at line {line}: {p:#?}"
        )
    };
    has("hosts.local: `local` is this machine", 16);
    has(
        "hosts.evil.ssh: `-oProxyCommand=touch /tmp/pwned` starts with `-`",
        20,
    );
    has(
        "hosts.both.transport: give `ssh` or `transport`, not both",
        24,
    );
    has("hosts.neither: a host needs `ssh", 26);
    has("hosts.pod.identity: `identity` belongs to `ssh`", 31);
    // A quoted table name is found by its key, not its line.
    let unlocated = |what: &str| assert!(p.iter().any(|m| m.contains(what)), "{p:#?}");
    unlocated("hosts.web.1: `web.1` is not a host name rigor can use in measurement ids");
    unlocated("hosts.web.1.port: port 0 is not a port");
}

#[test]
fn a_role_names_hosts_that_exist_once_each() {
    let hosts = "[hosts.load1]\nssh = \"root@10.0.0.2\"\n";
    let unknown =
        format!("{BASE}{hosts}[profiles.local]\nload = {{ hosts = [\"load1\", \"nope\"] }}\n");
    assert!(
        one(&unknown).contains("profiles.local.load: no host named `nope` (hosts: local, load1)")
    );
    let twice =
        format!("{BASE}{hosts}[profiles.local]\nload = {{ hosts = [\"load1\", \"load1\"] }}\n");
    assert!(one(&twice).contains("`load1` is named twice"));
    let empty = format!("{BASE}{hosts}[profiles.local]\nload = {{ hosts = [] }}\n");
    assert!(one(&empty).contains("an empty list"));
    // The application may run on a host of its own.
    let app = format!("{BASE}{hosts}[profiles.local]\napplication = {{ host = \"load1\" }}\n");
    assert_eq!(problems(&app), Vec::<String>::new());
    let app_list =
        format!("{BASE}{hosts}[profiles.local]\napplication = {{ hosts = [\"load1\"] }}\n");
    assert!(one(&app_list).contains("use `host = \"NAME\"`"));
    // A remote load role's CPUs are the load host's, not this machine's.
    let remote_cpus =
        format!("{BASE}{hosts}[profiles.local]\nload = {{ hosts = [\"load1\"], cpus = \"7\" }}\n");
    assert_eq!(problems(&remote_cpus), Vec::<String>::new());
}

#[test]
fn a_load_role_on_hosts_plans_each_host_with_its_key_made_absolute() {
    let dir = std::env::temp_dir().join(format!("rigor-hosts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("key"), "k").unwrap();
    let text = format!(
        "{BASE}[hosts.a]\nssh = \"root@10.0.0.2\"\nport = 2222\nidentity = \"key\"\noptions = [\"-o\", \"ConnectTimeout=3\"]\n\
         [hosts.b]\ntransport = \"docker exec -i c\"\n[profiles.lab]\nload = {{ hosts = [\"a\", \"local\", \"b\"] }}\n"
    );
    let req = PlanRequest {
        profile: "lab".into(),
        limits: limits(),
        ..Default::default()
    };
    let c = Config::parse(&dir.join("rigor.toml"), text).unwrap();
    let plan = c.plan("s", &req).unwrap();
    let Work::Load(load) = &plan.rows[0].work else {
        panic!("not a load row")
    };
    let names: Vec<&str> = load.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["a", "local", "b"]);
    assert_eq!(
        load.hosts[0].identity.as_deref(),
        Some(dir.join("key").as_path())
    );
    assert_eq!(load.hosts[0].port, Some(2222));
    assert_eq!(load.hosts[0].options, ["-o", "ConnectTimeout=3"]);
    assert_eq!(load.hosts[2].transport.as_deref(), Some("docker exec -i c"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_open_file_limit_bounds_the_connections_this_machine_holds() {
    // Limit 1024: 960 connections fit one process here.
    let conns = |n: u32, profile: &str| {
        let text = BASE.replace(
            "duration = \"2s\"",
            &format!("duration = \"2s\"\nconnections = {n}"),
        );
        problems(&format!(
            "{text}[hosts.h1]\ntransport = \"env\"\n[hosts.h2]\ntransport = \"env\"\n{profile}"
        ))
    };
    assert!(conns(2000, "")[0].contains("open-file limit is 1024"));
    // Only other hosts load: each host's engine checks its own limit.
    assert_eq!(
        conns(
            100_000,
            "[profiles.local]\nload = { hosts = [\"h1\", \"h2\"] }\n"
        ),
        Vec::<String>::new()
    );
    // This machine is one of three hosts: it holds a third.
    let with_local = "[profiles.local]\nload = { hosts = [\"h1\", \"local\", \"h2\"] }\n";
    assert_eq!(conns(2000, with_local), Vec::<String>::new());
    let too_many = conns(5000, with_local);
    assert!(
        too_many.len() == 1 && too_many[0].contains("3 load hosts share them"),
        "{too_many:#?}"
    );
}

#[test]
fn a_host_gives_its_own_source_addresses() {
    let text = format!(
        "{BASE}[hosts.a]\ntransport = \"env\"\nsource_addrs = \"127.0.1.1-127.0.1.3\"\n\
         [hosts.b]\ntransport = \"env\"\n[profiles.lab]\nload = {{ hosts = [\"a\", \"b\"] }}\n"
    );
    let req = PlanRequest {
        profile: "lab".into(),
        limits: limits(),
        ..Default::default()
    };
    let c = Config::parse(Path::new("/tmp/x/rigor.toml"), text).unwrap();
    let plan = c.plan("s", &req).unwrap();
    let Work::Load(load) = &plan.rows[0].work else {
        panic!("not a load row")
    };
    let a: Vec<String> = load.hosts[0]
        .source_addrs
        .iter()
        .map(|a| a.to_string())
        .collect();
    assert_eq!(a, ["127.0.1.1", "127.0.1.2", "127.0.1.3"]);
    assert!(load.hosts[1].source_addrs.is_empty());
    let bad =
        format!("{BASE}[hosts.a]\ntransport = \"env\"\nsource_addrs = \"127.0.0.9-127.0.0.1\"\n");
    assert!(one(&bad)
        .contains("hosts.a.source_addrs: `127.0.0.9-127.0.0.1`: the range ends before it starts"));
}

#[test]
fn too_many_streams_in_flight_are_named_at_streams() {
    let text = BASE.replace(
        "duration = \"2s\"",
        "duration = \"2s\"\nhttp2 = true\nconnections = 5000\nstreams = 1000",
    );
    let req = PlanRequest {
        profile: "local".into(),
        limits: Limits {
            max_open_files: Some(1 << 20),
            ..limits()
        },
        ..Default::default()
    };
    let c = Config::parse(Path::new("/tmp/x/rigor.toml"), text).unwrap();
    let p = c.plan("s", &req).unwrap_err().messages().to_vec();
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("jobs.load.streams") && p[0].contains("requests in flight"),
        "{p:?}"
    );
}

#[test]
fn io_uring_with_https_or_http2_is_named_at_io() {
    for (extra, what) in [
        ("io = \"io_uring\"\nhttp2 = true", "HTTP/2"),
        (
            "io = \"io_uring\"\nurl = \"https://127.0.0.1:{{port}}/\"",
            "https://",
        ),
    ] {
        let text = BASE
            .replace("url = \"http://127.0.0.1:{{port}}/\"\n", "")
            .replace("duration = \"2s\"", &format!("duration = \"2s\"\n{extra}"));
        let text = if text.contains("url =") {
            text
        } else {
            text.replace(
                "[jobs.load]\n",
                "[jobs.load]\nurl = \"http://127.0.0.1:{{port}}/\"\n",
            )
        };
        let p = problems(&text);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("jobs.load.io") && p[0].contains(what),
            "{p:?}"
        );
    }
}
