//! Who really answers on the port the load hits: if a proxy (docker-proxy, socat, a relay)
//! owns the listening socket, the benchmark measures the proxy too.

use crate::procfs::{all_pids, read, Stat};
use std::collections::BTreeSet;
use std::io::BufRead;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A process holding a listening socket.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SocketOwner {
    pub pid: i32,
    /// Short command name (/proc/PID/comm).
    pub comm: String,
    /// Command line, arguments joined by spaces.
    pub cmdline: String,
}

/// Processes holding a TCP LISTEN socket that would accept a connection to `addr`
/// (a wildcard listener on the same port matches; an unspecified `addr` matches any listener
/// on its port). Reads this network namespace's /proc/net/tcp{,6} and matches socket inodes
/// against /proc/*/fd; processes whose fds cannot be read (other users, when not root) are
/// missed, so an empty answer means "nobody we can see".
pub fn listener_owners(addr: SocketAddr) -> Vec<SocketOwner> {
    let inodes: BTreeSet<u64> = listening_sockets()
        .into_iter()
        .filter(|(local, _)| accepts(*local, addr))
        .map(|(_, inode)| inode)
        .filter(|i| *i != 0)
        .collect();
    if inodes.is_empty() {
        return Vec::new();
    }
    let mut owners = Vec::new();
    for pid in all_pids() {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        let holds = fds.filter_map(|fd| fd.ok()).any(|fd| {
            std::fs::read_link(fd.path())
                .ok()
                .and_then(|target| socket_inode(target.to_str()?))
                .is_some_and(|i| inodes.contains(&i))
        });
        if holds {
            owners.push(owner(pid));
        }
    }
    owners
}

fn owner(pid: i32) -> SocketOwner {
    let comm = read(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().to_string())
        .or_else(|| Stat::read(pid).map(|s| s.comm))
        .unwrap_or_default();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    SocketOwner { pid, comm, cmdline }
}

/// `socket:[12345]` → 12345.
fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// Whether a socket listening on `local` accepts a connection to `target`.
fn accepts(local: SocketAddr, target: SocketAddr) -> bool {
    if local.port() != target.port() {
        return false;
    }
    let (l, t) = (canonical(local.ip()), canonical(target.ip()));
    // A v6 wildcard listener accepts v4 too unless IPV6_V6ONLY, which /proc does not show.
    l == t || l.is_unspecified() && (l.is_ipv6() || t.is_ipv4()) || t.is_unspecified()
}

/// v4-mapped v6 addresses (::ffff:a.b.c.d) compare as their v4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// (local address, inode) of every LISTEN socket in /proc/net/tcp and tcp6.
fn listening_sockets() -> Vec<(SocketAddr, u64)> {
    let mut out = Vec::new();
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(f) = std::fs::File::open(file) {
            out.extend(listening_in(std::io::BufReader::new(f)));
        }
    }
    out
}

/// The LISTEN sockets of one /proc/net/tcp{,6}, read a line at a time: with a hundred thousand
/// connections (or their TIME_WAIT remains) the file is tens of MiB, which a load host checking
/// its path before each load need never hold at once.
fn listening_in(r: impl BufRead) -> impl Iterator<Item = (SocketAddr, u64)> {
    r.lines()
        .skip(1)
        .map_while(Result::ok)
        .filter_map(|l| parse_tcp_line(&l))
}

/// One line of /proc/net/tcp{,6}, if it is a LISTEN socket (state 0A).
fn parse_tcp_line(line: &str) -> Option<(SocketAddr, u64)> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.get(3)? != &"0A" {
        return None;
    }
    let (ip, port) = f.get(1)?.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let ip = parse_hex_ip(ip)?;
    let inode = f.get(9)?.parse().ok()?;
    Some((SocketAddr::new(ip, port), inode))
}

/// The kernel prints each 32-bit word of the address in host byte order.
fn parse_hex_ip(hex: &str) -> Option<IpAddr> {
    let word = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::to_ne_bytes);
    match hex.len() {
        8 => Some(IpAddr::V4(Ipv4Addr::from(word(hex)?))),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(hex.get(i * 8..i * 8 + 8)?)?);
            }
            Some(IpAddr::V6(Ipv6Addr::from(bytes)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_endian = "little")]
    fn parses_proc_net_tcp() {
        let (a, inode) = parse_tcp_line("   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1502 1 0 100 0 0 10 0").unwrap();
        assert_eq!(a, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(inode, 1502);
        let (a, _) = parse_tcp_line("   1: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0 100 0 0 10 0").unwrap();
        assert_eq!(a, "[::1]:8080".parse().unwrap());
        let (a, _) = parse_tcp_line("   1: 0000000000000000FFFF00000100007F:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0 100 0 0 10 0").unwrap();
        assert_eq!(a, "[::ffff:127.0.0.1]:80".parse().unwrap());
        // established, not listening
        assert!(parse_tcp_line("   1: 020200C0:C3FE 507100CB:01BB 01 00000000:00000000 00:00000000 00000000     0        0 8207 1").is_none());
    }

    /// /proc/net/tcp of a load host holding many connections, made a line at a time.
    struct ManySockets {
        line: usize,
        lines: usize,
        pending: Vec<u8>,
    }

    impl std::io::Read for ManySockets {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.pending.is_empty() && self.line <= self.lines {
                let text = match self.line {
                    0 => "  sl  local_address rem_address   st\n".to_string(),
                    n if n == self.lines / 2 => format!("{n:>4}: 0100007F:4868 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1\n"),
                    n => format!("{n:>4}: 0200007F:C3FE 0100007F:4868 01 00000000:00000000 00:00000000 00000000     0        0 {n} 1\n"),
                };
                self.pending = text.into_bytes();
                self.line += 1;
            }
            let n = buf.len().min(self.pending.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            Ok(n)
        }
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn the_listener_is_found_among_a_hundred_thousand_connections_read_line_by_line() {
        let file = ManySockets {
            line: 0,
            lines: 200_000,
            pending: Vec::new(),
        };
        let found: Vec<_> = listening_in(std::io::BufReader::new(file)).collect();
        assert_eq!(found, [("127.0.0.1:18536".parse().unwrap(), 4242)]);
    }

    #[test]
    fn wildcard_matching() {
        let sa = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert!(accepts(sa("0.0.0.0:80"), sa("127.0.0.1:80")));
        assert!(accepts(sa("[::]:80"), sa("10.0.0.1:80")));
        assert!(accepts(sa("[::]:80"), sa("[::1]:80")));
        assert!(!accepts(sa("0.0.0.0:80"), sa("[::1]:80")));
        assert!(!accepts(sa("0.0.0.0:81"), sa("127.0.0.1:80")));
        assert!(!accepts(sa("127.0.0.2:80"), sa("127.0.0.1:80")));
        assert!(accepts(sa("[::ffff:127.0.0.1]:80"), sa("127.0.0.1:80")));
        assert!(accepts(sa("127.0.0.1:80"), sa("0.0.0.0:80")));
    }
}
