//! Why work on another host (or the agent's own work) failed. Each variant about a host starts
//! with its label (`host NAME`), so the message alone says where; the variants let a caller
//! tell a timeout, an interrupt, a refusal and a dead transport apart without reading text.

use crate::protocol::{PROTOCOL, RIGOR_VERSION};
use std::path::PathBuf;
use std::sync::Arc;

/// An error of the agent's client, its installer, its transport or its server.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The agent answered with an error; `about` says about what (`load ID: `, `sources: `,
    /// `the agent: `, or nothing when the message names it already).
    #[error("{host}: {about}{message}")]
    Refused {
        host: String,
        about: String,
        message: String,
    },
    /// No answer came in time.
    #[error("{host}: timed out waiting for {waiting_for}")]
    TimedOut { host: String, waiting_for: String },
    /// The user interrupted the wait.
    #[error("{host}: interrupted while {doing}")]
    Interrupted { host: String, doing: String },
    /// The agent is another rigor, or speaks another protocol.
    #[error(
        "{host}: protocol mismatch: the agent is rigor {version} speaking protocol {protocol}; \
         this is rigor {RIGOR_VERSION} speaking protocol {PROTOCOL}"
    )]
    Mismatch {
        host: String,
        version: String,
        protocol: u32,
    },
    /// The agent lacks a capability the work needs; `why` ends the sentence.
    #[error("{host}: the agent cannot run {what} (it offers {offers:?}){why}")]
    Incapable {
        host: String,
        what: &'static str,
        offers: Vec<String>,
        why: &'static str,
    },
    /// A line from the agent is a JSON object but no message this client reads.
    #[error(
        "{host}: unreadable message from the agent while waiting for {waiting_for}: {error}: \
         {start}"
    )]
    Unreadable {
        host: String,
        waiting_for: String,
        error: String,
        start: String,
    },
    /// A load report came but its histograms do not decode.
    #[error("{host}: the report of load {id}: {error}")]
    BadReport {
        host: String,
        id: String,
        error: String,
    },
    /// The host's settings give no command line (no ssh nor transport, both, a bad quote).
    #[error("{host}: {why}")]
    Settings { host: String, why: String },
    /// The transport (ssh, kubectl, …) could not start, failed, died or was stopped; `why`
    /// says how, with the tail of its stderr.
    #[error("{host}: {why}")]
    Transport { host: String, why: String },
    /// The host cannot take this rigor binary (another system, no sha256sum, a shell that
    /// printed nothing).
    #[error("{host}: {why}")]
    Install { host: String, why: String },
    /// A local file or folder could not be read or written: `doing` names the act.
    #[error("{doing} {}: {source}", path.display())]
    Io {
        doing: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The running executable could not be found.
    #[error("finding the running rigor binary: {0}")]
    NoExecutable(std::io::Error),
    /// The running executable's error, kept for every later connection of this process.
    #[error(transparent)]
    Binary(Arc<AgentError>),
    /// Sources too large to send: most likely a build output folder.
    #[error(
        "the sources in {} exceed {max_mib} MiB (at {}, {file_mib} MiB): is a build output \
         folder in it? (in a git work tree, ignored files are left out)",
        dir.display(),
        at.display()
    )]
    TooLarge {
        dir: PathBuf,
        max_mib: usize,
        at: PathBuf,
        file_mib: u64,
    },
    /// A load's request body sent to the agent is not base64.
    #[error("the request body is not valid base64: {0}")]
    BadBody(#[from] base64::DecodeError),
    /// The load spec sent to the agent cannot run.
    #[error(transparent)]
    Load(#[from] rigor_load::LoadError),
    /// The client speaks another protocol than this agent.
    #[error(
        "the client speaks agent protocol version {0}; this agent (rigor {RIGOR_VERSION}) \
         speaks version {PROTOCOL}"
    )]
    ClientMismatch(u32),
    /// A thread of the agent's server could not start.
    #[error("starting the {what} thread: {source}")]
    Thread {
        what: String,
        source: std::io::Error,
    },
    /// A load's start time passed too long ago on this host's clock.
    #[error(
        "the start time passed {late_secs:.3}s ago on this host's clock: the load would not \
         share the other hosts' window (send it earlier, or measure the clock offset again)"
    )]
    StartPassed { late_secs: f64 },
    /// The load was cancelled before its start time came.
    #[error("cancelled before it started")]
    CancelledBeforeStart,
}

/// What an [`crate::app_host::AppService`] or a [`crate::tool_wire::ToolRunner`] reports:
/// the implementation is the caller's, and the agent only sends its message to the client.
pub type ServiceError = Box<dyn std::error::Error + Send + Sync>;
