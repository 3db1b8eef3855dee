//! The measured load of one iteration when the load job names an external `tool`: an
//! unmeasured warmup run first (unless the tool warms up itself), then the measured run, with
//! the application watched (a crash or an interrupt stops the tool), the sampler and the
//! metrics scraper marking the window, and the machine watched over the span. The tool's
//! figures go under the engine's `load.*` ids; its command line and raw output go in the
//! iteration's `tool`, kept even when the run fails.

use super::iteration_context::Watched;
use super::readings::{AppCpu, MachineWatch};
use super::tool_child::{self, ToolProcess};
use crate::config::LoadJob;
use crate::measurements::ids;
use crate::result::{Iteration, Warning, WarningKind};
use crate::tools::report::{tail, ToolReport, WarmupReport};
use crate::tools::{Invocation, ToolSpec};
use rigor_model::tool::ToolRecord;
use rigor_probe::Mark;
use std::path::Path;
use std::time::Duration;

/// Lines of the tool's output an error quotes.
const TAIL_LINES: usize = 12;

/// What the iteration's load needs besides the job and the tool.
pub(super) struct Around<'a> {
    /// The application (here or on its host), watched for a crash and marked at the window's
    /// edges.
    pub app: &'a mut dyn Watched,
    pub app_cpu: AppCpu<'a>,
    pub scraper: Option<&'a mut crate::metrics::Scraper>,
    pub status: &'a dyn Fn(&str),
    /// The iteration's log: the tool's outputs and files go beside it.
    pub log: &'a Path,
}

/// Runs the tool's warmup and measured runs; the iteration's error says why one failed, with
/// the tail of what the tool printed.
pub(super) fn load(
    job: &LoadJob,
    tool: &ToolSpec,
    it: &mut Iteration,
    w: Around,
) -> anyhow::Result<()> {
    let Around {
        app,
        app_cpu,
        mut scraper,
        status,
        log,
    } = w;
    let spec = &job.spec;
    let name = tool.tool.name();
    let dir = log.parent().unwrap_or(Path::new("."));
    let stem = log
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "iteration".into());
    let cpus = spec.cpus.as_deref();
    tool_child::check_identity(tool.tool)?;
    let mut machine = MachineWatch::start(app_cpu, super::readings::Client::Elsewhere);
    let mut crashed = None;
    let cut = |app: &mut dyn Watched, crashed: &mut Option<String>| {
        if crashed.is_none() {
            *crashed = app.exited();
        }
        crashed.is_some() || crate::interrupt::interrupted()
    };
    let cause = |crashed: &Option<String>, app: &dyn Watched| match crashed {
        Some(st) => Some(format!(
            "the application crashed during the load ({st})\n{}",
            app.log_tail()
        )),
        None if crate::interrupt::interrupted() => Some("interrupted during the load".into()),
        None => None,
    };
    let warmup = if !tool.tool.warms_up_itself() && !spec.warmup.is_zero() {
        status(&format!("warmup ({name})"));
        let inv = Invocation::new(tool, spec, spec.warmup, None, dir);
        let mut p =
            ToolProcess::spawn(tool.tool, &inv, cpus, dir, &format!("{stem}.{name}-warmup"))?;
        machine.client(super::readings::Client::Tool(p.pid));
        let exit = p.wait(|_| {
            machine.tick();
            !cut(app, &mut crashed)
        });
        let (output, stderr) = p.output();
        if let Some(why) = cause(&crashed, app) {
            anyhow::bail!(why);
        }
        if let Some(why) = p.overrun(tool.tool) {
            return Err(anyhow::anyhow!(
                "{why} (warmup run): `{}`\n{}",
                inv.command_line().join(" "),
                tail(&output, &stderr, TAIL_LINES)
            ));
        }
        // A count no run can reach (a misprint) is no count: left out, never added.
        let requests = tool
            .tool
            .parse(&output)
            .ok()
            .and_then(|f| f.requests)
            .filter(|n| crate::tools::whole_count(*n).is_some());
        if !exit.success() {
            return Err(anyhow::anyhow!(
                "{name} (warmup run) exited with {exit}: `{}`\n{}",
                inv.command_line().join(" "),
                tail(&output, &stderr, TAIL_LINES)
            ));
        }
        it.outside_window.requests = it
            .outside_window
            .requests
            .saturating_add(requests.and_then(crate::tools::whole_count).unwrap_or(0));
        Some(WarmupReport {
            command: inv.command_line(),
            output,
            stderr,
            exit: exit.to_string(),
            requests,
        })
    } else {
        None
    };
    let own_warmup = tool
        .tool
        .warms_up_itself()
        .then_some(spec.warmup)
        .filter(|w| !w.is_zero());
    let inv = Invocation::new(tool, spec, spec.duration, own_warmup, dir);
    let mut p = ToolProcess::spawn(tool.tool, &inv, cpus, dir, &format!("{stem}.{name}"))?;
    machine.client(super::readings::Client::Tool(p.pid));
    let mut marked = false;
    let exit = p.wait(|elapsed| {
        machine.tick();
        if !marked && elapsed >= own_warmup.unwrap_or(Duration::ZERO) {
            app.mark(Mark::WindowStart);
            if let Some(m) = scraper.as_mut() {
                m.window_start();
            }
            marked = true;
        }
        if let Some(m) = scraper.as_mut().filter(|_| marked) {
            m.tick(spec.duration);
        }
        status(&format!("{name} {:.0}s", elapsed.as_secs_f64()));
        !cut(app, &mut crashed)
    });
    if marked {
        // The sampler's edge first: a slow metrics page must not widen the window.
        app.mark(Mark::WindowEnd);
        if let Some(m) = scraper.as_mut() {
            m.window_end();
        }
    }
    it.machine = Some(machine.finish(app_cpu, &mut it.warnings));
    let (output, stderr) = p.output();
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
    it.tool = Some(ToolRecord::One(Box::new(report.clone())));
    if let Some(why) = cause(&crashed, app) {
        anyhow::bail!(why);
    }
    let quoted = || tail(&report.output, &report.stderr, TAIL_LINES);
    if let Some(why) = p.overrun(tool.tool) {
        return Err(anyhow::anyhow!(
            "{why}: `{}`\n{}",
            report.command.join(" "),
            quoted()
        ));
    }
    if !exit.success() {
        return Err(anyhow::anyhow!(
            "{name} exited with {exit}: `{}`\n{}",
            report.command.join(" "),
            quoted()
        ));
    }
    let figures =
        parsed.map_err(|e| anyhow::anyhow!("cannot read {name}'s output: {e}\n{}", quoted()))?;
    if let Some(why) = report.impossible_claim(Some(spec.duration.as_secs_f64())) {
        return Err(anyhow::anyhow!("{why}\n{}", quoted()));
    }
    it.measurements.extend(figures.measurements());
    if let Some(pct) = report.cpu_pct() {
        it.measurements.insert(ids::LOAD_CPU.into(), pct);
    }
    guards(&report, &figures.measurements(), &mut it.warnings);
    Ok(())
}

