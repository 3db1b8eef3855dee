//! A load tool run by the load role's hosts: each host's agent runs the tool installed there on
//! that host's share of the connections (and of the rate), all at one start instant on their own
//! clocks, first an unmeasured warmup run (unless the tool warms up itself), then the measured
//! run. The raw outputs come back and are read here with the same parser as a local run's; the
//! hosts' figures are merged where they add up exactly ([`crate::tools::merge`]) and kept apart
//! as `load.hosts.NAME.*`.

use super::iteration_context::Watched;
use super::load_hosts;
use super::readings::MachineWatch;
use super::tool_load::{counts, saturation, Around};
use crate::config::LoadJob;
use crate::measurements::{host_share_id, ids};
use crate::result::{Iteration, Warning, WarningKind};
use crate::tools::report::{tail, ToolReport, WarmupReport};
use crate::tools::{merge, Tool, ToolSpec};
use rigor_agent::client::ClockOffset;
use rigor_agent::protocol::{HostPath, SpecWire, ToolJobWire, ToolRunWire};
use rigor_agent::Agent;
use rigor_load::LoadSpec;
use rigor_model::tool::{HostToolRun, HostsToolReport, ToolRecord};
use rigor_probe::Mark;
use std::time::{Duration, Instant};

/// Lines of a tool's output an error quotes.
const TAIL_LINES: usize = 12;

/// What each host's tool gave, and how its clock and path were.
struct HostRun {
    name: String,
    run: ToolRunWire,
    warmup: Option<WarmupReport>,
    offset: ClockOffset,
    environment: serde_json::Value,
    network: HostPath,
}

/// The application and the window's watchers while the hosts run the tool.
struct Watch<'a, 'b> {
    app: &'a mut dyn Watched,
    machine: &'a mut MachineWatch,
    scraper: Option<&'a mut crate::metrics::Scraper>,
    status: &'b dyn Fn(&str),
    crashed: Option<String>,
}

impl Watch<'_, '_> {
    /// Whether the run may go on: not when the application crashed or the user interrupted.
    fn go_on(&mut self) -> bool {
        self.machine.tick();
        if self.crashed.is_none() {
            self.crashed = self.app.exited();
        }
        self.crashed.is_none() && !crate::interrupt::interrupted()
    }

    /// Why the load stopped early, if it did.
    fn cause(&self) -> Option<String> {
        match &self.crashed {
            Some(st) => Some(format!(
                "the application crashed during the load ({st})\n{}",
                self.app.log_tail()
            )),
            None if crate::interrupt::interrupted() => Some("interrupted during the load".into()),
            None => None,
        }
    }
}

/// Runs the tool on the load job's hosts and records the merged and per-host figures; the
/// iteration's error names the host whose tool failed (not installed there, exited non-zero,
/// printed what cannot be read).
pub(super) fn load(
    job: &LoadJob,
    tool: &ToolSpec,
    app_host: Option<&str>,
    it: &mut Iteration,
    w: Around,
) -> anyhow::Result<()> {
    let Around {
        app,
        app_cpu,
        scraper,
        status,
        log: _,
    } = w;
    let spec = &job.spec;
    let shares = shares(tool.tool, spec, job.hosts.len());
    let mut machine = MachineWatch::start(app_cpu, super::readings::Client::Elsewhere);
    let mut watch = Watch {
        app,
        machine: &mut machine,
        scraper,
        status,
        crashed: None,
    };
    let ran = load_hosts::with_agents(&job.hosts, &spec.url, app_host, |agents, paths| {
        drive(agents, paths, tool, spec, &shares, &mut watch, it)
    });
    let cause = watch.cause();
    drop(watch);
    it.machine = Some(machine.finish(app_cpu, &mut it.warnings));
    if let Some(why) = cause {
        anyhow::bail!(why);
    }
    record(tool.tool, &ran?, it)
}

