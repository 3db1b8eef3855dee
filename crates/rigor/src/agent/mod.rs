//! Load on other hosts: `rigor agent --stdio` runs the load engine on a load host and speaks
//! a line-based JSON protocol on its stdin and stdout; the client reaches it over any command
//! that gives a remote shell on stdio (ssh, `kubectl exec -i`, `docker exec -i`), installing
//! this same binary there first. Nothing listens on a port.

// The client side is an API for orchestration that drives load hosts; until a command calls
// it, only its tests do.
#[allow(dead_code)]
pub mod client;
#[allow(dead_code)]
pub mod install;
#[allow(dead_code)]
pub mod protocol;
pub mod serve;
#[allow(dead_code)]
pub mod transport;

#[allow(unused_imports)]
pub use client::{Agent, ClockOffset, Progress};
#[allow(unused_imports)]
pub use install::{Install, LocalBinary};
#[allow(unused_imports)]
pub use transport::HostSpec;
