//! From the first request to the load's end, on an application that is ready: the first
//! request and validation, the measured load (the engine, a load tool, or load hosts), and
//! what it recorded.

use super::iteration_context::{IterationContext, Watched};
use crate::config::LoadJob;
use crate::guards;
use crate::measurements::ids;
use crate::result::{Iteration, Warning, WarningKind};
use rigor_load::{Live, Phase};
use rigor_probe::Mark;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// From the first request to the load's end, on an application that is ready.
pub(super) fn under_load(
    ctx: &IterationContext,
    load_job: &LoadJob,
    it: &mut Iteration,
    app: &mut dyn Watched,
    app_cpu: super::readings::AppCpu,
    status: &dyn Fn(&str),
) -> anyhow::Result<()> {
    status("first request");
    let app_host = ctx.row.app.host.as_ref().map(|h| h.name.as_str());
    first_request(load_job, app_host, it, &*app)?;
    let mut scraper = crate::metrics::start(&ctx.row.app, ctx.sample_interval, app.spawned_at());
    let result = match &load_job.tool {
        Some(tool) => {
            let around = super::tool_load::Around {
                app,
                app_cpu,
                scraper: scraper.as_mut(),
                status,
                log: &ctx.log,
            };
            if load_job.hosts.is_empty() {
                super::tool_load::load(load_job, tool, it, around)
            } else {
                super::tool_hosts::load(load_job, tool, app_host, it, around)
            }
        }
        None => load(
            load_job,
            app_host,
            it,
            app,
            app_cpu,
            scraper.as_mut(),
            status,
        ),
    };
    if let Some(s) = scraper {
        crate::metrics::finish(s, &ctx.row.app, it);
    }
    result
}

/// What the row's first request found.
struct First {
    status: u16,
    latency: Duration,
    bytes_sent: u64,
    found: Option<bool>,
}

/// The row's own URL, once: first-request latency and the optional validation.
fn first_request(
    load_job: &LoadJob,
    app_host: Option<&str>,
    it: &mut Iteration,
    app: &dyn Watched,
) -> anyhow::Result<()> {
    let spec = &load_job.spec;
    let find = load_job
        .validate
        .as_ref()
        .and_then(|v| v.body_contains.as_ref())
        .map(|t| t.as_bytes());
    let timeout = spec.timeout.max(Duration::from_secs(5));
    // From the first load host that is not this machine when the load comes from other hosts:
    // they reach the URL, this machine may not.
    let remote = load_job
        .hosts
        .iter()
        .find(|h| h.name != crate::config::LOCAL);
    let first = match remote {
        Some(host) => super::load_hosts::first_request(host, app_host, spec, timeout, find)
            .map(|(status, latency, bytes_sent, found)| First {
                status,
                latency,
                bytes_sent,
                found,
            })
            .map_err(|e| {
                anyhow::anyhow!(
                    "first request to {} from load host {} failed: {e}\n{}",
                    spec.url,
                    host.name,
                    app.log_tail()
                )
            })?,
        None => rigor_load::probe_request_as(spec.http2)(
            &spec.url,
            &spec.method,
            &spec.headers,
            spec.body.as_deref(),
            timeout,
            find,
            spec.insecure,
        )
        .map(|r| First {
            status: r.status,
            latency: r.latency,
            bytes_sent: r.bytes_sent,
            found: r.found,
        })
        .map_err(|e| {
            anyhow::anyhow!(
                "first request to {} failed: {e}\n{}",
                spec.url,
                app.log_tail()
            )
        })?,
    };
    it.outside_window.requests += 1;
    it.outside_window.bytes += first.bytes_sent;
    it.measurements.insert(
        ids::APP_FIRST_REQUEST.into(),
        first.latency.as_secs_f64() * 1e3,
    );
    let Some(v) = &load_job.validate else {
        return Ok(());
    };
    if let Some(want) = v.status {
        if first.status != want {
            return Err(anyhow::anyhow!(
                "validation failed: {} answered {} (expected {want})",
                spec.url,
                first.status
            ));
        }
    }
    if let Some(text) = &v.body_contains {
        if first.found == Some(false) {
            return Err(anyhow::anyhow!(
                "validation failed: the body of {} does not contain `{text}`",
                spec.url
            ));
        }
    }
    Ok(())
}

/// What the load measured: the engine's report (none from a capacity search, whose probes
/// are in the search), each load host's, and the search with `find_rate`.
type Measured = (
    Option<rigor_load::LoadReport>,
    Vec<super::load_hosts::HostLoad>,
    Option<rigor_load::capacity::Capacity>,
);

