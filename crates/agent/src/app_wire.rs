//! The application as it travels to the agent of its host: the job with its folder left out
//! (the agent unpacks the sources into a folder of its own) and its artifact relative to it.

use serde::{Deserialize, Serialize};

/// An application job without its folder; the agent supplies the folder.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AppWire {
    pub name: String,
    pub build: Option<String>,
    /// The artifact, relative to the job's folder.
    pub artifact: Option<String>,
    pub command: String,
    pub ready: ReadyWire,
    pub ready_timeout_ns: u64,
    pub stop_timeout_ns: u64,
    pub build_timeout_ns: u64,
    pub env: Vec<(String, String)>,
    pub cpus: Option<Vec<usize>>,
    pub priority_high: bool,
    pub configuration: Option<String>,
    /// The container the application runs in, when it ships as an image: the host's own
    /// engine builds or finds the image and starts a fresh container each iteration.
    #[serde(default)]
    pub container: Option<ContainerWire>,
}

/// A container application's keys as they travel: the Dockerfile and its context relative to
/// the job's folder (only the folder reaches the host), the engine by its client's name.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ContainerWire {
    /// `image`: a name or id the host's engine holds.
    pub image: Option<String>,
    /// `dockerfile`, relative to the job's folder.
    pub dockerfile: Option<String>,
    /// `context`, relative to the job's folder (`.` for the folder itself).
    pub context: Option<String>,
    /// `podman` or `docker`; none picks the first that answers on the host.
    pub engine: Option<String>,
    pub publish: Vec<String>,
    pub network: Option<String>,
    pub args: Vec<String>,
}

/// [`Ready`] on the wire.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum ReadyWire {
    Http(String),
    Tcp(String),
    Stdout(String),
    Stderr(String),
}
