//! The catalogue of measurement ids (a stable contract, documented in docs/results.md): one
//! place that knows each figure's human name, unit and which direction is better, so tables,
//! verdicts and exclusions agree; and the one place that puts the probe's and the engine's
//! figures under those ids.

mod figures;
mod floor;
pub mod ids;
#[cfg(test)]
mod source_tests;
mod suggest;

pub use figures::{record_app, record_load};
pub use floor::{floor, threshold_pct as floored_threshold_pct};
pub use suggest::closest_note;

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
    /// Whether a comparison judges it by default. Bookkeeping is not: `load.requests` is
    /// `load.rps` times the duration (a second verdict on one figure); `app.build_time` and
    /// `app.size` come from one build per variant, so their iterations repeat one number; the
    /// `load.errors.*` split is already summed in `load.socket_errors`. Nor is `load.cpu`: the
    /// load client's CPU grows with the requests it sends, so it is context for the run, never a
    /// regression of the application.
    pub judged: bool,
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
        judged: true,
    }
}

/// A bookkeeping entry: shown in the tables, given no verdict unless asked for.
const fn bk(
    id: &'static str,
    name: &'static str,
    unit: &'static str,
    direction: Direction,
    group: Group,
) -> MeasurementInfo {
    MeasurementInfo {
        judged: false,
        ..m(id, name, unit, direction, group)
    }
}

/// Every id rigor can report, in the order the tables show them.
pub const CATALOGUE: &[MeasurementInfo] = &[
    m(ids::APP_CPU, "Max CPU Usage", "%", Down, App),
    m(ids::APP_CPU_AVG, "Mean CPU Usage", "%", Down, App),
    m(ids::APP_CORES, "Max Cores usage", "%", Down, App),
    m(ids::APP_RSS, "Max Working Set", "MiB", Down, App),
    m(
        ids::APP_RSS_LIFETIME,
        "Lifetime Max Working Set",
        "MiB",
        Down,
        App,
    ),
    m(ids::APP_PRIVATE, "Max Private Memory", "MiB", Down, App),
    m(ids::APP_OWNED, "Max Owned Memory", "MiB", Down, App),
    m(
        ids::APP_CGROUP_MEMORY,
        "Max cgroup Memory",
        "MiB",
        Down,
        App,
    ),
    m(ids::APP_CGROUP_CACHE, "cgroup Page Cache", "MiB", Down, App),
    m(
        ids::APP_CGROUP_ANON,
        "cgroup Anonymous Memory",
        "MiB",
        Down,
        App,
    ),
    m(
        ids::APP_THREADS_START,
        "Threads at Start",
        "count",
        Down,
        App,
    ),
    m(ids::APP_THREADS_END, "Threads at End", "count", Down, App),
    m(ids::APP_THREADS_MAX, "Max Threads", "count", Down, App),
    m(
        ids::APP_CTX_SWITCHES_INVOLUNTARY,
        "Involuntary Context Switches",
        "count",
        Down,
        App,
    ),
    bk(ids::APP_BUILD_TIME, "Build Time", "ms", Down, App),
    m(ids::APP_START_TIME, "Start Time", "ms", Down, App),
    m(ids::APP_FIRST_REQUEST, "First Request", "ms", Down, App),
    m(ids::APP_ELAPSED, "Elapsed Time", "ms", Down, App),
    m(ids::APP_CPU_TIME, "CPU Time", "ms", Down, App),
    bk(ids::APP_SIZE, "Published Size", "KiB", Down, App),
    bk(ids::LOAD_CPU, "Load Client CPU", "%", Down, Load),
    m(ids::LOAD_CAPACITY, "Capacity", "1/s", Up, Load),
    m(ids::LOAD_RPS, "Requests/sec", "1/s", Up, Load),
    bk(ids::LOAD_REQUESTS, "Requests", "count", Up, Load),
    m(ids::LOAD_LATENCY_MEAN, "Mean latency", "ms", Down, Load),
    m(ids::LOAD_LATENCY_P50, "Latency 50th", "ms", Down, Load),
    m(ids::LOAD_LATENCY_P75, "Latency 75th", "ms", Down, Load),
    m(ids::LOAD_LATENCY_P90, "Latency 90th", "ms", Down, Load),
    m(ids::LOAD_LATENCY_P99, "Latency 99th", "ms", Down, Load),
    m(ids::LOAD_LATENCY_P999, "Latency 99.9th", "ms", Down, Load),
    m(ids::LOAD_LATENCY_MAX, "Max latency", "ms", Down, Load),
    m(
        ids::LOAD_BAD_RESPONSES,
        "Bad responses",
        "count",
        Down,
        Load,
    ),
    m(
        ids::LOAD_SOCKET_ERRORS,
        "Socket errors",
        "count",
        Down,
        Load,
    ),
    bk(
        ids::LOAD_ERRORS_CONNECT,
        "Connect errors",
        "count",
        Down,
        Load,
    ),
    bk(ids::LOAD_ERRORS_READ, "Read errors", "count", Down, Load),
    bk(ids::LOAD_ERRORS_WRITE, "Write errors", "count", Down, Load),
    bk(ids::LOAD_ERRORS_TIMEOUT, "Timeouts", "count", Down, Load),
    bk(ids::LOAD_ERRORS_PARSE, "Parse errors", "count", Down, Load),
    bk(
        ids::LOAD_ERRORS_CLOSED,
        "Lost with connection",
        "count",
        Down,
        Load,
    ),
    bk(ids::LOAD_ERRORS_TLS, "TLS errors", "count", Down, Load),
    bk(ids::LOAD_ERRORS_RESET, "Streams reset", "count", Down, Load),
    bk(
        ids::LOAD_ERRORS_GOAWAY,
        "Streams refused",
        "count",
        Down,
        Load,
    ),
    bk(
        ids::LOAD_TLS_HANDSHAKES,
        "TLS handshakes",
        "count",
        Down,
        Load,
    ),
    bk(ids::LOAD_TLS_RESUMED, "TLS resumed", "count", Up, Load),
    m(
        ids::LOAD_TLS_HANDSHAKE_MEAN,
        "Mean TLS handshake",
        "ms",
        Down,
        Load,
    ),
    m(
        ids::LOAD_TLS_HANDSHAKE_P99,
        "TLS handshake 99th",
        "ms",
        Down,
        Load,
    ),
    m(ids::LOAD_THROUGHPUT, "Read throughput", "MiB/s", Up, Load),
];