/// The engine in rigor itself, shared by the load role's hosts, or probing rates for
/// `find_rate`: the window of a search spans all its probes.
fn engine(
    job: &LoadJob,
    app_host: Option<&str>,
    live: &Live,
    stop: &AtomicBool,
) -> anyhow::Result<Measured> {
    if let Some(find) = &job.find_rate {
        live.set_phase(Phase::Measuring);
        let found =
            rigor_load::capacity::find_rate(&job.spec, find, &Live::default(), stop, |_| {});
        live.set_phase(Phase::Done);
        return match found {
            Ok(found) => Ok((None, Vec::new(), Some(found.capacity))),
            Err(stopped) => Err(anyhow::Error::from(stopped.cause)),
        };
    }
    let (report, hosts) = engine_run(job, app_host, live, stop)?;
    Ok((Some(report), hosts, None))
}

/// The engine in rigor itself, or shared by the load role's hosts (with what each measured).
fn engine_run(
    job: &LoadJob,
    app_host: Option<&str>,
    live: &Live,
    stop: &AtomicBool,
) -> anyhow::Result<(rigor_load::LoadReport, Vec<super::load_hosts::HostLoad>)> {
    if job.hosts.is_empty() {
        return rigor_load::run(&job.spec, live, stop)
            .map(|r| (r, Vec::new()))
            .map_err(anyhow::Error::from);
    }
    super::load_hosts::run(&job.spec, &job.hosts, app_host, live, stop).map(|h| (h.merged, h.hosts))
}

/// The measured load: the engine runs while the app is watched (a crash or an interrupt stops
/// the engine) and the sampler marks the window; then the engine's report is recorded.
#[allow(clippy::too_many_arguments)]
fn load(
    load_job: &LoadJob,
    app_host: Option<&str>,
    it: &mut Iteration,
    app: &mut dyn Watched,
    app_cpu: super::readings::AppCpu,
    mut scraper: Option<&mut crate::metrics::Scraper>,
    status: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let spec = &load_job.spec;
    let live = Live::default();
    // Load hosts drive the load elsewhere (a local one runs in an agent process).
    let client = match load_job.hosts.is_empty() {
        true => super::readings::Client::Engine,
        false => super::readings::Client::Elsewhere,
    };
    let mut machine = super::readings::MachineWatch::start(app_cpu, client);
    let stop = AtomicBool::new(false);
    let (report, crashed) = std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("rigor-engine".into())
            .spawn_scoped(s, || engine(load_job, app_host, &live, &stop));
        let handle = match spawned {
            Ok(h) => h,
            Err(e) => {
                return (
                    Ok(Err(anyhow::anyhow!("cannot start the load's thread: {e}"))),
                    None,
                )
            }
        };
        let mut marked_start = false;
        let mut crashed = None;
        crate::live_rate::watch(
            &live,
            Duration::from_millis(20),
            || handle.is_finished(),
            |r| {
                machine.tick();
                if r.phase == Phase::Measuring && !marked_start {
                    app.mark(Mark::WindowStart);
                    if let Some(m) = scraper.as_mut() {
                        m.window_start();
                    }
                    marked_start = true;
                }
                if let Some(m) = scraper.as_mut().filter(|_| marked_start) {
                    m.tick(spec.duration);
                }
                if r.phase == Phase::Done && marked_start {
                    // The sampler's edge first: a slow metrics page must not widen the window.
                    app.mark(Mark::WindowEnd);
                    if let Some(m) = scraper.as_mut() {
                        m.window_end();
                    }
                    marked_start = false;
                }
                if crashed.is_none() {
                    if let Some(st) = app.exited() {
                        crashed = Some(st);
                        stop.store(true, Ordering::SeqCst);
                    }
                }
                if crate::interrupt::interrupted() {
                    stop.store(true, Ordering::SeqCst);
                }
                status(&format!(
                    "{} {:.0}s · {} rps",
                    r.phase_name(),
                    r.elapsed.as_secs_f64(),
                    crate::report::format::number(r.rps)
                ));
            },
        );
        if marked_start {
            if let Some(m) = scraper.as_mut() {
                m.window_end();
            }
            app.mark(Mark::WindowEnd);
        }
        (handle.join(), crashed)
    });
    it.machine = Some(machine.finish(app_cpu, &mut it.warnings));
    // A crash or Ctrl-C stops the engine too; the cause is said, not the engine's stop.
    let cause = || match crashed {
        Some(st) => Some(format!(
            "the application crashed during the load ({st})\n{}",
            app.log_tail()
        )),
        None if crate::interrupt::interrupted() => Some("interrupted during the load".into()),
        None => None,
    };
    let (report, hosts, capacity) = match report {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            return Err(anyhow::anyhow!(
                cause().unwrap_or_else(|| format!("load failed: {e}"))
            ))
        }
        Err(_) => anyhow::bail!("the load engine panicked"),
    };
    if let Some(report) = &report {
        it.outside_window.requests += report.outside_window.requests;
        it.outside_window.bytes += report.outside_window.bytes;
        crate::measurements::record_load(report, &mut it.measurements);
        crate::series::record_load(it, report, app.spawned_at());
        guards::load_guards(report, &mut it.warnings);
        it.load = serde_json::to_value(report).ok();
    }
    super::load_hosts::record(&hosts, it);
    if let Some(capacity) = capacity {
        return record_capacity(capacity, it, cause());
    }
    match cause() {
        Some(why) => Err(anyhow::anyhow!(why)),
        None => Ok(()),
    }
}

