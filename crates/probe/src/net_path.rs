//! Where the load travels: loopback, a local interface, or the network to another host.
//! Numbers from loopback and from a real NIC are not comparable, so the result records which.

use std::net::IpAddr;

/// The route a connection from this host to an address takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetPath {
    /// 127.0.0.0/8, ::1 (and the unspecified address, which Linux connects to locally).
    Loopback,
    /// An address of one of this host's interfaces: still no wire, but not `lo` either.
    LocalInterface,
    /// Anything else: a real network path.
    OtherHost,
}

/// Classifies `ip` from this host's point of view.
pub fn net_path(ip: IpAddr) -> NetPath {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    if ip.is_loopback() || ip.is_unspecified() {
        NetPath::Loopback
    } else if local_addresses().contains(&ip) {
        NetPath::LocalInterface
    } else {
        NetPath::OtherHost
    }
}

/// Every address configured on this host's interfaces (getifaddrs), loopback included.
pub fn local_addresses() -> Vec<IpAddr> {
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    addrs
        .filter_map(|ifa| {
            let addr = ifa.address?;
            if let Some(sin) = addr.as_sockaddr_in() {
                Some(IpAddr::V4(sin.ip()))
            } else {
                addr.as_sockaddr_in6().map(|sin6| IpAddr::V6(sin6.ip()))
            }
        })
        .collect()
}
