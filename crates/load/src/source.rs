//! Where connections come from. One source address has a few tens of thousands of local ports
//! towards one server address and port (the kernel's ephemeral range); spreading connections over
//! several source addresses (loopback aliases such as 127.0.0.2, or addresses of the machine's
//! interfaces) lifts that limit.

use mio::net::TcpStream;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::net::{IpAddr, SocketAddr};

/// Starts a non-blocking connection to `to`, from `from` (any port) when given.
pub fn connect_from(to: SocketAddr, from: Option<IpAddr>) -> io::Result<TcpStream> {
    let Some(from) = from else {
        return TcpStream::connect(to);
    };
    let socket = Socket::new(Domain::for_address(to), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_nonblocking(true)?;
    // The port is chosen at connect time, per destination, not at bind time (where every
    // bound port would count against the whole range). Best effort: without it, binds just
    // run out of ports sooner.
    if from.is_ipv4() {
        let on: libc::c_int = 1;
        // SAFETY: a valid socket descriptor and a c_int option of the size given.
        unsafe {
            libc::setsockopt(
                std::os::fd::AsRawFd::as_raw_fd(&socket),
                libc::IPPROTO_IP,
                libc::IP_BIND_ADDRESS_NO_PORT,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    socket.bind(&SockAddr::from(SocketAddr::new(from, 0)))?;
    match socket.connect(&SockAddr::from(to)) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(socket.into()))
}

/// Checks that every source address is one of this machine's (a socket binds to it), so an
/// address it does not have is an error naming it before the load, not a connect error on every
/// connection whose turn it is.
pub(crate) fn check_local(sources: &[IpAddr]) -> Result<(), crate::LoadError> {
    for &from in sources {
        let at = SocketAddr::new(from, 0);
        let bound = Socket::new(Domain::for_address(at), Type::STREAM, Some(Protocol::TCP))
            .and_then(|s| s.bind(&SockAddr::from(at)));
        if let Err(e) = bound {
            return Err(crate::LoadError::InvalidSpec(format!(
                "source address {from} cannot be used: {e} (is it an address of this machine?)"
            )));
        }
    }
    Ok(())
}

/// Parses `A`, `A-B` (a range of IPv4 addresses, or of IPv6 addresses differing in their last
/// 16 bits) or a comma-separated list of those; at most `max` addresses.
pub fn parse_sources(text: &str, max: usize) -> Result<Vec<IpAddr>, SourceError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let parse = |s: &str| {
            s.parse::<IpAddr>().map_err(|_| SourceError::NotAnAddress {
                given: s.to_string(),
                text: text.to_string(),
            })
        };
        let (a, b) = (parse(a)?, parse(b)?);
        let (lo, hi, v4) = match (a, b) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a) as u128, u32::from(b) as u128, true),
            (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), false),
            _ => {
                return Err(SourceError::Mixed {
                    part: part.to_string(),
                })
            }
        };
        if hi < lo {
            return Err(SourceError::Backwards {
                part: part.to_string(),
            });
        }
        if hi - lo >= max as u128 || out.len() + (hi - lo) as usize >= max {
            return Err(SourceError::TooMany {
                text: text.to_string(),
                max,
            });
        }
        for n in lo..=hi {
            out.push(if v4 {
                IpAddr::V4((n as u32).into())
            } else {
                IpAddr::V6(n.into())
            });
        }
    }
    if out.is_empty() {
        return Err(SourceError::Empty);
    }
    Ok(out)
}

/// Source addresses that cannot be read: names the part that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// A part that is not an IP address.
    #[error("`{given}` is not an IP address (in source addresses `{text}`)")]
    NotAnAddress { given: String, text: String },
    /// A range from an IPv4 to an IPv6 address, or the reverse.
    #[error("`{part}` mixes IPv4 and IPv6")]
    Mixed { part: String },
    /// A range whose end is below its start.
    #[error("`{part}`: the range ends before it starts")]
    Backwards { part: String },
    /// More addresses than the caller allows.
    #[error("`{text}` names more than {max} source addresses")]
    TooMany { text: String, max: usize },
    /// Nothing but commas and spaces.
    #[error("no source address given")]
    Empty,
}

/// The kernel's ephemeral port range size: the local ports one source address has towards one
/// server address and port.
pub fn local_ports() -> usize {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            let mut it = s.split_whitespace().map(|n| n.parse::<usize>().ok());
            let (lo, hi) = (it.next()??, it.next()??);
            Some(hi.saturating_sub(lo) + 1)
        })
        .unwrap_or(28_232)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_lists_parse() {
        let v = parse_sources("127.0.0.1-127.0.0.3, 10.0.0.9", 100).unwrap();
        let s: Vec<String> = v.iter().map(|a| a.to_string()).collect();
        assert_eq!(s, ["127.0.0.1", "127.0.0.2", "127.0.0.3", "10.0.0.9"]);
        assert_eq!(parse_sources("::1", 4).unwrap().len(), 1);
        assert_eq!(parse_sources("fd00::1-fd00::4", 4).unwrap().len(), 4);
    }

    #[test]
    fn bad_sources_say_what_is_wrong() {
        assert!(parse_sources("127.0.0.3-127.0.0.1", 10)
            .unwrap_err()
            .to_string()
            .contains("ends before"));
        assert!(parse_sources("127.0.0.1-::1", 10)
            .unwrap_err()
            .to_string()
            .contains("mixes"));
        assert!(parse_sources("nope", 10)
            .unwrap_err()
            .to_string()
            .contains("not an IP"));
        assert!(parse_sources("10.0.0.0-10.255.255.255", 1024)
            .unwrap_err()
            .to_string()
            .contains("more than 1024"));
        assert!(parse_sources(" , ", 10)
            .unwrap_err()
            .to_string()
            .contains("no source"));
    }

    #[test]
    fn a_connection_from_a_loopback_alias_comes_from_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let to = listener.local_addr().unwrap();
        let from: IpAddr = "127.0.0.3".parse().unwrap();
        let _stream = connect_from(to, Some(from)).unwrap();
        let (_, peer) = listener.accept().unwrap();
        assert_eq!(peer.ip(), from);
    }
}