/// A search's answer as `load.capacity`, the search itself beside it. No rate meeting the
/// objective fails the iteration: there is no capacity to compare, and the reason is the finding.
fn record_capacity(
    capacity: rigor_load::capacity::Capacity,
    it: &mut Iteration,
    cause: Option<String>,
) -> anyhow::Result<()> {
    let answer = capacity.capacity_rps;
    let none = crate::report::capacity_text::answer(&capacity);
    if let Some(rate) = answer {
        it.measurements.insert(ids::LOAD_CAPACITY.into(), rate);
        it.warnings.extend(unsettled(&capacity));
    }
    it.capacity = Some(capacity);
    if let Some(why) = cause {
        return Err(anyhow::anyhow!(why));
    }
    if answer.is_none() {
        anyhow::bail!(
            "find_rate: {}",
            none.trim_end().trim_start_matches("Capacity: ")
        );
    }
    Ok(())
}

/// A search that recorded `load.capacity` without settling (its probes ran out, or the
/// objective held at `max`): the recorded rate is the lower end of the interval named.
fn unsettled(c: &rigor_load::capacity::Capacity) -> Option<Warning> {
    use crate::report::capacity_text::rate;
    use rigor_load::capacity::Outcome;
    let low = c.low?;
    let n = c.probes.len();
    let message = match (c.outcome, c.high) {
        (Outcome::Settled | Outcome::NeverMet, _) => return None,
        (Outcome::AtLeastMax, _) => format!(
            "find_rate met {} even at its max, {} req/s: load.capacity {} is a lower bound, \
             the interval {} req/s and up ({n} probes)",
            c.objective,
            rate(low),
            rate(low),
            rate(low)
        ),
        (Outcome::Unsettled, Some(high)) => format!(
            "find_rate did not settle for {} within {n} probes: load.capacity {} is the lower \
             end of {}..{} req/s (met at {}, missed at {}), {} wide, not within {}",
            c.objective,
            rate(low),
            rate(low),
            rate(high),
            rate(low),
            rate(high),
            pct((high - low) / low),
            pct(c.precision)
        ),
        (Outcome::Unsettled, None) => format!(
            "find_rate did not settle for {} within {n} probes: load.capacity {} is the lower \
             end of the interval {} req/s and up (met up to {}, no rate above it missed yet)",
            c.objective,
            rate(low),
            rate(low),
            rate(low)
        ),
    };
    Some(Warning::of(WarningKind::CapacityUnsettled, message))
}

/// A fraction as a percentage with one decimal (`2.3%`).
fn pct(f: f64) -> String {
    format!("{:.1}%", f * 100.0)
}

#[cfg(test)]
mod tests {
    use super::unsettled;
    use rigor_load::capacity::{Capacity, Outcome};

    fn search(outcome: Outcome, low: Option<f64>, high: Option<f64>) -> Capacity {
        Capacity {
            objective: "p99<50ms".into(),
            capacity_rps: low,
            low,
            high,
            outcome,
            precision: 0.05,
            probe_secs: 3.0,
            warmup_secs: 1.0,
            probes: Vec::new(),
        }
    }

    #[test]
    fn a_search_that_did_not_settle_warns_naming_its_interval() {
        let w = unsettled(&search(Outcome::Unsettled, Some(400.0), Some(800.0))).unwrap();
        assert_eq!(w.kind, "capacity_unsettled");
        assert_eq!(
            w.message,
            "find_rate did not settle for p99<50ms within 0 probes: load.capacity 400 is the \
             lower end of 400..800 req/s (met at 400, missed at 800), 100.0% wide, not within 5.0%"
        );
        let w = unsettled(&search(Outcome::Unsettled, Some(400.0), None)).unwrap();
        assert!(
            w.message.contains("the interval 400 req/s and up"),
            "{}",
            w.message
        );
        let w = unsettled(&search(Outcome::AtLeastMax, Some(1000.0), None)).unwrap();
        assert!(
            w.message.contains("even at its max, 1000 req/s"),
            "{}",
            w.message
        );
        assert!(unsettled(&search(Outcome::Settled, Some(400.0), Some(410.0))).is_none());
        assert!(unsettled(&search(Outcome::NeverMet, None, Some(3.34))).is_none());
    }
}
