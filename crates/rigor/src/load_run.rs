//! `rigor load`'s run: the engine alone, like wrk/wrk2/oha, on a checked spec. It prints the
//! banner, shows a live line while the engine works, stops cleanly on Ctrl-C, then prints the
//! wrk-like summary, writes `--json`, and says when the figures cover less than was asked.

use crate::exit::Exit;
use crate::failure::Failure;
use crate::options::load::{JsonOut, LoadOptions};
use crate::report::load_text;
use crate::run::console;
use anyhow::Context;
use rigor_load::{Live, LoadReport, LoadSpec, Phase};
use std::io::Write as _;
use std::time::{Duration, Instant};

/// Schema tag of `rigor load --json`.
pub const LOAD_SCHEMA: &str = "rigor.load.v1";

/// Runs the load `options` describe: 0 when the window ran to its end, 130 when interrupted
/// (after printing what was measured). An engine error is a failure.
pub fn run(options: &LoadOptions) -> Result<Exit, Failure> {
    let human = |text: &str| human(options, text);
    human(&load_text::banner(&options.spec));
    let Some(report) = drive(&options.spec)? else {
        console::err("rigor: interrupted before the load started; nothing was measured");
        return Ok(Exit::Interrupted);
    };
    human(&load_text::summary(&report));
    if let Some(out) = &options.json {
        write_json(&report, out)?;
    }
    Ok(ending(&report))
}

/// The human text: on stdout, or on stderr when stdout carries the JSON alone. A closed terminal
/// or pipe (`| head`) must not end the run: the human text is best-effort.
fn human(options: &LoadOptions, text: &str) {
    let _ = if options.json_to_stdout() {
        std::io::stderr().write_all(text.as_bytes())
    } else {
        std::io::stdout().write_all(text.as_bytes())
    };
}

/// Runs the engine with Ctrl-C wired to stop it and the live line on a terminal. None when it
/// was interrupted before the load started.
fn drive(spec: &LoadSpec) -> Result<Option<LoadReport>, Failure> {
    crate::interrupt::install();
    let live = Live::default();
    let outcome = std::thread::scope(|scope| {
        let engine = scope.spawn(|| rigor_load::run(spec, &live, crate::interrupt::flag()));
        show_progress(&live, spec, || engine.is_finished());
        engine.join()
    })
    .map_err(|_| anyhow::anyhow!("the load engine panicked"))?;
    match outcome {
        Ok(report) => Ok(Some(report)),
        Err(rigor_load::LoadError::Interrupted) => Ok(None),
        // Flatten the error: its message already names the cause, so a chain would repeat it.
        Err(e) => Err(anyhow::anyhow!("{e}").into()),
    }
}

/// `--json`: the measurements (the ids `rigor run` records) and the engine's full report.
fn write_json(report: &LoadReport, out: &JsonOut) -> anyhow::Result<()> {
    let doc = serde_json::json!({
        "schema": LOAD_SCHEMA,
        "measurements": report.measurements(),
        "report": report,
    });
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    match out {
        JsonOut::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .context("cannot write JSON to stdout")
        }
        JsonOut::File(path) => std::fs::write(path, text)
            .with_context(|| format!("cannot write JSON to {}", path.display())),
    }
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

/// The engine's phase in words, as a live line shows it.
pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Starting => "connecting",
        Phase::Warmup => "warmup",
        Phase::Measuring => "measuring",
        Phase::Done => "finishing",
    }
}

/// Completed requests per second over the last half second or more: a live rate that neither
/// jumps with every response nor lags the run by much.
pub struct LiveRate {
    since: Instant,
    completed: u64,
    rps: f64,
}

impl Default for LiveRate {
    /// A meter starting now from zero completed requests.
    fn default() -> Self {
        LiveRate {
            since: Instant::now(),
            completed: 0,
            rps: 0.0,
        }
    }
}

impl LiveRate {
    /// The rate given the engine's `completed` count now (the last rate until half a second
    /// has passed since it was measured).
    pub fn update(&mut self, completed: u64) -> f64 {
        let elapsed = self.since.elapsed();
        if elapsed >= Duration::from_millis(500) {
            self.rps = completed.saturating_sub(self.completed) as f64 / elapsed.as_secs_f64();
            self.since = Instant::now();
            self.completed = completed;
        }
        self.rps
    }
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
    let start = Instant::now();
    let mut rate = LiveRate::default();
    while !finished() {
        let rps = rate.update(live.completed.load(Ordering::Relaxed));
        bar.set_message(format!(
            "{} {:.0}s/{:.0}s · {} rps · {} errors",
            phase_name(live.phase()),
            start.elapsed().as_secs_f64(),
            (spec.warmup + spec.duration).as_secs_f64(),
            crate::report::format::number(rps),
            live.errors.load(Ordering::Relaxed)
        ));
        bar.tick();
        std::thread::sleep(Duration::from_millis(100));
    }
    bar.finish_and_clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_read_as_words() {
        assert_eq!(phase_name(Phase::Starting), "connecting");
        assert_eq!(phase_name(Phase::Warmup), "warmup");
        assert_eq!(phase_name(Phase::Measuring), "measuring");
        assert_eq!(phase_name(Phase::Done), "finishing");
    }

    #[test]
    fn the_live_rate_holds_until_half_a_second_has_passed() {
        let mut rate = LiveRate::default();
        assert_eq!(rate.update(1000), 0.0);
        rate.since -= Duration::from_secs(1);
        let rps = rate.update(1000);
        assert!((900.0..=1000.0).contains(&rps), "{rps}");
        assert_eq!(rate.update(5000), rps, "too soon to change");
    }
}