/// Looks an id up; unknown ids (e.g. from a command job's own figures) are `None`: their
/// direction comes only from a declaration (see `declarations`).
pub fn info(id: &str) -> Option<&'static MeasurementInfo> {
    if let Some((_, base)) = host_share(id) {
        return host_share_infos().iter().find(|m| m.id == base);
    }
    if let Some((_, base)) = request_figure(id) {
        return CATALOGUE.iter().find(|m| m.id == base);
    }
    CATALOGUE.iter().find(|m| m.id == id)
}

/// The figures each request of a mix has of its own (`load.req.NAME.` followed by one).
pub const REQUEST_FIGURES: [&str; 8] = [
    "rps",
    "requests",
    "errors",
    "bad_responses",
    "latency.p50",
    "latency.p90",
    "latency.p99",
    "latency.max",
];

/// One request of a mix's id as the request's name and the mix-wide id it is the request's
/// share of: `load.req.search.latency.p99` is (`search`, `load.latency.p99`); its `errors`
/// are the socket-level errors of its requests (`load.socket_errors`).
pub fn request_figure(id: &str) -> Option<(&str, String)> {
    let rest = id.strip_prefix("load.req.")?;
    let (name, figure) = rest.split_once('.')?;
    if name.is_empty() || !REQUEST_FIGURES.contains(&figure) {
        return None;
    }
    let base = match figure {
        "errors" => "load.socket_errors".to_string(),
        f => format!("load.{f}"),
    };
    Some((name, base))
}

/// The prefix of one load host's own figures: `load.hosts.NAME.rps` is host NAME's share of
/// `load.rps` when several hosts share the load.
pub const HOST_SHARE_PREFIX: &str = "load.hosts.";

/// One load host's id as its host and the merged id it is a share of:
/// `load.hosts.a.latency.p99` is (`a`, `load.latency.p99`).
pub fn host_share(id: &str) -> Option<(&str, String)> {
    let rest = id.strip_prefix(HOST_SHARE_PREFIX)?;
    let (host, figure) = rest.split_once('.')?;
    (!host.is_empty() && !figure.is_empty()).then(|| (host, format!("load.{figure}")))
}

/// The id of `host`'s share of the merged load id `id` (`load.rps` → `load.hosts.a.rps`).
pub fn host_share_id(host: &str, id: &str) -> String {
    format!(
        "{HOST_SHARE_PREFIX}{host}.{}",
        id.strip_prefix("load.").unwrap_or(id)
    )
}

/// The load figures as one host's share: same unit and direction, never judged on their own
/// (the merged figure is the verdict; a host's share moves with how connections were split).
fn host_share_infos() -> &'static [MeasurementInfo] {
    static INFOS: std::sync::OnceLock<Vec<MeasurementInfo>> = std::sync::OnceLock::new();
    INFOS.get_or_init(|| {
        CATALOGUE
            .iter()
            .filter(|m| m.id.starts_with("load."))
            .map(|m| MeasurementInfo {
                judged: false,
                ..*m
            })
            .collect()
    })
}

/// The label a table shows: `Max Working Set (MiB)`; a load host's share says its host.
pub fn label(id: &str) -> String {
    let on = host_share(id)
        .map(|(host, _)| format!(" on {host}"))
        .or_else(|| request_figure(id).map(|(name, _)| format!(" of {name}")))
        .unwrap_or_default();
    match info(id) {
        Some(m) if m.unit == "count" => format!("{}{on}", m.name),
        Some(m) => format!("{}{on} ({})", m.name, m.unit),
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
pub fn validate(id: &str) -> Result<(), UnknownMeasurement> {
    // Figures a command reports and runtime metrics are named by the program, not the
    // catalogue: they are known only once it ran.
    let open = ["cmd.", "app.metric."].iter().any(|p| {
        id.strip_prefix(p)
            .is_some_and(|rest| !rest.trim().is_empty())
    });
    if info(id).is_some() || open {
        Ok(())
    } else if let Some((_, base)) = host_share(id) {
        Err(UnknownMeasurement::HostFigure {
            id: id.to_string(),
            base,
        })
    } else {
        Err(UnknownMeasurement::Unknown(id.to_string()))
    }
}

/// An id no run can record: neither in the catalogue nor a command's or a runtime metric's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownMeasurement {
    #[error(
        "unknown measurement `{id}`: a load host's figure is load.hosts.NAME. followed by \
         a load figure, and `{base}` is not one"
    )]
    HostFigure { id: String, base: String },
    #[error(
        "unknown measurement `{0}` (a command's own figures are cmd.NAME, runtime metrics \
         app.metric.NAME); known: {known}",
        known = CATALOGUE.iter().map(|m| m.id).collect::<Vec<_>>().join(", ")
    )]
    Unknown(String),
}

/// The message alone, for the callers that still report errors as text.
impl From<UnknownMeasurement> for String {
    fn from(e: UnknownMeasurement) -> String {
        e.to_string()
    }
}
