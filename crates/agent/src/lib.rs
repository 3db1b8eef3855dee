//! Work on other hosts: `rigor agent --stdio` runs the load engine (or a load tool) on a load
//! host, or builds,
//! starts and measures the application on its host, and speaks
//! a line-based JSON protocol on its stdin and stdout; the client reaches it over any command
//! that gives a remote shell on stdio (ssh, `kubectl exec -i`, `docker exec -i`), installing
//! this same binary there first. Nothing listens on a port.
//!
//! A crate of its own because the protocol is a contract between two rigor processes that
//! needs nothing else of rigor: the compiler keeps it free of the configuration, the results
//! and the reports, and its tests link this crate instead of the whole application. What runs
//! applications and load tools on a host is rigor's, handed in as an [`app_host::AppService`]
//! and a [`tool_wire::ToolRunner`].

pub mod app_host;
pub mod app_wire;
pub mod client;
pub mod error;
pub mod install;
pub mod protocol;
pub mod serve;
pub mod sources;
pub mod tool_wire;
pub mod transport;

pub use client::Agent;
pub use error::{AgentError, ServiceError};
pub use install::Install;
pub use transport::HostSpec;