/// The warmup run on every host (when the tool does not warm up itself), then the measured run,
/// with the window marked on the application while it is open.
fn drive(
    agents: &mut [Agent],
    paths: Vec<HostPath>,
    tool: &ToolSpec,
    spec: &LoadSpec,
    shares: &[LoadSpec],
    watch: &mut Watch,
    it: &mut Iteration,
) -> anyhow::Result<Vec<HostRun>> {
    let name = tool.tool.name();
    let mut warmups: Vec<Option<WarmupReport>> = agents.iter().map(|_| None).collect();
    if !tool.tool.warms_up_itself() && !spec.warmup.is_zero() {
        (watch.status)(&format!("warmup ({name} on {} hosts)", agents.len()));
        let (runs, _) = phase(agents, tool, shares, spec.warmup, None, spec, &mut |_| {
            watch.go_on()
        })?;
        if watch.cause().is_some() {
            anyhow::bail!("stopped during the warmup");
        }
        for ((a, run), kept) in agents.iter().zip(runs).zip(warmups.iter_mut()) {
            if !run.success {
                return Err(anyhow::anyhow!(
                    "host {}: {name} (warmup run) exited with {}: `{}`\n{}",
                    a.name(),
                    run.exit,
                    run.command.join(" "),
                    tail(&run.output, &run.stderr, TAIL_LINES)
                ));
            }
            // A count no run can reach (a misprint) is no count: left out, never added.
            let requests = tool
                .tool
                .parse(&run.output)
                .ok()
                .and_then(|f| f.requests)
                .filter(|n| crate::tools::whole_count(*n).is_some());
            it.outside_window.requests = it
                .outside_window
                .requests
                .saturating_add(requests.and_then(crate::tools::whole_count).unwrap_or(0));
            *kept = Some(WarmupReport {
                command: run.command,
                output: run.output,
                stderr: run.stderr,
                exit: run.exit,
                requests,
            });
        }
    }
    let own_warmup = tool
        .tool
        .warms_up_itself()
        .then_some(spec.warmup)
        .filter(|w| !w.is_zero());
    let mut marked = false;
    let (runs, offsets) = phase(
        agents,
        tool,
        shares,
        spec.duration,
        own_warmup,
        spec,
        &mut |started| {
            let go_on = watch.go_on();
            let now = Instant::now();
            if !marked && now >= started + own_warmup.unwrap_or(Duration::ZERO) {
                watch.app.mark(Mark::WindowStart);
                if let Some(m) = watch.scraper.as_mut() {
                    m.window_start();
                }
                marked = true;
            }
            if let Some(m) = watch.scraper.as_mut().filter(|_| marked) {
                m.tick(spec.duration);
            }
            let ran = now.saturating_duration_since(started).as_secs_f64();
            (watch.status)(&format!("{name} on {} hosts {ran:.0}s", shares.len()));
            go_on
        },
    )?;
    if marked {
        // The sampler's edge first: a slow metrics page must not widen the window.
        watch.app.mark(Mark::WindowEnd);
        if let Some(m) = watch.scraper.as_mut() {
            m.window_end();
        }
    }
    Ok(agents
        .iter()
        .zip(runs)
        .zip(warmups)
        .zip(offsets)
        .zip(paths)
        .map(|((((a, run), warmup), offset), network)| HostRun {
            name: a.name().to_string(),
            run,
            warmup,
            offset,
            environment: serde_json::to_value(a.host_info()).unwrap_or_default(),
            network,
        })
        .collect())
}

