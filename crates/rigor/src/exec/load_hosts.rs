//! A load shared by several hosts. Each host runs rigor's engine through its agent with its
//! share of the connections (and of the rate), all opening their measured window at one
//! instant on their own clocks (corrected by the measured offset); the reports merge exactly:
//! summed counts, merged latency histograms. Agents stay connected between iterations, and one
//! whose transport failed is connected afresh next time.

use crate::config::Host;
use rigor_agent::client::ClockOffset;
use rigor_agent::protocol::HostPath;
use rigor_agent::{Agent, Install};
use rigor_load::{Live, LoadReport, LoadSpec, Phase};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// How long before the common start every agent is told it: enough for the message to travel.
const START_MARGIN: Duration = Duration::from_millis(300);

/// Beyond the window, how long a host may take to send its report (its drain and the trip).
pub(super) const REPORT_GRACE: Duration = Duration::from_secs(30);

/// What each host measured, merged and apart.
pub struct HostLoads {
    pub merged: LoadReport,
    pub hosts: Vec<HostLoad>,
}

/// One host's share: what it measured and how its clock was put on rigor's.
pub struct HostLoad {
    pub name: String,
    pub report: LoadReport,
    /// Its wall clock minus rigor's, from the fastest round trip, and that round trip.
    pub clock_offset_ms: f64,
    pub clock_rtt_ms: f64,
    /// The host as its agent described itself.
    pub environment: serde_json::Value,
    /// How the host reached the load's URL.
    pub network: HostPath,
    /// The addresses its connections came from (empty: the kernel chose), kept so a result
    /// says which host held which connections.
    pub source_addrs: Vec<std::net::IpAddr>,
}

/// Agents connected by earlier iterations, by host name.
static AGENTS: Mutex<Vec<Agent>> = Mutex::new(Vec::new());

/// Runs `spec` shared by `hosts`; `live` follows the slowest host's phase and the sum of their
/// responses; `stop` cancels every host. Errors name the host.
pub fn run(
    spec: &LoadSpec,
    hosts: &[Host],
    app_host: Option<&str>,
    live: &Live,
    stop: &AtomicBool,
) -> anyhow::Result<HostLoads> {
    let shares = host_shares(spec, hosts);
    with_agents(hosts, &spec.url, app_host, |agents, paths| {
        drive(agents, &shares, spec, live, stop, paths)
    })
}

