//! `rigor load --tool NAME`: an external tool run once on the flags' load (after an unmeasured
//! warmup run when it does not warm up itself), its own output shown as it printed it, then
//! rigor's reading of it under the `load.*` ids, and `--json` with the tool's report (command
//! line, version, raw output). Ctrl-C stops the tool with SIGINT (wrk and oha then print what
//! they measured) and exits 130.

use crate::console;
use crate::exec::tool_child::{self, ToolProcess};
use crate::exec::tool_load::{cores, guards};
use crate::exit::Exit;
use crate::failure::Failure;
use crate::options::load::LoadOptions;
use crate::tools::report::{tail, ToolReport, WarmupReport};
use crate::tools::{Invocation, ToolSpec};
use std::path::Path;

/// Runs the tool: 0 when it ran to its end, 130 when interrupted; a tool that is missing,
/// fails or prints what cannot be read is a failure quoting its output.
pub fn run(options: &LoadOptions, tool: &ToolSpec) -> Result<Exit, Failure> {
    crate::interrupt::install();
    tool_child::adopt_orphans();
    let dir = std::env::temp_dir().join(format!("rigor-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let outcome = drive(options, tool, &dir);
    if let Some(left) = tool_child::sweep_leftovers() {
        console::err(&format!(
            "warning: [left_behind] {} left processes running after it exited; they were \
             killed: {left}",
            tool.tool.name()
        ));
    }
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

fn drive(options: &LoadOptions, tool: &ToolSpec, dir: &Path) -> Result<Exit, Failure> {
    let spec = &options.spec;
    let name = tool.tool.name();
    let human = |t: &str| crate::load_output::human(options, t);
    let failed = |m: String| Failure::Failed(anyhow::anyhow!(m));
    tool_child::check_identity(tool.tool)?;
    let warmup = if !tool.tool.warms_up_itself() && !spec.warmup.is_zero() {
        let inv = Invocation::new(tool, spec, spec.warmup, None, dir);
        human(&format!("warmup: {}\n", inv.command_line().join(" ")));
        let (p, exit) = run_one(tool, &inv, options, dir, "warmup")?;
        let (output, stderr) = p.output();
        if crate::interrupt::interrupted() {
            console::err("rigor: interrupted during the warmup; nothing was measured");
            return Ok(Exit::Interrupted);
        }
        if !exit.success() {
            return Err(failed(format!(
                "{name} (warmup run) exited with {exit}\n{}",
                tail(&output, &stderr, 12)
            )));
        }
        Some(WarmupReport {
            command: inv.command_line(),
            requests: tool.tool.parse(&output).ok().and_then(|f| f.requests),
            output,
            stderr,
            exit: exit.to_string(),
        })
    } else {
        None
    };
    let own_warmup = tool.tool.warms_up_itself().then_some(spec.warmup);
    let inv = Invocation::new(tool, spec, spec.duration, own_warmup, dir);
    human(&format!("rigor: {}\n", inv.command_line().join(" ")));
    let (p, exit) = run_one(tool, &inv, options, dir, "run")?;
    let (output, stderr) = p.output();
    human(&output);
    let parsed = tool.tool.parse(&output);
    let report = ToolReport {
        tool: name.to_string(),
        version: tool_child::version(tool.tool),
        command: inv.command_line(),
        aborted_at_deadline: (tool.tool == crate::tools::Tool::Oha)
            .then(|| crate::tools::oha_aborted(&output)),
        figures: parsed.clone().unwrap_or_default(),
        output,
        stderr,
        exit: exit.to_string(),
        wall_secs: p.wall().as_secs_f64(),
        cpu_secs: p.cpu_ns().map(|ns| ns as f64 / 1e9),
        cores: cores(tool, spec),
        warmup,
    };
    let interrupted = crate::interrupt::interrupted();
    if !exit.success() && !interrupted {
        return Err(failed(format!(
            "{name} exited with {exit}: `{}`\n{}",
            report.command.join(" "),
            tail(&report.output, &report.stderr, 12)
        )));
    }
    let figures = match parsed {
        Ok(f) => f,
        Err(_) if interrupted => {
            console::err(&format!("rigor: interrupted; {name} printed no summary"));
            return Ok(Exit::Interrupted);
        }
        Err(e) => {
            return Err(failed(format!(
                "cannot read {name}'s output: {e}\n{}",
                tail(&report.output, &report.stderr, 12)
            )))
        }
    };
    let asked = (!interrupted).then_some(spec.duration.as_secs_f64());
    if let Some(why) = report.impossible_claim(asked) {
        return Err(failed(format!(
            "{why}\n{}",
            tail(&report.output, &report.stderr, 12)
        )));
    }
    let mut m = figures.measurements();
    if let Some(pct) = report.cpu_pct() {
        m.insert(crate::measurements::ids::LOAD_CPU.into(), pct);
    }
    human(&reading(&report, &m));
    let mut warnings = Vec::new();
    guards(&report, &m, &mut warnings);
    for w in &warnings {
        console::err(&format!("warning: [{}] {}", w.kind.as_str(), w.message));
    }
    if let Some(out) = &options.json {
        let doc = serde_json::json!({
            "schema": crate::load_output::LOAD_SCHEMA,
            "measurements": m,
            "report": null,
            "tool": report,
        });
        crate::load_output::write_doc(&doc, out)?;
    }
    if interrupted {
        console::err(&format!(
            "rigor: load interrupted; the figures above cover what {name} measured until then"
        ));
        return Ok(Exit::Interrupted);
    }
    Ok(Exit::Success)
}

/// Runs one invocation to its end (or until Ctrl-C), with a live line on a terminal.
fn run_one(
    tool: &ToolSpec,
    inv: &Invocation,
    options: &LoadOptions,
    dir: &Path,
    stem: &str,
) -> anyhow::Result<(ToolProcess, std::process::ExitStatus)> {
    let mut p = ToolProcess::spawn(tool.tool, inv, options.spec.cpus.as_deref(), dir, stem)?;
    let exit = p.wait(|_| !crate::interrupt::interrupted());
    if let Some(why) = p.overrun(tool.tool) {
        let (output, stderr) = p.output();
        anyhow::bail!(
            "{why}: `{}`\n{}",
            inv.command_line().join(" "),
            tail(&output, &stderr, 12)
        );
    }
    Ok((p, exit))
}

/// rigor's reading of the output: each id it found, and the tool's CPU.
fn reading(report: &ToolReport, m: &std::collections::BTreeMap<String, f64>) -> String {
    let mut s = format!("rigor read from {}:\n", report.tool);
    for id in crate::measurements::order(m.keys().cloned()) {
        let label = crate::measurements::label(&id);
        s.push_str(&format!(
            "  {label:<28} {}\n",
            crate::report::format::number(m[&id])
        ));
    }
    s
}
