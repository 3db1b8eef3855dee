//! A load tool run by an agent, without ssh: the transport is `env …`, which runs the agent on
//! this machine, so the protocol's `run_tool` runs as it would on a load host: the tool's command
//! line built there, its raw output, exit status and CPU sent back; a tool that is not installed
//! there is an error naming the host and how to install it.

use crate::agent_support;
use rigor_agent as agent;
use rigor_agent::AgentError;

use agent::install::LocalBinary;
use agent::protocol::{SpecWire, ToolJobWire};
use agent::Agent;
use agent_support::{local_host, server};
use hello_server::Server;
use rigor_load::LoadSpec;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

fn temp_dir(name: &str) -> PathBuf {
    agent_support::temp_dir("agent-tools", name)
}

/// Whether `program` is on PATH.
fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

fn job(tool: &str, srv: &Server, rate: Option<f64>) -> ToolJobWire {
    let spec = LoadSpec {
        url: format!("http://{}/plaintext", srv.addr()),
        connections: 2,
        threads: 1,
        duration: Duration::from_secs(1),
        rate,
        ..LoadSpec::default()
    };
    ToolJobWire {
        tool: tool.into(),
        args: vec![],
        spec: SpecWire::from(&spec),
        length_ns: 1_000_000_000,
        own_warmup_ns: None,
    }
}

/// Polls tool run `id` until it ends (or 30 s pass).
fn outcome(a: &mut Agent, id: &str) -> Result<agent::protocol::ToolRunWire, AgentError> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(run) = a.poll_tool(id, Duration::from_millis(100))? {
            return Ok(run);
        }
        assert!(Instant::now() < deadline, "no outcome of {id}");
    }
}

#[test]
fn an_agent_runs_wrk_and_sends_back_its_output() {
    if !installed("wrk") {
        println!("test-skip: needs wrk: an_agent_runs_wrk_and_sends_back_its_output");
        return;
    }
    let srv = server();
    let cache = temp_dir("wrk");
    let bin = LocalBinary::new(Path::new(env!("CARGO_BIN_EXE_rigor"))).unwrap();
    let mut a = Agent::connect_with(&local_host("load1", &cache), &bin).unwrap();
    a.start_tool(
        "t1",
        &job("wrk", &srv, None),
        SystemTime::now() + Duration::from_millis(200),
    )
    .unwrap();
    let run = outcome(&mut a, "t1").unwrap();
    assert!(run.success, "{run:?}");
    assert_eq!(run.command[..5], ["wrk", "-c", "2", "-t", "1"], "{run:?}");
    assert!(run.output.contains("Requests/sec:"), "{}", run.output);
    assert!(run.cpu_secs.is_some_and(|c| c > 0.0), "{run:?}");
    assert!(run
        .version
        .as_deref()
        .is_some_and(|v| v.starts_with("wrk ")));
    // The scratch folder under the agent's work dir is gone.
    let work = cache.join("rigor").join("work");
    let left: Vec<_> = std::fs::read_dir(&work)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_tool_missing_on_the_host_is_an_error_naming_the_host() {
    if installed("wrk2") {
        println!(
            "test-skip: needs a machine without wrk2: \
             a_tool_missing_on_the_host_is_an_error_naming_the_host"
        );
        return;
    }
    let srv = server();
    let cache = temp_dir("missing");
    let bin = LocalBinary::new(Path::new(env!("CARGO_BIN_EXE_rigor"))).unwrap();
    let mut a = Agent::connect_with(&local_host("load1", &cache), &bin).unwrap();
    let start = SystemTime::now() + Duration::from_millis(200);
    a.start_tool("t1", &job("wrk2", &srv, Some(100.0)), start)
        .unwrap();
    let e = outcome(&mut a, "t1").unwrap_err();
    assert!(matches!(e, AgentError::Refused { .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.starts_with("host load1: wrk2 is not installed: `wrk2` is not on PATH"),
        "{e}"
    );
    // The agent carries on: an unknown tool is refused the same way.
    a.start_tool("t2", &job("ab", &srv, None), start).unwrap();
    let e = outcome(&mut a, "t2").unwrap_err();
    let e = e.to_string();
    assert!(e.contains("host load1: unknown load tool `ab`"), "{e}");
}
