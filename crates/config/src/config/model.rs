//! Jobs with every `{{var}}` resolved and every value checked: what the runner executes.

use rigor_load::LoadSpec;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How readiness is detected.
#[derive(Debug, Clone, PartialEq)]
pub enum Ready {
    /// A 2xx answer on this URL.
    Http(String),
    /// A TCP connect to `host:port`.
    Tcp(String),
    /// This text appears in the application's output (stdout).
    Stdout(String),
    /// This text appears in the application's error output (stderr).
    Stderr(String),
}

/// The application role of one row of one variant.
#[derive(Debug, Clone)]
pub struct AppJob {
    pub name: String,
    pub dir: PathBuf,
    pub build: Option<String>,
    pub artifact: Option<PathBuf>,
    pub command: String,
    pub ready: Ready,
    pub ready_timeout: Duration,
    pub stop_timeout: Duration,
    /// A build still running after this long is killed (its whole process tree) and fails.
    pub build_timeout: Duration,
    pub env: Vec<(String, String)>,
    pub versions: Vec<(String, String)>,
    pub configuration: Option<String>,
    pub cpus: Option<Vec<usize>>,
    pub priority_high: bool,
    /// `metrics = URL`: the Prometheus/OpenMetrics endpoint scraped during the iteration.
    pub metrics: Option<MetricsScrape>,
    /// `ref` on the row's variant: the commit `dir` is a worktree of.
    pub git_ref: Option<super::GitRef>,
    /// The host it builds and runs on (its sources travel there); `None` is this machine.
    pub host: Option<super::Host>,
    /// `image` or `dockerfile`: the application is a fresh container each iteration.
    pub container: Option<ContainerJob>,
}

/// An application shipped as a container image: which image and how the engine runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerJob {
    pub image: ImageSource,
    /// `engine`; `None` picks the first engine that answers, docker first.
    pub engine: Option<EngineKind>,
    /// `publish`: each one `--publish` of the engine's `run`.
    pub publish: Vec<String>,
    /// `network`: `host` or a network name; `None` is the engine's default.
    pub network: Option<String>,
    /// `container_args`: more arguments of `run`, before the image.
    pub args: Vec<String>,
}

/// Where a container's image comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSource {
    /// An image the engine already has (or pulls), by name or id.
    Named(String),
    /// A Dockerfile the engine builds, with its build context.
    Built {
        dockerfile: PathBuf,
        context: PathBuf,
    },
}

/// The container engines rigor speaks to, each through its own command-line client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    Podman,
    Docker,
}

impl EngineKind {
    /// The engine's client program (`podman`, `docker`).
    pub fn program(self) -> &'static str {
        match self {
            EngineKind::Podman => "podman",
            EngineKind::Docker => "docker",
        }
    }
}

/// Where an application's runtime metrics are read and which series count.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsScrape {
    /// An `http://` URL answering the Prometheus text format.
    pub url: String,
    /// `metrics_select`: series written as `NAME{label="value",…}`; a family named here is
    /// recorded from the selected series only, every other family is the sum of its series.
    pub select: Vec<String>,
}

/// What a row does once its process runs: serve a load, or run to completion on its own.
#[derive(Debug, Clone)]
pub enum Work {
    /// An application job measured under the built-in engine's load.
    Load(Box<LoadJob>),
    /// A command job: runs to completion and reports its own figures on stdout.
    Command(CommandWork),
}

impl Work {
    /// The load job, for rows that have one.
    pub fn load(&self) -> Option<&LoadJob> {
        match self {
            Work::Load(l) => Some(l),
            Work::Command(_) => None,
        }
    }
}

/// How a command job's run is bounded and how its figures are read from its output.
#[derive(Debug, Clone)]
pub struct CommandWork {
    /// A run still going after this long is killed and the iteration fails.
    pub timeout: Duration,
    /// `[jobs.NAME.extract.ID]` rules, in the order written.
    pub extract: Vec<ExtractRule>,
}

/// `[jobs.NAME.extract.ID]`: a figure read from lines of output nobody can change.
#[derive(Debug, Clone)]
pub struct ExtractRule {
    /// The rule's name; the figure is stored as `cmd.NAME`.
    pub name: String,
    /// Matched against each line of stdout; the named capture `value` is the figure, and the
    /// capture named by `row` (when set) the row it belongs to.
    pub regex: regex::Regex,
    pub unit: Option<String>,
    pub direction: rigor_model::declarations::Better,
    pub label: Option<String>,
    /// `row = "clients"`: each matching line is the row `clients=<capture>`.
    pub row: Option<String>,
}

/// The load role of one row: what the engine runs, plus where it goes and how it is checked.
#[derive(Debug, Clone)]
pub struct LoadJob {
    /// The engine's settings, checked against the engine's and the machine's limits.
    pub spec: LoadSpec,
    /// Where `spec.url` points, resolved once when the config is read.
    pub addr: std::net::SocketAddr,
    /// `priority = "high"` on the load role: rigor raises its own priority (the engine runs in it).
    pub priority_high: bool,
    pub validate: Option<Validate>,
    /// The hosts that share the load, each driving its share of the connections (and of the
    /// rate); empty when the engine runs in rigor itself.
    pub hosts: Vec<super::Host>,
    /// `tool = "wrk"` (and its `args`): an external load tool drives the load instead of the
    /// engine, with `spec` mapped onto its flags.
    pub tool: Option<crate::tools::ToolSpec>,
    /// `find_rate`: the row's load searches for the highest rate meeting an objective; `spec`
    /// is the job each probe runs at its own rate.
    pub find_rate: Option<rigor_load::capacity::FindRate>,
    /// `network = "container"`: the load runs inside the application container's network
    /// namespace (readiness and the first request too), with no published port in between.
    pub in_container: bool,
}

/// Checks the row's own URL once after readiness.
#[derive(Debug, Clone, PartialEq)]
pub struct Validate {
    pub status: Option<u16>,
    pub body_contains: Option<String>,
}

/// One row of one variant: the matrix values it stands for and its resolved jobs.
#[derive(Debug, Clone)]
pub struct RowPlan {
    pub variables: BTreeMap<String, String>,
    pub variant: Option<String>,
    /// The process started each iteration: an application, or the command job itself.
    pub app: AppJob,
    pub work: Work,
}

/// Everything one scenario will run.
#[derive(Debug, Clone)]
pub struct ScenarioPlan {
    pub iterations: Option<usize>,
    /// `cpu_profile` of the scenario, else of the profile: how stacks are walked when every
    /// iteration is profiled; `None` when it is not asked for.
    pub cpu_profile: Option<StackWalk>,
    pub variants: Vec<Option<String>>,
    pub rows: Vec<RowPlan>,
}

/// How a CPU profile walks call stacks (`cpu_profile = true` or `"dwarf"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackWalk {
    /// By frame pointer: cheap, needs code built with frame pointers.
    FramePointer,
    /// By DWARF unwinding information: no frame pointers needed, costs more per sample.
    Dwarf,
}
