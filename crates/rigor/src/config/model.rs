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
    pub app: AppJob,
    pub load: LoadJob,
}

/// Everything one scenario will run.
#[derive(Debug, Clone)]
pub struct ScenarioPlan {
    pub iterations: Option<usize>,
    pub variants: Vec<Option<String>>,
    pub rows: Vec<RowPlan>,
}