/// Runs `f` with the agent of each host (reusing those still connected) and how each reaches
/// `url` (a host that would load itself is refused first). The agents are kept for the next
/// iteration when `f` succeeds; after a failure each is connected afresh next time.
pub(super) fn with_agents<T>(
    hosts: &[Host],
    url: &str,
    app_host: Option<&str>,
    f: impl FnOnce(&mut [Agent], Vec<HostPath>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let mut agents = connected(hosts)?;
    let result = paths(&mut agents, url, app_host).and_then(|paths| f(&mut agents, paths));
    // After a failure no agent of this load is trusted again: each is connected afresh.
    if result.is_ok() {
        AGENTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(agents);
    } else {
        agents.into_iter().for_each(disconnect);
    }
    result
}

/// The row's first request, sent from `host` (the first load host that is not this machine):
/// (status, latency, bytes sent, whether `find` was in the body). The load hosts reach the URL;
/// this machine may not.
pub fn first_request(
    host: &Host,
    app_host: Option<&str>,
    spec: &LoadSpec,
    timeout: Duration,
    find: Option<&[u8]>,
) -> anyhow::Result<(u16, Duration, u64, Option<bool>)> {
    let mut agents = connected(std::slice::from_ref(host))?;
    // The path first: a host that would reach the URL on itself is said as such.
    let result = paths(&mut agents, &spec.url, app_host).and_then(|_| {
        agents[0]
            .probe(
                &spec.url,
                &spec.method,
                &spec.headers,
                spec.body.as_deref(),
                timeout,
                find,
                spec.insecure,
                spec.http2,
            )
            .map_err(anyhow::Error::msg)
    });
    let mut agent = agents.pop().expect("one agent");
    if agent.alive() {
        AGENTS.lock().unwrap_or_else(|e| e.into_inner()).push(agent);
    } else {
        disconnect(agent);
    }
    result
}

/// Ends every agent still connected: at the end of a run, so none waits for the process to
/// exit.
pub fn disconnect_all() {
    let agents = std::mem::take(&mut *AGENTS.lock().unwrap_or_else(|e| e.into_inner()));
    agents.into_iter().for_each(disconnect);
}

fn disconnect(agent: Agent) {
    let pid = agent.transport_pid();
    drop(agent);
    super::reaper::unspare(pid);
}

/// The agent of each host, reusing those still connected.
fn connected(hosts: &[Host]) -> anyhow::Result<Vec<Agent>> {
    let mut kept = AGENTS.lock().unwrap_or_else(|e| e.into_inner());
    let mut agents = Vec::new();
    for h in hosts {
        let agent = match kept.iter().position(|a| a.name() == h.name) {
            Some(i) => kept.swap_remove(i),
            None => match Agent::connect(h) {
                Ok(agent) => {
                    if agent.install() == Install::Copied {
                        crate::console::err(&format!(
                            "load host {}: rigor copied into its cache (checksum verified)",
                            h.name
                        ));
                    }
                    // Its transport serves every iteration: no iteration's sweep may end it.
                    super::reaper::spare(agent.transport_pid());
                    agent
                }
                Err(e) => {
                    agents.into_iter().for_each(disconnect);
                    return Err(anyhow::Error::msg(e));
                }
            },
        };
        agents.push(agent);
    }
    Ok(agents)
}

/// How each load host reaches the URL. A host other than this machine and the application's
/// that reaches it on itself (loopback, an address of its own) would load itself, not the
/// application: refused, naming the host.
fn paths(agents: &mut [Agent], url: &str, app_host: Option<&str>) -> anyhow::Result<Vec<HostPath>> {
    let mut out = Vec::new();
    for a in agents.iter_mut() {
        let path = a.network_path(url).map_err(anyhow::Error::msg)?;
        let name = a.name().to_string();
        if let Some(e) = &path.error {
            return Err(anyhow::anyhow!(
                "load host {name}: {url} does not resolve there: {e}"
            ));
        }
        if path.is_own() && !app_here(&name, a.host_info(), app_host) {
            return Err(anyhow::anyhow!(
                "load host {name}: {url} is {} there, {} of that host, not of the \
                 application's{}: its load would not reach the application (use an address \
                 the load hosts reach the application's host by)",
                path.target,
                if path.path == "loopback" {
                    "the loopback"
                } else {
                    "an address"
                },
                if path.owners.is_empty() {
                    String::new()
                } else {
                    format!(" (there it is served by {})", path.owners.join(", "))
                }
            ));
        }
        out.push(path);
    }
    Ok(out)
}

/// Whether the application is on load host `name`'s own machine and network, where its own
/// address (loopback included) reaches the application: it is the application's host, or the
/// application runs here and the host is this machine (`local`, or an agent that shares rigor's
/// boot and network namespace, such as one reached through `env`).
fn app_here(name: &str, info: &rigor_agent::protocol::HostInfo, app_host: Option<&str>) -> bool {
    match app_host {
        Some(h) => h == name,
        None => {
            name == crate::config::LOCAL
                || (!info.network.is_empty()
                    && info.network == rigor_agent::protocol::network_identity())
        }
    }
}

fn drive(
    agents: &mut [Agent],
    shares: &[LoadSpec],
    spec: &LoadSpec,
    live: &Live,
    stop: &AtomicBool,
    paths: Vec<HostPath>,
) -> anyhow::Result<HostLoads> {
    let (offsets, start, started) = common_start(agents)?;
    let id = next_id();
    for (a, share) in agents.iter_mut().zip(shares) {
        a.start_load(&id, share, start)
            .map_err(anyhow::Error::msg)?;
    }
    let window_end = started + spec.warmup + spec.duration;
    let deadline = window_end + spec.timeout + REPORT_GRACE;
    let mut reports: Vec<Option<LoadReport>> = agents.iter().map(|_| None).collect();
    let mut cancelled = false;
    while reports.iter().any(Option::is_none) {
        if stop.load(Ordering::SeqCst) && !cancelled {
            for a in agents.iter_mut() {
                let _ = a.cancel(&id);
            }
            cancelled = true;
        }
        for (a, r) in agents.iter_mut().zip(reports.iter_mut()) {
            if r.is_none() {
                *r = a
                    .poll_load(&id, Duration::from_millis(20))
                    .map_err(anyhow::Error::msg)?;
            }
        }
        follow(
            live,
            agents,
            &id,
            started,
            spec,
            reports.iter().all(Option::is_some),
        );
        if Instant::now() > deadline {
            let late: Vec<&str> = agents
                .iter()
                .zip(&reports)
                .filter(|(_, r)| r.is_none())
                .map(|(a, _)| a.name())
                .collect();
            return Err(anyhow::anyhow!(
                "no report from {} {:.0}s after the window closed",
                late.join(", "),
                (spec.timeout + REPORT_GRACE).as_secs_f64()
            ));
        }
    }
    let reports: Vec<LoadReport> = reports.into_iter().flatten().collect();
    let mut merged = rigor_load::merge(&reports);
    merged.url = spec.url.clone();
    merged.window_opened_at = Some(started + spec.warmup);
    let hosts = agents
        .iter()
        .zip(reports)
        .zip(offsets)
        .zip(paths)
        .zip(shares)
        .map(|((((a, report), o), network), share)| HostLoad {
            network,
            source_addrs: share.source_addrs.clone(),
            name: a.name().to_string(),
            report,
            clock_offset_ms: o.offset_ns as f64 / 1e6,
            clock_rtt_ms: o.rtt.as_secs_f64() * 1e3,
            environment: serde_json::to_value(a.host_info()).unwrap_or_default(),
        })
        .collect();
    Ok(HostLoads { merged, hosts })
}

/// Each agent's clock offset, measured afresh, and a start instant every host can be told in
/// time: on rigor's wall clock (to send) and on its monotonic clock (to follow).
pub(super) fn common_start(
    agents: &mut [Agent],
) -> anyhow::Result<(Vec<ClockOffset>, SystemTime, Instant)> {
    let mut offsets = Vec::new();
    for a in agents.iter_mut() {
        offsets.push(a.clock_offset().map_err(anyhow::Error::msg)?);
    }
    let slowest = offsets.iter().map(|o| o.rtt).max().unwrap_or_default();
    let start = SystemTime::now() + START_MARGIN + 2 * slowest;
    let started = Instant::now() + START_MARGIN + 2 * slowest;
    Ok((offsets, start, started))
}

/// Each host's own figures (`load.hosts.NAME.*`), its warnings said with its name, and its
/// report, clock and environment beside the merged report in the iteration's `load`.
pub fn record(hosts: &[HostLoad], it: &mut crate::result::Iteration) {
    if hosts.is_empty() {
        return;
    }
    let mut kept = serde_json::Map::new();
    for h in hosts {
        for (id, v) in h.report.measurements() {
            it.measurements
                .insert(crate::measurements::host_share_id(&h.name, id), v);
        }
        let mut said = Vec::new();
        crate::guards::load_guards(&h.report, &mut said);
        for mut w in said {
            w.message = format!("load host {}: {}", h.name, w.message);
            it.warnings.push(w);
        }
        kept.insert(
            h.name.clone(),
            serde_json::json!({
                "report": h.report,
                "clock_offset_ms": h.clock_offset_ms,
                "clock_rtt_ms": h.clock_rtt_ms,
                "environment": h.environment,
                "network": h.network,
                "source_addrs": h.source_addrs,
            }),
        );
    }
    if let Some(serde_json::Value::Object(load)) = it.load.as_mut() {
        load.insert("hosts".into(), serde_json::Value::Object(kept));
    }
}

/// The live line: the phase by the common clock, the responses the hosts have said.
fn follow(
    live: &Live,
    agents: &[Agent],
    id: &str,
    started: Instant,
    spec: &LoadSpec,
    all_in: bool,
) {
    let now = Instant::now();
    let phase = if all_in {
        Phase::Done
    } else if now < started {
        Phase::Starting
    } else if now < started + spec.warmup {
        Phase::Warmup
    } else {
        Phase::Measuring
    };
    live.set_phase(phase);
    let (done, errors) = agents
        .iter()
        .filter_map(|a| a.progress(id))
        .fold((0, 0), |(d, e), p| (d + p.requests, e + p.errors));
    live.completed.store(done, Ordering::Relaxed);
    live.errors.store(errors, Ordering::Relaxed);
}

/// A fresh id for a load (or tool run) on the hosts.
pub(super) fn next_id() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!("load-{}", N.fetch_add(1, Ordering::Relaxed) + 1)
}

