//! A load tool's run as it travels between client and agent: what to run (the tool, the user's
//! options, the host's share of the load) and what came of it (the command line, the raw output,
//! the exit status and the tool's CPU). The agent builds the command line itself, so the files a
//! tool reads (a wrk Lua script, h2load's body file) are written on the host that runs it; the
//! client reads the output with the same parser as for a local run.

use super::error::ServiceError;
use super::protocol::SpecWire;
use serde::{Deserialize, Serialize};

/// One run of a tool on a load host.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolJobWire {
    /// The tool's name (`wrk`, `wrk2`, `bombardier`, `h2load`, `oha`).
    pub tool: String,
    /// The user's options, after rigor's flags and before the URL.
    pub args: Vec<String>,
    /// This host's share of the load (its `cpus` pin the tool there).
    pub spec: SpecWire,
    /// How long the run lasts (the warmup run's length, or the measured duration).
    pub length_ns: u64,
    /// A warmup the tool does itself before `length_ns` (h2load's `--warm-up-time`).
    #[serde(default)]
    pub own_warmup_ns: Option<u64>,
}

/// What one tool run on a load host gave: everything the client keeps and parses.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolRunWire {
    /// The command line as run there, program first.
    pub command: Vec<String>,
    /// Its standard output, as printed (at most 4 MiB).
    pub output: String,
    /// Its standard error.
    pub stderr: String,
    /// How it ended (`exit status: 0`).
    pub exit: String,
    /// Whether it ended with status 0.
    pub success: bool,
    /// From spawn to exit, seconds.
    pub wall_secs: f64,
    /// CPU its process tree used (user + system), seconds.
    pub cpu_secs: Option<f64>,
    /// The cores `load.cpu` is a share of on that host.
    pub cores: usize,
    /// The first line the tool printed for its version flag there.
    pub version: Option<String>,
}

/// How the agent runs a tool run to its end (`id` names it; `cancelled` says when to stop it
/// early): rigor's own runs it as a local run does. Errors are messages for people.
pub type ToolRunner = fn(
    job: &ToolJobWire,
    id: &str,
    cancelled: &dyn Fn() -> bool,
) -> Result<ToolRunWire, ServiceError>;