/// One run of the tool on every host at a common start: each host's outcome and clock offset.
/// `tick` is called every 20 ms or so with the start instant; when it says stop, every host is
/// told to stop its tool (whose output still comes).
fn phase(
    agents: &mut [Agent],
    tool: &ToolSpec,
    shares: &[LoadSpec],
    length: Duration,
    own_warmup: Option<Duration>,
    spec: &LoadSpec,
    tick: &mut dyn FnMut(Instant) -> bool,
) -> anyhow::Result<(Vec<ToolRunWire>, Vec<ClockOffset>)> {
    let (offsets, start, started) = load_hosts::common_start(agents)?;
    let id = load_hosts::next_id();
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    for (a, share) in agents.iter_mut().zip(shares) {
        let job = ToolJobWire {
            tool: tool.tool.name().into(),
            args: tool.args.clone(),
            spec: SpecWire::from(share),
            length_ns: nanos(length),
            own_warmup_ns: own_warmup.map(nanos),
        };
        a.start_tool(&id, &job, start).map_err(anyhow::Error::msg)?;
    }
    // wrk rounds its duration up to whole seconds; its own timeout can hold the end too.
    let deadline = started
        + own_warmup.unwrap_or_default()
        + length
        + Duration::from_secs(1)
        + spec.timeout
        + load_hosts::REPORT_GRACE;
    let mut runs: Vec<Option<ToolRunWire>> = agents.iter().map(|_| None).collect();
    let mut cancelled = false;
    while runs.iter().any(Option::is_none) {
        if !tick(started) && !cancelled {
            for a in agents.iter_mut() {
                let _ = a.cancel(&id);
            }
            cancelled = true;
        }
        for (a, r) in agents.iter_mut().zip(runs.iter_mut()) {
            if r.is_none() {
                *r = a
                    .poll_tool(&id, Duration::from_millis(20))
                    .map_err(anyhow::Error::msg)?;
            }
        }
        if Instant::now() > deadline {
            let late: Vec<&str> = agents
                .iter()
                .zip(&runs)
                .filter(|(_, r)| r.is_none())
                .map(|(a, _)| a.name())
                .collect();
            return Err(anyhow::anyhow!(
                "no outcome of {} from {} {:.0}s after its run should have ended",
                tool.tool.name(),
                late.join(", "),
                (spec.timeout + load_hosts::REPORT_GRACE).as_secs_f64()
            ));
        }
    }
    Ok((runs.into_iter().flatten().collect(), offsets))
}

/// Reads each host's output, keeps every host's report in the iteration's `tool`, and records
/// the merged figures, each host's own, and the warnings; a host whose tool failed is named.
fn record(tool: Tool, runs: &[HostRun], it: &mut Iteration) -> anyhow::Result<()> {
    let name = tool.name();
    let mut kept = std::collections::BTreeMap::new();
    let mut parsed = Vec::new();
    for h in runs {
        let r = &h.run;
        let figures = tool.parse(&r.output);
        let report = ToolReport {
            tool: name.to_string(),
            version: r.version.clone(),
            command: r.command.clone(),
            output: r.output.clone(),
            stderr: r.stderr.clone(),
            exit: r.exit.clone(),
            wall_secs: r.wall_secs,
            cpu_secs: r.cpu_secs,
            cores: r.cores,
            figures: figures.clone().unwrap_or_default(),
            aborted_at_deadline: (tool == Tool::Oha).then(|| crate::tools::oha_aborted(&r.output)),
            warmup: h.warmup.clone(),
        };
        kept.insert(
            h.name.clone(),
            HostToolRun {
                report: report.clone(),
                clock_offset_ms: h.offset.offset_ns as f64 / 1e6,
                clock_rtt_ms: h.offset.rtt.as_secs_f64() * 1e3,
                environment: h.environment.clone(),
                network: serde_json::to_value(&h.network).unwrap_or_default(),
            },
        );
        parsed.push((h, report, figures));
    }
    let hosts = HostsToolReport {
        tool: name.to_string(),
        hosts: kept,
        figures: None,
    };
    it.tool = Some(ToolRecord::Hosts(Box::new(hosts)));
    let mut parts = Vec::new();
    for (h, report, figures) in &parsed {
        let quoted = || tail(&report.output, &report.stderr, TAIL_LINES);
        if !h.run.success {
            return Err(anyhow::anyhow!(
                "host {}: {name} exited with {}: `{}`\n{}",
                h.name,
                report.exit,
                report.command.join(" "),
                quoted()
            ));
        }
        let f = figures.clone().map_err(|e| {
            anyhow::anyhow!(
                "host {}: cannot read {name}'s output: {e}\n{}",
                h.name,
                quoted()
            )
        })?;
        if let Some(why) = report.impossible_claim(None) {
            return Err(anyhow::anyhow!("host {}: {why}\n{}", h.name, quoted()));
        }
        parts.push(f);
    }
    let merged = merge::merge(&parts);
    let m = merged.measurements();
    it.measurements.extend(m.clone());
    if let Some(pct) = pooled_cpu(&parsed.iter().map(|(_, r, _)| r).collect::<Vec<_>>()) {
        it.measurements.insert(ids::LOAD_CPU.into(), pct);
    }
    for ((h, report, _), f) in parsed.iter().zip(&parts) {
        let mut own = f.measurements();
        if let Some(pct) = report.cpu_pct() {
            own.insert(ids::LOAD_CPU.into(), pct);
        }
        for (id, v) in own {
            it.measurements.insert(host_share_id(&h.name, &id), v);
        }
        let mut said = Vec::new();
        saturation(report, &mut said);
        for mut w in said {
            w.message = format!("load host {}: {}", h.name, w.message);
            it.warnings.push(w);
        }
    }
    counts(name, &m, &mut it.warnings);
    if let Some(why) = merge::unmerged_latency(tool, &parts) {
        it.warnings
            .push(Warning::of(WarningKind::LatencyNotMerged, why));
    }
    if let Some(ToolRecord::Hosts(h)) = it.tool.as_mut() {
        h.figures = Some(merged);
    }
    Ok(())
}

