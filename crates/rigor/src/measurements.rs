//! The catalogue of measurement ids (a stable contract, documented in docs/results.md): one place that knows each figure's
//! human name, unit and which direction is better, so tables, verdicts and exclusions agree.

use rigor_stats::Direction;

/// What a measurement id means to a reader and to the verdicts.
#[derive(Debug, Clone, Copy)]
pub struct MeasurementInfo {
    pub id: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub direction: Direction,
    /// Figures of the application go in the application table; the rest in the load table.
    pub group: Group,
}

/// Which report table a measurement belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Application,
    Load,
}

use Direction::{HigherIsBetter as Up, LowerIsBetter as Down};
use Group::{Application as App, Load};

const fn m(
    id: &'static str,
    name: &'static str,
    unit: &'static str,
    direction: Direction,
    group: Group,
) -> MeasurementInfo {
    MeasurementInfo {
        id,
        name,
        unit,
        direction,
        group,
    }
}

/// Every id rigor can report, in the order the tables show them.
pub const CATALOGUE: &[MeasurementInfo] = &[
    m("app.cpu", "Max CPU Usage", "%", Down, App),
    m("app.cpu.avg", "Mean CPU Usage", "%", Down, App),
    m("app.cores", "Max Cores usage", "%", Down, App),
    m("app.rss", "Max Working Set", "MiB", Down, App),
    m(
        "app.rss.lifetime",
        "Lifetime Max Working Set",
        "MiB",
        Down,
        App,
    ),
    m("app.private", "Max Private Memory", "MiB", Down, App),
    m("app.owned", "Max Owned Memory", "MiB", Down, App),
    m("app.cgroup.memory", "Max cgroup Memory", "MiB", Down, App),
    m("app.cgroup.cache", "cgroup Page Cache", "MiB", Down, App),
    m(
        "app.cgroup.anon",
        "cgroup Anonymous Memory",
        "MiB",
        Down,
        App,
    ),
    m("app.threads.start", "Threads at Start", "count", Down, App),
    m("app.threads.end", "Threads at End", "count", Down, App),
    m("app.threads.max", "Max Threads", "count", Down, App),
    m(
        "app.ctx_switches.involuntary",
        "Involuntary Context Switches",
        "count",
        Down,
        App,
    ),
    m("app.build_time", "Build Time", "ms", Down, App),
    m("app.start_time", "Start Time", "ms", Down, App),
    m("app.first_request", "First Request", "ms", Down, App),
    m("app.size", "Published Size", "KiB", Down, App),
    m("load.cpu", "Load Client CPU", "%", Down, Load),
    m("load.rps", "Requests/sec", "1/s", Up, Load),
    m("load.requests", "Requests", "count", Up, Load),
    m("load.latency.mean", "Mean latency", "ms", Down, Load),
    m("load.latency.p50", "Latency 50th", "ms", Down, Load),
    m("load.latency.p75", "Latency 75th", "ms", Down, Load),
    m("load.latency.p90", "Latency 90th", "ms", Down, Load),
    m("load.latency.p99", "Latency 99th", "ms", Down, Load),
    m("load.latency.p999", "Latency 99.9th", "ms", Down, Load),
    m("load.latency.max", "Max latency", "ms", Down, Load),
    m("load.bad_responses", "Bad responses", "count", Down, Load),
    m("load.socket_errors", "Socket errors", "count", Down, Load),
    m("load.errors.connect", "Connect errors", "count", Down, Load),
    m("load.errors.read", "Read errors", "count", Down, Load),
    m("load.errors.write", "Write errors", "count", Down, Load),
    m("load.errors.timeout", "Timeouts", "count", Down, Load),
    m("load.errors.parse", "Parse errors", "count", Down, Load),
    m(
        "load.errors.closed",
        "Lost with connection",
        "count",
        Down,
        Load,
    ),
    m("load.throughput", "Read throughput", "MiB/s", Up, Load),
];

/// Looks an id up; unknown ids (e.g. from a command job's own figures) are `None`: their
/// direction comes only from a declaration (see `declarations`).
pub fn info(id: &str) -> Option<&'static MeasurementInfo> {
    CATALOGUE.iter().find(|m| m.id == id)
}

/// The label a table shows: `Max Working Set (MiB)`.
pub fn label(id: &str) -> String {
    match info(id) {
        Some(m) if m.unit == "count" => m.name.to_string(),
        Some(m) => format!("{} ({})", m.name, m.unit),
        None => id.to_string(),
    }
}

/// Sorts ids into catalogue order, unknown ids last in name order.
pub fn order(ids: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = ids.into_iter().collect();
    v.sort_by_key(|id| {
        (
            CATALOGUE
                .iter()
                .position(|m| m.id == id)
                .unwrap_or(usize::MAX),
            id.clone(),
        )
    });
    v.dedup();
    v
}

/// Checks an id given on the command line, naming the known ones when it is wrong.
pub fn validate(id: &str) -> Result<(), String> {
    if info(id).is_some() {
        Ok(())
    } else {
        Err(format!(
            "unknown measurement `{id}`; known: {}",
            CATALOGUE
                .iter()
                .map(|m| m.id)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

#[cfg(test)]
mod engine_ids {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn every_id_the_engine_reports_is_in_the_catalogue() {
        // A server answering garbage: the engine reports parse errors, and the tables must know
        // the id to show them.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(mut s) = s else { continue };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 1024];
                    while matches!(s.read(&mut buf), Ok(n) if n > 0) {
                        if s.write_all(b"garbage\r\n\r\n").is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let spec = rigor_load::LoadSpec {
            url: format!("http://{addr}/"),
            connections: 2,
            duration: std::time::Duration::from_millis(300),
            ..Default::default()
        };
        let never = std::sync::atomic::AtomicBool::new(false);
        let r = rigor_load::run(&spec, &rigor_load::Live::default(), &never).unwrap();
        let m = r.measurements();
        assert!(m["load.errors.parse"] > 0.0, "{m:?}");
        assert_eq!(m["load.socket_errors"], m["load.errors.parse"]);
        for id in m.keys() {
            assert!(info(id).is_some(), "{id} is not in the catalogue");
        }
    }
}
