//! Know where the load went: the listening socket must belong to the application's own tree.

use crate::result::{NetworkPath, Warning, WarningKind};
use rigor_probe::NetPath;
use std::net::SocketAddr;

/// Warns, naming the owner, when the port the load hits is held by a process outside the app's
/// tree (docker-proxy, socat, wslrelay…); returns the network path either way.
pub fn proxy_guard(app_pid: i32, addr: SocketAddr, warnings: &mut Vec<Warning>) -> NetworkPath {
    let tree = rigor_probe::descendants(app_pid);
    let owners = rigor_probe::listener_owners(addr);
    let path = match rigor_probe::net_path(addr.ip()) {
        NetPath::Loopback => "loopback",
        NetPath::LocalInterface => "local interface",
        NetPath::OtherHost => "other host",
    };
    let foreign: Vec<_> = owners.iter().filter(|o| !tree.contains(&o.pid)).collect();
    let network = NetworkPath {
        path: path.to_string(),
        target: addr.to_string(),
        owners: owners
            .iter()
            .map(|o| format!("{} ({})", o.pid, o.comm))
            .collect(),
        owned_by_app: !owners.is_empty() && foreign.is_empty(),
    };
    if !owners.is_empty() && foreign.len() == owners.len() {
        let names: Vec<String> = foreign
            .iter()
            .map(|o| format!("PID {} ({})", o.pid, o.comm))
            .collect();
        warnings.push(Warning::of(
            WarningKind::Proxy,
            format!(
                "the port the load hits ({addr}) is owned by {}, not by the application's process tree: \
                 the load goes through a proxy and measures it too",
                names.join(", ")
            )
));
    }
    network
}
