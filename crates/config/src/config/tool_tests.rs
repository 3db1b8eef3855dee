//! `tool` and `args` on a load job: what is checked when the config is read, each problem
//! named with file, line and key (or the variable that set the key).

use super::*;
use std::path::Path;

const BASE: &str = r#"[jobs.app]
command = "./app"
ready = { tcp = "127.0.0.1:5000" }

[jobs.load]
url = "http://127.0.0.1:5000/"
duration = "2s"
warmup = "1s"
"#;

const SCENARIO: &str = "\n[scenarios.s]\napplication = \"app\"\nload = \"load\"\n";

/// The plan's problems (empty when it plans), or the tool of its first row.
fn plan(load: &str, rest: &str) -> Result<Option<crate::tools::ToolSpec>, Vec<String>> {
    let text = format!("{BASE}{load}{SCENARIO}{rest}");
    let req = PlanRequest {
        profile: "local".into(),
        ..Default::default()
    };
    let c =
        Config::parse(Path::new("/tmp/x/rigor.toml"), text).map_err(|p| p.messages().to_vec())?;
    let plan = c.plan("s", &req).map_err(|p| p.messages().to_vec())?;
    Ok(plan.rows[0].work.load().unwrap().tool.clone())
}

#[test]
fn a_tool_with_its_args_and_variables_is_planned() {
    let t = plan(
        "tool = \"{{client}}\"\nargs = [\"--h1\", \"-T{{t}}\"]\n",
        "[variables]\nclient = \"h2load\"\nt = 5\n",
    )
    .unwrap()
    .unwrap();
    assert_eq!(t.tool, crate::tools::Tool::H2load);
    assert_eq!(t.args, ["--h1", "-T5"]);
    assert_eq!(plan("", "").unwrap(), None);
}

#[test]
fn what_a_tool_cannot_do_is_named_at_the_key_or_the_variable() {
    let e = plan("tool = \"wrk\"\nrate = 10\n", "").unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("/tmp/x/rigor.toml:10: jobs.load.rate: wrk has no rate"),
        "{e:?}"
    );
    let e = plan("tool = \"wrk\"\n", "matrix = { duration = [\"1500ms\"] }\n").unwrap_err();
    assert!(
        e[0].contains("scenarios.s.matrix: duration: wrk takes whole seconds, not 1.500s"),
        "{e:?}"
    );
    let e = plan("tool = \"siege\"\n", "").unwrap_err();
    assert!(
        e[0].contains("jobs.load.tool: unknown load tool `siege`"),
        "{e:?}"
    );
    let e = plan("tool = \"wrk\"\nargs = [\"-H\", \"a\\u0000b\"]\n", "").unwrap_err();
    assert!(
        e[0].starts_with("/tmp/x/rigor.toml:10: jobs.load.args: an argument holds a NUL byte"),
        "{e:?}"
    );
    let e = plan("tool = \"oha\"\nbody = \"a\\u0000b\"\n", "").unwrap_err();
    assert!(
        e[0].contains("jobs.load.body: oha takes the body as a command-line option"),
        "{e:?}"
    );
    let e = plan("args = [\"--h1\"]\n", "").unwrap_err();
    assert!(
        e[0].contains("jobs.load.args: `args` are options for a load `tool`"),
        "{e:?}"
    );
}

#[test]
fn a_tool_runs_on_load_hosts() {
    let t = plan(
        "tool = \"wrk\"\n",
        "[hosts.h1]\ntransport = \"docker exec -i c\"\n[profiles.local]\nload = { hosts = [\"h1\"] }\n",
    )
    .unwrap()
    .unwrap();
    assert_eq!(t.tool, crate::tools::Tool::Wrk);
}
