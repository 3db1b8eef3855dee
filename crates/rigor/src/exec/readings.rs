//! Readings around an iteration: the page cache dropped before the app starts, the app's
//! memory watched across a readiness probe that asks for another URL than the load, and what
//! the rest of the machine did while the iteration was measured.

use super::app::AppProcess;
use super::iteration_context::IterationContext;
use crate::config::Ready;
use crate::guards;
use crate::result::{Iteration, MachineDuring, Warning, WarningKind};
use rigor_probe::{Cgroup, MachineReading, SchedWatch, SpanSamples};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Waits until the app is ready. An HTTP probe on another URL than the load's is watched: the
/// tree's memory is read before each poll until the server first takes a request (answers
/// HTTP, or holds the request past the poll's timeout), and again once
/// the probe passed; material growth in between is a warning naming the probe. A front that
/// accepts connections before the real server has started (a forwarder in the app's command)
/// does not make the real server's start-up the probe's growth: the tree still growing on its
/// own just before the first answer puts nothing on the probe.
pub fn ready_watching_memory(
    ctx: &IterationContext,
    load_url: &str,
    it: &mut Iteration,
    app: &mut AppProcess,
) -> anyhow::Result<Duration> {
    let (ready, timeout) = (&ctx.row.app.ready, ctx.row.app.ready_timeout);
    let url = match ready {
        Ready::Http(url) if guards::probes_another_url(url, load_url) => url,
        _ => return app.wait_ready(ready, timeout, &mut it.outside_window),
    };
    let pid = app.pid;
    // The readings of the last second before each poll, oldest first.
    let mut recent: VecDeque<(Instant, f64)> = VecDeque::new();
    let took = app.wait_ready_watching(ready, timeout, &mut it.outside_window, &mut || {
        if let Some(mib) = tree_rss_mib(pid) {
            let now = Instant::now();
            recent.push_back((now, mib));
            while recent
                .front()
                .is_some_and(|(t, _)| now - *t > Duration::from_secs(1))
            {
                recent.pop_front();
            }
        }
    })?;
    let Some(&(last_at, before)) = recent.back() else {
        return Ok(took);
    };
    let ages: Vec<(Duration, f64)> = recent.iter().map(|&(t, m)| (last_at - t, m)).collect();
    if guards::still_starting(&ages) {
        return Ok(took);
    }
    if let Some(after) = tree_rss_mib(pid) {
        guards::readiness_memory_guard(url, load_url, before, after, &mut it.warnings);
    }
    Ok(took)
}

/// The tree's RSS now, in MiB.
fn tree_rss_mib(pid: i32) -> Option<f64> {
    rigor_probe::sample_tree(pid, None).map(|s| s.rss_bytes as f64 / (1024.0 * 1024.0))
}

/// Drops the page cache before the app starts and records whether it could.
pub fn drop_caches(it: &mut Iteration) {
    match rigor_probe::drop_page_cache() {
        Ok(()) => it.caches_dropped = Some(true),
        Err(why) => {
            it.caches_dropped = Some(false);
            it.warnings.push(Warning::of(
                WarningKind::DropCaches,
                format!("--drop-caches: the page cache was not dropped: {why}"),
            ));
        }
    }
}

/// Where an iteration's application CPU is read, so the machine's busy time can be split into
/// the application's, rigor's and everything else's.
#[derive(Clone, Copy)]
pub enum AppCpu<'a> {
    /// Its cgroup's counter: every process that ever ran in it.
    Cgroup(&'a Cgroup),
    /// Its live process tree (and the children its members reaped).
    Tree(i32),
    /// What rigor's reaped children used: a command that exits inside the span.
    ReapedChildren,
    /// The application runs on another host: none of this machine's CPU is its.
    Elsewhere,
}

impl AppCpu<'_> {
    /// The cgroup when the application really is in it (it may have failed to join), else the
    /// tree rooted at `pid`.
    pub fn of(pid: i32, cgroup: Option<&Cgroup>) -> AppCpu<'_> {
        match cgroup {
            Some(c) if c.pids().contains(&pid) => AppCpu::Cgroup(c),
            _ => AppCpu::Tree(pid),
        }
    }

    fn ns(&self) -> Option<u64> {
        match self {
            AppCpu::Cgroup(c) => c.cpu_usage_ns(),
            AppCpu::Tree(pid) => rigor_probe::tree_cpu_ns(*pid),
            AppCpu::ReapedChildren => super::command::children_cpu_ns(),
            AppCpu::Elsewhere => Some(0),
        }
    }
}

/// The machine now. The load engines of agents rigor runs on this machine (and the transports
/// of remote ones) work for rigor: their CPU is rigor's own, not interference.
fn reading(app: AppCpu) -> rigor_probe::MachineReading {
    let mut r = rigor_probe::machine_reading(app.ns());
    // Load tools rigor ran work for rigor too (live ones are spared, so counted below).
    r.self_cpu_ns += super::tool_child::finished_cpu_ns();
    r.self_cpu_ns += super::reaper::spared()
        .into_iter()
        .filter_map(|pid| rigor_probe::tree_cpu_ns(pid as i32))
        .sum::<u64>();
    r
}

