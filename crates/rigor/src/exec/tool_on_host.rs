//! A load tool run by the agent on its host: the tool is run there exactly as a local run runs
//! it (no shell, its own process group, pinned to the share's `cpus`, reaped with wait4 for its
//! CPU), with its scratch files under the agent's work dir, and its raw output sent back whole.

use super::tool_child::{self, ToolProcess};
use crate::tools::{Invocation, Tool, ToolSpec};
use rigor_agent::tool_wire::{ToolJobWire, ToolRunWire};
use std::path::Path;
use std::time::Duration;

/// The agent's [`rigor_agent::tool_wire::ToolRunner`]: runs `job` in a fresh folder under the
/// agent's work dir.
pub fn run_in_work_dir(
    job: &ToolJobWire,
    id: &str,
    cancelled: &dyn Fn() -> bool,
) -> Result<ToolRunWire, rigor_agent::ServiceError> {
    run(job, &super::AppHost::default_root(), id, cancelled).map_err(|e| format!("{e:#}").into())
}

/// Runs `job` in a fresh folder under `work` (removed afterwards) until it exits or
/// `cancelled` says stop; a tool that is not installed here, or cannot start, is an error
/// saying so (with how to install it).
pub fn run(
    job: &ToolJobWire,
    work: &Path,
    id: &str,
    cancelled: &dyn Fn() -> bool,
) -> anyhow::Result<ToolRunWire> {
    let tool = Tool::from_name(&job.tool).map_err(anyhow::Error::msg)?;
    tool_child::check_identity(tool)?;
    let spec = job.spec.to_spec().map_err(anyhow::Error::msg)?;
    let ts = ToolSpec {
        tool,
        args: job.args.clone(),
    };
    let dir = work.join(format!("tool-{}-{}", std::process::id(), safe(id)));
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let outcome = run_in(&ts, job, &spec, &dir, cancelled);
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

fn run_in(
    ts: &ToolSpec,
    job: &ToolJobWire,
    spec: &rigor_load::LoadSpec,
    dir: &Path,
    cancelled: &dyn Fn() -> bool,
) -> anyhow::Result<ToolRunWire> {
    let length = Duration::from_nanos(job.length_ns);
    let own_warmup = job.own_warmup_ns.map(Duration::from_nanos);
    let inv = Invocation::new(ts, spec, length, own_warmup, dir);
    let mut p = ToolProcess::spawn(ts.tool, &inv, spec.cpus.as_deref(), dir, "run")?;
    let exit = p.wait(|_| !cancelled());
    let (output, stderr) = p.output();
    if let Some(why) = p.overrun(ts.tool) {
        return Err(anyhow::anyhow!(
            "{why}: `{}`\n{}",
            inv.command_line().join(" "),
            crate::tools::report::tail(&output, &stderr, 12)
        ));
    }
    Ok(ToolRunWire {
        command: inv.command_line(),
        output,
        stderr,
        exit: exit.to_string(),
        success: exit.success(),
        wall_secs: p.wall().as_secs_f64(),
        cpu_secs: p.cpu_ns().map(|ns| ns as f64 / 1e9),
        cores: super::tool_load::cores(ts, spec),
        version: tool_child::version(ts.tool),
    })
}

/// `id` with anything but letters, digits and `-` replaced: a folder name that stays inside
/// the work dir.
fn safe(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_cannot_lead_outside_the_work_dir() {
        assert_eq!(safe("../../etc"), "______etc");
        assert_eq!(safe("tool-3"), "tool-3");
    }
}