/// `load.cpu` of the hosts together: their tools' CPU over their wall time on their cores, as
/// the engine's hosts pool theirs (absent when a host's CPU is unknown).
fn pooled_cpu(reports: &[&ToolReport]) -> Option<f64> {
    let cpu: f64 = reports.iter().map(|r| r.cpu_secs).sum::<Option<f64>>()?;
    let capacity: f64 = reports.iter().map(|r| r.wall_secs * r.cores as f64).sum();
    (capacity > 0.0).then(|| 100.0 * cpu / capacity)
}

/// `spec` cut into `n` hosts' shares as the engine's are ([`load_hosts::shares`]); for the
/// tools that take a whole number of requests per second (wrk2's `-R`, bombardier's `-r`), the
/// rounded rate is dealt out in whole numbers that add up to it.
pub(super) fn shares(tool: Tool, spec: &LoadSpec, n: usize) -> Vec<LoadSpec> {
    let mut shares = load_hosts::shares(spec, n);
    if let (Tool::Wrk2 | Tool::Bombardier, Some(rate)) = (tool, spec.rate) {
        let total = rate.round() as u64;
        let mut dealt: Vec<u64> = shares
            .iter()
            .map(|s| s.rate.unwrap_or(0.0).floor() as u64)
            .collect();
        let mut left = total.saturating_sub(dealt.iter().sum());
        // Each share lost less than one to its floor: one pass deals out what is left.
        for d in dealt.iter_mut() {
            if left == 0 {
                break;
            }
            *d += 1;
            left -= 1;
        }
        for (s, d) in shares.iter_mut().zip(dealt) {
            s.rate = Some(d as f64);
        }
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolFigures;

    /// The figures each output reads as.
    fn read(tool: Tool, outputs: &[&str]) -> Vec<ToolFigures> {
        outputs.iter().map(|o| tool.parse(o).unwrap()).collect()
    }

    #[test]
    fn whole_rates_add_up_to_the_rounded_rate() {
        let spec = LoadSpec {
            connections: 10,
            threads: 2,
            rate: Some(1001.0),
            ..Default::default()
        };
        let s = shares(Tool::Wrk2, &spec, 3);
        let rates: Vec<f64> = s.iter().map(|s| s.rate.unwrap()).collect();
        assert_eq!(rates, [401.0, 300.0, 300.0]);
        let oha = shares(Tool::Oha, &spec, 3);
        assert!((oha[1].rate.unwrap() - 300.3).abs() < 1e-9);
    }

    #[test]
    fn two_wrk_outputs_merge_their_counts_and_leave_percentiles_absent() {
        let plain = include_str!("../../../config/src/tools/fixtures/wrk_plain.txt");
        let latency = include_str!("../../../config/src/tools/fixtures/wrk_latency.txt");
        let parts = read(Tool::Wrk, &[plain, latency]);
        let m = merge::merge(&parts);
        assert_eq!(
            m.requests,
            Some(parts[0].requests.unwrap() + parts[1].requests.unwrap())
        );
        assert_eq!(m.latency_p50_ms, None);
        assert!(merge::unmerged_latency(Tool::Wrk, &parts).is_some());
    }
}