/// `spec` cut into `n` shares: the connections split as evenly as they go (the first hosts
/// take one more), the rate (or the stages' rates) in proportion to the connections, threads
/// no more than a share's connections. Needs at least one connection per host (the config checks it).
pub fn shares(spec: &LoadSpec, n: usize) -> Vec<LoadSpec> {
    let n = n.max(1);
    let (each, extra) = (spec.connections / n, spec.connections % n);
    (0..n)
        .map(|i| {
            let connections = each + usize::from(i < extra);
            LoadSpec {
                connections,
                threads: spec.threads.min(connections).max(1),
                rate: spec
                    .rate
                    .map(|r| r * connections as f64 / spec.connections as f64),
                // Stages in the same proportion; each host's mix draws its own sequence.
                stages: spec
                    .stages
                    .iter()
                    .map(|s| rigor_load::Stage {
                        rate: s.rate * connections as f64 / spec.connections as f64,
                        ..*s
                    })
                    .collect(),
                mix: spec.mix.clone().map(|m| rigor_load::RequestMix {
                    seed: m.seed.wrapping_add(i as u64),
                    ..m
                }),
                ..spec.clone()
            }
        })
        .collect()
}

/// [`shares`] of `spec`, one per host in order, each from the host's own source addresses
/// when it has some (each machine's addresses are its own, and each process's open-file limit
/// bounds its share).
pub fn host_shares(spec: &LoadSpec, hosts: &[Host]) -> Vec<LoadSpec> {
    let mut out = shares(spec, hosts.len());
    for (share, host) in out.iter_mut().zip(hosts) {
        if !host.source_addrs.is_empty() {
            share.source_addrs = host.source_addrs.clone();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_host_on_this_machines_network_reaches_a_local_application() {
        use rigor_agent::protocol::{network_identity, HostInfo};
        let here = HostInfo {
            hostname: "h".into(),
            cpus: 1,
            kernel: "k".into(),
            network: network_identity(),
        };
        assert!(!here.network.is_empty());
        assert!(app_here("h1", &here, None));
        assert!(app_here("local", &here, None));
        let elsewhere = HostInfo {
            network: "other-boot/net:[1]".into(),
            ..here.clone()
        };
        assert!(!app_here("h1", &elsewhere, None));
        // An agent that did not say is not taken for this machine.
        let unsaid = HostInfo {
            network: String::new(),
            ..here.clone()
        };
        assert!(!app_here("h1", &unsaid, None));
        // The application on a host of its own: only that host reaches it on its own address.
        assert!(app_here("app1", &elsewhere, Some("app1")));
        assert!(!app_here("h1", &here, Some("app1")));
    }

    #[test]
    fn a_host_with_source_addresses_of_its_own_uses_them_for_its_share() {
        let spec = LoadSpec {
            connections: 5,
            source_addrs: vec!["127.0.0.1".parse().unwrap()],
            ..Default::default()
        };
        let own: Vec<std::net::IpAddr> =
            vec!["127.0.1.1".parse().unwrap(), "127.0.1.2".parse().unwrap()];
        let hosts = [
            Host {
                name: "a".into(),
                source_addrs: own.clone(),
                ..Default::default()
            },
            Host {
                name: "b".into(),
                ..Default::default()
            },
        ];
        let s = host_shares(&spec, &hosts);
        assert_eq!(s[0].source_addrs, own);
        assert_eq!(s[1].source_addrs, spec.source_addrs);
        assert_eq!((s[0].connections, s[1].connections), (3, 2));
    }

    #[test]
    fn shares_split_connections_rate_and_threads_without_losing_any() {
        let spec = LoadSpec {
            connections: 10,
            threads: 4,
            rate: Some(1000.0),
            ..Default::default()
        };
        let s = shares(&spec, 3);
        let conns: Vec<usize> = s.iter().map(|s| s.connections).collect();
        assert_eq!(conns, [4, 3, 3]);
        assert_eq!(s.iter().map(|s| s.threads).collect::<Vec<_>>(), [4, 3, 3]);
        let rate: f64 = s.iter().map(|s| s.rate.unwrap()).sum();
        assert!((rate - 1000.0).abs() < 1e-9, "{rate}");
        assert_eq!(s[0].rate, Some(400.0));
        let closed = shares(
            &LoadSpec {
                connections: 2,
                threads: 1,
                ..Default::default()
            },
            2,
        );
        assert!(closed
            .iter()
            .all(|s| s.connections == 1 && s.rate.is_none()));
    }
}
