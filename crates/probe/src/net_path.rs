//! Where the load travels: loopback, a local interface, or the network to another host.
//! Numbers from loopback and from a real NIC are not comparable, so the result records which.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned; ifa_addr may be null,
        // and its family tells which sockaddr type it points to.
        unsafe {
            let addr = (*cur).ifa_addr;
            if !addr.is_null() {
                match (*addr).sa_family as i32 {
                    libc::AF_INET => {
                        let sin = &*(addr as *const libc::sockaddr_in);
                        out.push(IpAddr::V4(Ipv4Addr::from(
                            sin.sin_addr.s_addr.to_ne_bytes(),
                        )));
                    }
                    libc::AF_INET6 => {
                        let sin6 = &*(addr as *const libc::sockaddr_in6);
                        out.push(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)));
                    }
                    _ => {}
                }
            }
            cur = (*cur).ifa_next;
        }
    }
    // SAFETY: `head` came from a successful getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}
