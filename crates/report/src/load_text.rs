//! `rigor load`'s human text, in wrk's shape so people who know wrk read it at a glance: the
//! `Running … test @ URL` banner before the load, the latency table and totals after it.

use rigor_load::{LatencyStats, LoadReport, LoadSpec};
use std::fmt::Write as _;

/// `Running 10s test @ URL` and the connections line, like wrk's.
pub fn banner(spec: &LoadSpec) -> String {
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
        if spec.http2 {
            format!(", HTTP/2 with {} streams each", spec.streams)
        } else if spec.pipeline > 1 {
            format!(", pipeline {}", spec.pipeline)
        } else {
            String::new()
        },
        match spec.rate {
            Some(r) => format!(", open model at {r} req/s"),
            None if !spec.stages.is_empty() => format!(
                ", open model in {} stages{}",
                spec.stages.len(),
                spec.measure_stage
                    .map_or(String::new(), |n| format!(" (stage {} measured)", n + 1))
            ),
            None => String::new(),
        }
    ) + &match &spec.mix {
        Some(m) => format!("  a mix of {} requests\n", m.requests.len()),
        None => String::new(),
    }
}

/// A duration in seconds as wrk writes it: `10s`, `1.50s`, `250ms`.
pub fn fmt_secs(s: f64) -> String {
    if s >= 1.0 && (s - s.round()).abs() < 1e-9 {
        format!("{}s", s.round())
    } else if s >= 1.0 {
        format!("{s:.2}s")
    } else {
        format!("{}ms", (s * 1000.0).round())
    }
}

/// Milliseconds as wrk writes them: `1.20s`, `3.45ms`, `120us`.
fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2}s", v / 1000.0)
    } else if v >= 1.0 {
        format!("{v:.2}ms")
    } else {
        format!("{:.0}us", v * 1000.0)
    }
}

/// One latency table: mean, stdev and max, then the percentiles on one line.
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

/// The wrk-like human summary: latency, what was counted, then the rates.
pub fn summary(r: &LoadReport) -> String {
    let mut o = String::new();
    latency(&mut o, r);
    mix(&mut o, r);
    counts(&mut o, r);
    rates(&mut o, r);
    o
}

/// A mix: one line per request with its rate, latency percentiles, errors and statuses.
fn mix(o: &mut String, r: &LoadReport) {
    if r.mix.is_empty() {
        return;
    }
    let width = r.mix.iter().map(|q| q.name.len()).max().unwrap_or(0).max(7);
    let _ = writeln!(
        o,
        "  {:<width$} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7}  statuses",
        "Request", "Req/Sec", "p50", "p90", "p99", "max", "errors"
    );
    for q in &r.mix {
        let l = &q.latency;
        let lat = |v: f64| if l.count > 0 { ms(v) } else { "-".into() };
        let codes: Vec<String> = q
            .status_counts
            .iter()
            .map(|(c, n)| format!("{c}:{n}"))
            .collect();
        let _ = writeln!(
            o,
            "  {:<width$} {:>10.2} {:>9} {:>9} {:>9} {:>9} {:>7}  {}",
            q.name,
            q.rps,
            lat(l.p50_ms),
            lat(l.p90_ms),
            lat(l.p99_ms),
            lat(l.max_ms),
            q.errors,
            codes.join(" ")
        );
    }
}

/// The latency table(s): corrected and uncorrected under an open model, and what timeouts mean.
fn latency(o: &mut String, r: &LoadReport) {
    if r.latency.count == 0 {
        o.push_str("  Latency: no request of the measured window was recorded\n");
    } else if r.rate.is_some() {
        latency_block(o, "Latency (corrected)", &r.latency);
        if let Some(u) = &r.latency_uncorrected {
            latency_block(o, "Latency (uncorrected)", u);
        }
    } else {
        latency_block(o, "Latency", &r.latency);
    }
    if r.errors.timeout > 0 && r.latency.count > 0 {
        let _ = writeln!(
            o,
            "  ({} timeouts are in the latency at the time they were given up: a lower bound)",
            r.errors.timeout
        );
    }
}

/// Requests and bytes, status codes, errors, parse failures, lost requests and what fell
/// outside the window.
fn counts(o: &mut String, r: &LoadReport) {
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
        let h2 = if r.http2.is_some() {
            format!(", reset {}, goaway {}", e.reset, e.goaway)
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "  Errors: connect {}, read {}, write {}, timeout {}, parse {}, closed {}, tls {}{h2}",
            e.connect, e.read, e.write, e.timeout, e.parse, e.closed, e.tls
        );
    }
    if let Some(io) = &r.io {
        let _ = writeln!(o, "  I/O: {io}");
    }
    if let Some(h) = &r.http2 {
        let limit = h
            .server_max_streams
            .map_or("no limit announced".to_string(), |m| {
                format!("server allows {m}")
            });
        let _ = writeln!(
            o,
            "  HTTP/2 ({}): {} streams per connection ({limit}), {} GOAWAY",
            h.protocol, h.streams, h.goaways
        );
        if !h.codes.is_empty() {
            let codes: Vec<String> = h.codes.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
            let _ = writeln!(o, "  HTTP/2 frames ending streams: {}", codes.join(", "));
        }
        if let Some(why) = &h.first_failure {
            let _ = writeln!(o, "  HTTP/2 failures, the first: {why}");
        }
    }
    if let Some(t) = &r.tls {
        let times = match (t.handshake_mean_ms, t.handshake_p99_ms) {
            (Some(mean), Some(p99)) => format!(", mean {mean:.2}ms, p99 {p99:.2}ms"),
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "  TLS: {} handshakes ({} resumed){times}",
            t.handshakes, t.resumed
        );
        if let Some(why) = &t.first_failure {
            let _ = writeln!(o, "  TLS failures, the first: {why}");
        }
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
}

/// The open model's schedule, the client's CPU, the headline rates and the engine's warnings.
fn rates(o: &mut String, r: &LoadReport) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_and_latencies_read_like_wrk() {
        assert_eq!(fmt_secs(10.0), "10s");
        assert_eq!(fmt_secs(1.5), "1.50s");
        assert_eq!(fmt_secs(0.25), "250ms");
        assert_eq!(ms(1500.0), "1.50s");
        assert_eq!(ms(3.456), "3.46ms");
        assert_eq!(ms(0.12), "120us");
    }

    #[test]
    fn the_banner_names_the_window_the_model_and_the_connections() {
        let spec = LoadSpec {
            url: "http://127.0.0.1:8080/".into(),
            connections: 8,
            threads: 16,
            warmup: Duration::from_secs(2),
            pipeline: 4,
            rate: Some(1000.0),
            ..LoadSpec::default()
        };
        assert_eq!(
            banner(&spec),
            "Running 10s test @ http://127.0.0.1:8080/ after 2s warmup\n  8 threads and 8 \
             connections, pipeline 4, open model at 1000 req/s\n"
        );
        let plain = LoadSpec {
            url: "http://h/".into(),
            ..LoadSpec::default()
        };
        assert_eq!(
            banner(&plain),
            "Running 10s test @ http://h/\n  1 threads and 64 connections\n"
        );
    }
}
