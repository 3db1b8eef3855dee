//! `rigor load`'s run: the engine alone, like wrk/wrk2/oha, on a checked spec. It prints the
//! banner, shows a live line while the engine works, stops cleanly on Ctrl-C, then prints the
//! wrk-like summary, writes `--json`, and says when the figures cover less than was asked.

use crate::console;
use crate::exit::Exit;
use crate::failure::Failure;
use crate::load_output::{human, write_doc, LOAD_SCHEMA};
use crate::options::load::{JsonOut, LoadOptions};
use crate::report::load_text;
use rigor_load::{Live, LoadReport, LoadSpec};
use std::time::Duration;

/// Runs the load `options` describe: 0 when the window ran to its end, 130 when interrupted
/// (after printing what was measured). An engine error is a failure.
pub fn run(options: &LoadOptions) -> Result<Exit, Failure> {
    if let Some(tool) = &options.tool {
        return crate::load_tool::run(options, tool);
    }
    if let Some(find) = &options.find {
        return crate::capacity_run::run(options, find);
    }
    let human = |text: &str| human(options, text);
    human(&load_text::banner(&options.spec));
    // Entered by the engine's thread, whose workers are then born in it.
    let netns = match &options.container {
        Some(name) => Some(crate::exec::container::netns_of(name)?),
        None => None,
    };
    let Some(report) = drive(&options.spec, netns.as_ref())? else {
        console::err("rigor: interrupted before the load started; nothing was measured");
        return Ok(Exit::Interrupted);
    };
    human(&load_text::summary(&report));
    if let Some(out) = &options.json {
        write_json(&report, out)?;
    }
    Ok(ending(&report))
}

/// Runs the engine with Ctrl-C wired to stop it and the live line on a terminal. None when it
/// was interrupted before the load started.
fn drive(spec: &LoadSpec, netns: Option<&std::fs::File>) -> Result<Option<LoadReport>, Failure> {
    crate::interrupt::install();
    let live = Live::default();
    let outcome = std::thread::scope(|scope| {
        let engine = std::thread::Builder::new()
            .name("rigor-engine".into())
            .spawn_scoped(scope, || {
                if let Some(ns) = netns {
                    crate::exec::container::enter(ns)?;
                }
                anyhow::Ok(rigor_load::run(spec, &live, crate::interrupt::flag()))
            })
            .map_err(|e| anyhow::anyhow!("cannot start the load's thread: {e}"))?;
        show_progress(&live, spec, || engine.is_finished());
        engine
            .join()
            .map_err(|_| anyhow::anyhow!("the load engine panicked"))?
    })?;
    match outcome {
        Ok(report) => Ok(Some(report)),
        Err(rigor_load::LoadError::Interrupted) => Ok(None),
        // Flatten the error: its message already names the cause, so a chain would repeat it.
        Err(e) => Err(anyhow::anyhow!("{e}").into()),
    }
}

/// `--json`: the measurements (the ids `rigor run` records) and the engine's full report.
fn write_json(report: &LoadReport, out: &JsonOut) -> anyhow::Result<()> {
    let mut measurements: std::collections::BTreeMap<String, f64> = report
        .measurements()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    measurements.extend(report.request_measurements());
    let doc = serde_json::json!({
        "schema": LOAD_SCHEMA,
        "measurements": measurements,
        "report": report,
    });
    write_doc(&doc, out)
}

/// The exit code, saying so when Ctrl-C cut the window or the wait for its last requests.
fn ending(report: &LoadReport) -> Exit {
    let measured = load_text::fmt_secs(report.measured_secs);
    if report.drain_cut {
        console::err(&format!(
            "rigor: load interrupted after the {measured} measured window, while its last requests \
             were awaited; those still outstanding are timeouts in the figures above"
        ));
        return Exit::Interrupted;
    }
    if report.cancelled || crate::interrupt::interrupted() {
        console::err(&format!(
            "rigor: load interrupted after {measured} of the measured window; the figures above \
             cover only that"
        ));
        return Exit::Interrupted;
    }
    Exit::Success
}

/// A live line on a terminal (phase, elapsed, live RPS) while the engine runs; nothing elsewhere.
fn show_progress(live: &Live, spec: &LoadSpec, finished: impl Fn() -> bool) {
    use std::io::IsTerminal;
    use std::sync::atomic::Ordering;
    if !std::io::stderr().is_terminal() {
        while !finished() {
            std::thread::sleep(Duration::from_millis(20));
        }
        return;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    let window = spec.span().as_secs_f64();
    crate::live_rate::watch(live, Duration::from_millis(100), finished, |r| {
        bar.set_message(format!(
            "{} {:.0}s/{window:.0}s · {} rps · {} errors",
            r.phase_name(),
            r.elapsed.as_secs_f64(),
            crate::report::format::number(r.rps),
            live.errors.load(Ordering::Relaxed)
        ));
        bar.tick();
    });
    bar.finish_and_clear();
}
