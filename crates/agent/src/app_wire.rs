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
