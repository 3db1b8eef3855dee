//! `rigor load`: the built-in engine alone, like wrk/wrk2/oha, with a wrk-like summary and JSON.

use crate::exit::Exit;
use anyhow::Context;
use rigor_load::{LatencyStats, Live, LoadReport, LoadSpec};
use std::fmt::Write as _;
use std::time::Duration;

/// Flags of `rigor load`; the names match wrk's where wrk has them.
#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// Target URL (http:// only; IPv6 literals as http://[::1]:8080/path)
    pub url: String,
    /// Open connections in total
    #[arg(short = 'c', long, default_value_t = 64)]
    pub connections: usize,
    /// Worker threads, each with its own event loop
    #[arg(short = 't', long, default_value_t = 1)]
    pub threads: usize,
    /// Measured duration (e.g. 10s, 500ms, 1m)
    #[arg(short = 'd', long, default_value = "10s", value_parser = parse_dur)]
    pub duration: Duration,
    /// Warmup before the measured window (not counted)
    #[arg(short = 'w', long, default_value = "0s", value_parser = parse_dur)]
    pub warmup: Duration,
    /// Requests in flight per connection (HTTP/1.1 pipelining)
    #[arg(long, default_value_t = 1)]
    pub pipeline: usize,
    /// Total requests per second (0.001 to 1e12): open model, latency counted from each request's
    /// intended send time (no coordinated omission)
    #[arg(long)]
    pub rate: Option<f64>,
    /// A request unanswered this long is a timeout error (its connection is replaced); also how
    /// long the window's last requests are waited for after it closes
    #[arg(long, default_value = "2s", value_parser = parse_dur)]
    pub timeout: Duration,
    /// Extra request header 'Name: value' (repeatable)
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// Request method, sent as typed (methods are case-sensitive: `head` is not HEAD)
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// Request body
    #[arg(long)]
    pub body: Option<String>,
    /// Write the measurements and the full report as JSON to FILE ('-' for stdout, which then
    /// carries the JSON alone: the summary goes to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Pin worker threads to these CPUs, e.g. '1' or '0,2-3'
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
}

fn parse_dur(s: &str) -> Result<Duration, String> {
    crate::duration::parse_duration(s)
}

