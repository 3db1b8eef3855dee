//! What the agent tests share: hosts reached by running their commands on this machine (`env
//! …` as the transport, each with its own cache folder), scratch folders and a testbed server.
//! The agent is the rigor-agent crate.

use hello_server::{Config, Server};
use rigor_agent::transport::{sh_quote, HostSpec};
use std::path::{Path, PathBuf};

/// A fresh scratch folder named after the test file's `prefix` and `name`.
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rigor-{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A host reached by running its commands here, with its own cache folder.
pub fn local_host(name: &str, cache: &Path) -> HostSpec {
    HostSpec {
        name: name.into(),
        transport: Some(format!(
            "env XDG_CACHE_HOME={}",
            sh_quote(&cache.display().to_string())
        )),
        ..HostSpec::default()
    }
}

/// The testbed on a free loopback port, one thread.
pub fn server() -> Server {
    hello_server::start(Config {
        port: 0,
        threads: 1,
        ..Config::default()
    })
    .expect("start hello-server")
}
