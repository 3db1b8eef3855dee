//! The socket address a load URL points at, for the port and proxy checks.

use std::net::{SocketAddr, ToSocketAddrs};

/// Resolves `http://host:port/...` to its first socket address.
pub fn url_addr(url: &str) -> Option<SocketAddr> {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let auth = rest.split(['/', '?']).next()?;
    let auth = auth.rsplit_once('@').map(|(_, a)| a).unwrap_or(auth);
    let with_port = if auth.ends_with(']') || !auth.contains(':') {
        format!("{auth}:80")
    } else {
        auth.to_string()
    };
    with_port.to_socket_addrs().ok()?.next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_v4_v6_and_default_port() {
        assert_eq!(url_addr("http://127.0.0.1:5000/x").unwrap().port(), 5000);
        assert_eq!(
            url_addr("http://[::1]:8080/").unwrap().to_string(),
            "[::1]:8080"
        );
        assert_eq!(url_addr("http://127.0.0.1/").unwrap().port(), 80);
    }
}