/// Parses `Name: value`; the error names the offending header.
pub fn parse_header(h: &str) -> Result<(String, String), String> {
    let (k, v) = h
        .split_once(':')
        .ok_or_else(|| format!("invalid header `{h}`: expected 'Name: value'"))?;
    let k = k.trim();
    if k.is_empty()
        || !k
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    {
        return Err(format!(
            "invalid header `{h}`: `{k}` is not a valid header name"
        ));
    }
    Ok((k.to_string(), v.trim().to_string()))
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
    let start = std::time::Instant::now();
    let mut last = (std::time::Instant::now(), 0u64);
    let mut rps = 0.0;
    while !finished() {
        let done = live.completed.load(Ordering::Relaxed);
        if last.0.elapsed() >= Duration::from_millis(500) {
            rps = done.saturating_sub(last.1) as f64 / last.0.elapsed().as_secs_f64();
            last = (std::time::Instant::now(), done);
        }
        let phase = match live.phase() {
            rigor_load::Phase::Starting => "connecting",
            rigor_load::Phase::Warmup => "warmup",
            rigor_load::Phase::Measuring => "measuring",
            rigor_load::Phase::Done => "finishing",
        };
        bar.set_message(format!(
            "{phase} {:.0}s/{:.0}s · {} rps · {} errors",
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

/// Builds the engine's spec from the flags, checking everything that can be known before
/// connecting; the error names the flag or value at fault.
fn build_spec(args: &LoadArgs) -> Result<LoadSpec, String> {
    let mut headers = Vec::new();
    for h in &args.headers {
        headers.push(parse_header(h)?);
    }
    let cpus = args
        .cpus
        .as_deref()
        .map(crate::config::parse_cpu_list)
        .transpose()
        .map_err(|e| format!("--cpus: {e}"))?;
    let spec = LoadSpec {
        url: args.url.clone(),
        connections: args.connections,
        threads: args.threads,
        duration: args.duration,
        warmup: args.warmup,
        pipeline: args.pipeline,
        rate: args.rate,
        timeout: args.timeout,
        method: args.method.clone(),
        headers,
        body: args.body.as_ref().map(|b| b.clone().into_bytes()),
        cpus,
    };
    rigor_load::check(&spec).map_err(|e| e.to_string())?;
    Ok(spec)
}

/// Runs `rigor load` and returns the process exit code: 2 for bad usage (before anything is
/// printed or connected), 130 when interrupted (after printing what was measured).
pub fn execute(args: &LoadArgs) -> anyhow::Result<Exit> {
    let spec = match build_spec(args) {
        Ok(s) => s,
        Err(e) => {
            crate::console::err(&format!("error: {e}"));
            return Ok(Exit::Usage);
        }
    };
    // With `--json -`, stdout carries the JSON alone; the human summary goes to stderr.
    let json_to_stdout = args.json.as_deref() == Some("-");
    // A closed terminal or pipe (`| head`) must not end the run: the human text is best-effort.
    let human = |text: &str| {
        use std::io::Write as _;
        let _ = if json_to_stdout {
            std::io::stderr().write_all(text.as_bytes())
        } else {
            std::io::stdout().write_all(text.as_bytes())
        };
    };
    human(&banner(&spec));
    crate::interrupt::install();
    let live = Live::default();
    let outcome = std::thread::scope(|scope| {
        let engine = scope.spawn(|| rigor_load::run(&spec, &live, crate::interrupt::flag()));
        show_progress(&live, &spec, || engine.is_finished());
        engine.join()
    })
    .map_err(|_| anyhow::anyhow!("the load engine panicked"))?;
    let report = match outcome {
        Ok(r) => r,
        Err(rigor_load::LoadError::Interrupted) => {
            crate::console::err("rigor: interrupted before the load started; nothing was measured");
            return Ok(Exit::Interrupted);
        }
        // Flatten the error: its message already names the cause, so a chain would repeat it.
        Err(e) => return Err(anyhow::anyhow!("{e}")),
    };
    human(&summary(&report));
    if let Some(path) = &args.json {
        let doc = serde_json::json!({
            "schema": "rigor.load.v1",
            "measurements": report.measurements(),
            "report": report,
        });
        let text = serde_json::to_string_pretty(&doc)? + "\n";
        if json_to_stdout {
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .context("cannot write JSON to stdout")?;
        } else {
            std::fs::write(path, text).with_context(|| format!("cannot write JSON to {path}"))?;
        }
    }
    if report.drain_cut {
        crate::console::err(&format!(
            "rigor: load interrupted after the {} measured window, while its last requests were \
             awaited; those still outstanding are timeouts in the figures above",
            fmt_secs(report.measured_secs)
        ));
        return Ok(Exit::Interrupted);
    }
    if report.cancelled || crate::interrupt::interrupted() {
        crate::console::err(&format!(
            "rigor: load interrupted after {} of the measured window; the figures above cover only that",
            fmt_secs(report.measured_secs)
        ));
        return Ok(Exit::Interrupted);
    }
    Ok(Exit::Success)
}

/// `Running 10s test @ URL` and the connections line, like wrk's.
fn banner(spec: &LoadSpec) -> String {
    format!(
        "Running {} test @ {}{}\n  {} threads and {} connections{}{}\n",
        fmt_secs(spec.duration.as_secs_f64()),
        spec.url,
        if spec.warmup.is_zero() {
            String::new()
        } else {
            format!(" after {} warmup", fmt_secs(spec.warmup.as_secs_f64()))
        },
        spec.threads.min(spec.connections),
        spec.connections,
        if spec.pipeline > 1 {
            format!(", pipeline {}", spec.pipeline)
        } else {
            String::new()
        },
        match spec.rate {
            Some(r) => format!(", open model at {r} req/s"),
            None => String::new(),
        }
    )
}

fn fmt_secs(s: f64) -> String {
    if s >= 1.0 && (s - s.round()).abs() < 1e-9 {
        format!("{}s", s.round())
    } else if s >= 1.0 {
        format!("{s:.2}s")
    } else {
        format!("{}ms", (s * 1000.0).round())
    }
}

fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2}s", v / 1000.0)
    } else if v >= 1.0 {
        format!("{v:.2}ms")
    } else {
        format!("{:.0}us", v * 1000.0)
    }
}

fn latency_block(out: &mut String, title: &str, l: &LatencyStats) {
    let _ = writeln!(
        out,
        "  {title:<22} {:>10} {:>10} {:>10}",
        "Mean", "Stdev", "Max"
    );
    let _ = writeln!(
        out,
        "  {:<22} {:>10} {:>10} {:>10}",
        "",
        ms(l.mean_ms),
        ms(l.stdev_ms),
        ms(l.max_ms)
    );
    let _ = write!(out, "  {:<22}", "  percentiles");
    for (p, v) in [
        ("50%", l.p50_ms),
        ("75%", l.p75_ms),
        ("90%", l.p90_ms),
        ("99%", l.p99_ms),
        ("99.9%", l.p999_ms),
        ("99.99%", l.p9999_ms),
    ] {
        let _ = write!(out, " {p} {}", ms(v));
    }
    out.push('\n');
}

/// The wrk-like human summary.
pub fn summary(r: &LoadReport) -> String {
    let mut o = String::new();
    if r.latency.count == 0 {
        o.push_str("  Latency: no request of the measured window was recorded\n");
    } else if r.rate.is_some() {
        latency_block(&mut o, "Latency (corrected)", &r.latency);
        if let Some(u) = &r.latency_uncorrected {
            latency_block(&mut o, "Latency (uncorrected)", u);
        }
    } else {
        latency_block(&mut o, "Latency", &r.latency);
    }
    if r.errors.timeout > 0 && r.latency.count > 0 {
        let _ = writeln!(
            o,
            "  ({} timeouts are in the latency at the time they were given up: a lower bound)",
            r.errors.timeout
        );
    }
    let _ = writeln!(
        o,
        "  {} requests in {}, {:.2} MiB read",
        r.requests,
        fmt_secs(r.measured_secs),
        r.bytes_read as f64 / (1024.0 * 1024.0)
    );
    let codes: Vec<String> = r
        .status_counts
        .iter()
        .map(|(c, n)| format!("{c}: {n}"))
        .collect();
    if !codes.is_empty() {
        let _ = writeln!(
            o,
            "  Status codes: {}{}",
            codes.join(", "),
            if r.bad_responses > 0 {
                format!(" ({} not 2xx/3xx)", r.bad_responses)
            } else {
                String::new()
            }
        );
    }
    let e = &r.errors;
    if e.total() > 0 {
        let _ = writeln!(
            o,
            "  Errors: connect {}, read {}, write {}, timeout {}, parse {}, closed {}",
            e.connect, e.read, e.write, e.timeout, e.parse, e.closed
        );
    }
    for f in &r.parse_failures {
        let _ = writeln!(
            o,
            "  Parse failures: {} ×{}, e.g. {}",
            f.reason, f.count, f.example
        );
    }
    if r.abandoned > 0 {
        let _ = writeln!(
            o,
            "  Requests lost with a failed connection: {} (the `closed` errors: never answered, \
             not re-sent, not in the latency)",
            r.abandoned
        );
    }
    let _ = writeln!(
        o,
        "  Outside the window: {} requests ({} in flight at the end), {} bytes sent",
        r.outside_window.requests, r.in_flight_at_end, r.outside_window.bytes
    );
    if let Some(rate) = &r.rate {
        let _ = writeln!(
            o,
            "  Rate: offered {:.0} req/s, achieved {:.1} req/s; {} waited for a connection; {} never sent; max schedule lag {:.2}ms",
            rate.offered,
            rate.achieved,
            rate.waited_for_connection,
            rate.not_sent,
            rate.max_schedule_lag_ms
        );
    }
    let _ = writeln!(
        o,
        "  Client CPU: {:.1}% of {} core(s) ({:.2} CPU-s)",
        r.client_cpu_pct, r.client_cores, r.client_cpu_secs
    );
    let _ = writeln!(o, "Requests/sec: {:>12.2}", r.rps);
    let _ = writeln!(o, "Transfer/sec: {:>10.2}MiB", r.throughput_mib_s);
    for w in &r.warnings {
        let _ = writeln!(o, "WARNING: {}", w.message);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_cpus() {
        assert_eq!(
            parse_header("X-A: b c").unwrap(),
            ("X-A".into(), "b c".into())
        );
        assert_eq!(
            parse_header("Host:x:1").unwrap(),
            ("Host".into(), "x:1".into())
        );
        assert!(parse_header("nocolon").unwrap_err().contains("nocolon"));
        assert!(parse_header("Bad Name: x")
            .unwrap_err()
            .contains("Bad Name"));
        assert_eq!(crate::config::parse_cpu_list("1").unwrap(), vec![1]);
        assert_eq!(
            crate::config::parse_cpu_list("0,2-4").unwrap(),
            vec![0, 2, 3, 4]
        );
        assert!(crate::config::parse_cpu_list("3-1").is_err());
        assert!(crate::config::parse_cpu_list("x").is_err());
    }
}