/// The cores `load.cpu` is a share of: the CPUs the tool may use, and no more than its threads
/// for the tools that take `threads` (all but bombardier).
pub(crate) fn cores(tool: &ToolSpec, spec: &rigor_load::LoadSpec) -> usize {
    let cpus = spec
        .cpus
        .as_ref()
        .map_or_else(|| rigor_load::allowed_cpu_list().len(), Vec::len)
        .max(1);
    if tool.tool.takes_threads() {
        cpus.min(spec.threads.max(1))
    } else {
        cpus
    }
}

/// The engine's warnings, said of the tool's figures: a saturated client, errors, bad
/// statuses, no response at all.
pub(crate) fn guards(
    report: &ToolReport,
    m: &std::collections::BTreeMap<String, f64>,
    warnings: &mut Vec<Warning>,
) {
    saturation(report, warnings);
    counts(&report.tool, m, warnings);
}

/// `client_saturated` when the tool used 90% or more of its cores.
pub(crate) fn saturation(report: &ToolReport, warnings: &mut Vec<Warning>) {
    if let Some(pct) = report.cpu_pct().filter(|p| *p >= 90.0) {
        warnings.push(Warning::of(
            WarningKind::ClientSaturated,
            format!(
                "{} used {pct:.0}% of its {} core(s): the figures may measure the client, \
                 not the server",
                report.tool, report.cores
            ),
        ));
    }
}

/// The warnings on the tool's counts: errors, bad statuses, no response at all.
pub(crate) fn counts(
    tool: &str,
    m: &std::collections::BTreeMap<String, f64>,
    warnings: &mut Vec<Warning>,
) {
    if let Some(n) = m.get(ids::LOAD_SOCKET_ERRORS).filter(|n| **n > 0.0) {
        warnings.push(Warning::of(
            WarningKind::LoadErrors,
            format!("{tool} counted {n} socket errors (see load.errors.* and its output)"),
        ));
    }
    if let Some(n) = m.get(ids::LOAD_BAD_RESPONSES).filter(|n| **n > 0.0) {
        warnings.push(Warning::of(
            WarningKind::BadResponses,
            format!("{n} responses were not 2xx or 3xx ({tool})"),
        ));
    }
    if m.get(ids::LOAD_REQUESTS) == Some(&0.0) {
        warnings.push(Warning::of(
            WarningKind::NoResponses,
            format!("{tool} completed no request"),
        ));
    }
}
