//! The path from the load to a container: inside its own network namespace (nothing in
//! between), or through a published port, where a userspace proxy (docker-proxy, rootlessport,
//! slirp4netns, pasta) is the same trap as socat in front of a host process.

use crate::result::{NetworkPath, Warning, WarningKind};
use std::net::SocketAddr;

/// The engine's own process that holds a published port only to reserve it while the kernel
/// forwards the packets (podman's container monitor): not a proxy.
const RESERVES_PORTS: &[&str] = &["conmon"];

/// Whether the process named `comm` holding a published port is the engine's reservation of
/// it (not a proxy): the container's own port.
pub fn reserves_port(comm: &str) -> bool {
    RESERVES_PORTS.contains(&comm)
}

/// The load ran inside the container's network namespace.
pub fn own_network(addr: SocketAddr) -> NetworkPath {
    NetworkPath {
        path: "container network namespace".into(),
        target: addr.to_string(),
        owners: Vec::new(),
        owned_by_app: true,
    }
}

/// Who holds the port the load hits, for a container's published port: the `proxy` warning
/// names any process outside the container that does, except the engine's port reservation.
pub fn proxy_guard(init_pid: i32, addr: SocketAddr, warnings: &mut Vec<Warning>) -> NetworkPath {
    let tree = rigor_probe::descendants(init_pid);
    let owners = rigor_probe::listener_owners(addr);
    let held: Vec<(i32, &str)> = owners.iter().map(|o| (o.pid, o.comm.as_str())).collect();
    let proxies = proxies(&held, &tree);
    if !proxies.is_empty() {
        warnings.push(Warning::of(
            WarningKind::Proxy,
            format!(
                "the port the load hits ({addr}) is owned by {}, a userspace proxy in front of \
                 the container: the load measures it too (`network = \"container\"` on the load \
                 job loads the container directly)",
                proxies.join(", ")
            ),
        ));
    }
    let path = match rigor_probe::net_path(addr.ip()) {
        rigor_probe::NetPath::Loopback => "loopback",
        rigor_probe::NetPath::LocalInterface => "local interface",
        rigor_probe::NetPath::OtherHost => "other host",
    };
    NetworkPath {
        path: path.into(),
        target: addr.to_string(),
        owners: owners
            .iter()
            .map(|o| format!("{} ({})", o.pid, o.comm))
            .collect(),
        owned_by_app: !owners.is_empty() && proxies.is_empty(),
    }
}

/// The holders of the port (`PID`, command name) that proxy it: outside the container's
/// processes `tree` and not the engine's port reservation.
fn proxies(held: &[(i32, &str)], tree: &[i32]) -> Vec<String> {
    held.iter()
        .filter(|(pid, comm)| !tree.contains(pid) && !reserves_port(comm))
        .map(|(pid, comm)| format!("PID {pid} ({comm})"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::proxies;

    #[test]
    fn a_userspace_proxy_is_named_and_the_engines_port_reservation_is_not() {
        let tree = [100, 101];
        assert!(proxies(&[(50, "conmon")], &tree).is_empty());
        assert!(proxies(&[(101, "nginx")], &tree).is_empty());
        assert_eq!(
            proxies(&[(50, "conmon"), (60, "docker-proxy")], &tree),
            ["PID 60 (docker-proxy)"]
        );
        assert_eq!(
            proxies(&[(70, "rootlessport")], &tree),
            ["PID 70 (rootlessport)"]
        );
        assert_eq!(proxies(&[(80, "pasta")], &[]), ["PID 80 (pasta)"]);
    }
}