/// Who drives the load: the process whose threads' waits for a CPU tell whether the client
/// could keep up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// rigor's own engine: the worker threads of this process.
    Engine,
    /// A load tool rigor started on this machine.
    Tool(i32),
    /// No client on this machine (a command job, load hosts elsewhere).
    Elsewhere,
}

/// The application's processes, as [`AppCpu`] finds them, owned for the whole span.
enum AppTasks {
    Cgroup(Cgroup),
    Tree(i32),
    Elsewhere,
}

impl AppTasks {
    fn of(app: AppCpu) -> AppTasks {
        match app {
            AppCpu::Cgroup(c) => AppTasks::Cgroup(c.clone()),
            AppCpu::Tree(pid) => AppTasks::Tree(pid),
            AppCpu::ReapedChildren | AppCpu::Elsewhere => AppTasks::Elsewhere,
        }
    }

    fn pids(&self) -> Vec<i32> {
        match self {
            AppTasks::Cgroup(c) => c.pids(),
            AppTasks::Tree(pid) => rigor_probe::descendants(*pid),
            AppTasks::Elsewhere => Vec::new(),
        }
    }
}

/// The machine watched over an iteration's measured span: counters at its edges, the run
/// queue and clock sampled every [`MachineWatch::EVERY`] in between (and at both edges), and
/// the run-queue delay of the application's and the load client's threads.
pub struct MachineWatch {
    before: MachineReading,
    samples: SpanSamples,
    app_tasks: AppTasks,
    client: Client,
    app_sched: SchedWatch,
    client_sched: SchedWatch,
    sched_at: Instant,
    started: Instant,
}

impl MachineWatch {
    /// How often the run queue and the clock are sampled: often enough for a mean over a
    /// seconds-long span, rarely enough that the reads cost rigor next to nothing.
    pub const EVERY: Duration = Duration::from_millis(100);

    /// How often the threads' scheduler accounts are read: a thread that exits between two
    /// readings loses only what it did since the last one.
    pub const SCHED_EVERY: Duration = Duration::from_millis(250);

    /// Starts the span now; `client` is who drives the load (a tool is named once it runs,
    /// with [`MachineWatch::client`]).
    pub fn start(app: AppCpu, client: Client) -> MachineWatch {
        let mut samples = SpanSamples::every(Self::EVERY);
        samples.sample_now();
        let mut w = MachineWatch {
            before: reading(app),
            samples,
            app_tasks: AppTasks::of(app),
            client,
            app_sched: SchedWatch::default(),
            client_sched: SchedWatch::default(),
            sched_at: Instant::now(),
            started: Instant::now(),
        };
        w.read_sched();
        w
    }

    /// Watches the application's tree rooted at `pid` (a command job, whose CPU is read from
    /// rigor's reaped children once it exits).
    pub fn app_tree(&mut self, pid: i32) {
        self.app_tasks = AppTasks::Tree(pid);
        self.read_sched();
    }

    /// Names the load client from now on (a tool process just started).
    pub fn client(&mut self, client: Client) {
        self.client = client;
        self.read_sched();
    }

    fn read_sched(&mut self) {
        self.sched_at = Instant::now();
        self.app_sched.read(&self.app_tasks.pids());
        match self.client {
            Client::Engine => self
                .client_sched
                .read_named(std::process::id() as i32, rigor_load::WORKER_THREAD_PREFIX),
            Client::Tool(pid) => self.client_sched.read(&rigor_probe::descendants(pid)),
            Client::Elsewhere => {}
        }
    }

    /// Samples the run queue and the clock if the last sample is old enough; called from the
    /// loops that wait for the span to end.
    pub fn tick(&mut self) {
        self.samples.sample();
        if self.sched_at.elapsed() >= Self::SCHED_EVERY {
            self.read_sched();
        }
    }

    /// Ends the span now: the readings, with their warnings added to `warnings`.
    pub fn finish(mut self, app: AppCpu, warnings: &mut Vec<Warning>) -> MachineDuring {
        let after = reading(app);
        self.samples.sample_now();
        self.read_sched();
        let mut m = guards::machine_guards(&self.before, &after, &self.samples, warnings);
        let client = self.client_sched.span();
        m.app_wait_per_cpu = self.app_sched.span().and_then(|t| t.wait_per_cpu());
        m.client_wait_per_cpu = client.and_then(|t| t.wait_per_cpu());
        let name = match self.client {
            Client::Engine => "the load engine".to_string(),
            Client::Tool(_) => "the load tool".to_string(),
            Client::Elsewhere => String::new(),
        };
        if let Some(c) = client {
            let span = self.started.elapsed().as_nanos() as f64;
            let threads = self.client_sched.threads().max(1) as f64;
            let waited_pct = c.wait_ns as f64 / (span * threads) * 100.0;
            guards::client_starved_guard(&name, &c, waited_pct, warnings);
        }
        m
    }
}
