//! Target URLs: `http://` or `https://host[:port]/path?query`, IPv4/IPv6 literals and names,
//! resolved once before the run so no worker ever waits on DNS.

use crate::LoadError;
use std::net::{SocketAddr, ToSocketAddrs};

/// A parsed `http://` or `https://` URL and the addresses its host resolved to.
#[derive(Debug, Clone)]
pub struct Target {
    /// The value of the Host header: host, plus `:port` when the port is not the scheme's.
    pub host_header: String,
    /// `https://`: the connection speaks TLS to `host`.
    pub tls: bool,
    /// The host as written (an IPv6 literal without brackets): TLS's server name, sent as SNI
    /// unless it is an IP address.
    pub host: String,
    /// Path and query, at least `/`.
    pub path: String,
    pub addrs: Vec<SocketAddr>,
}

fn invalid(url: &str, reason: impl Into<String>) -> LoadError {
    LoadError::InvalidUrl {
        url: url.to_string(),
        reason: reason.into(),
    }
}

/// Parses and resolves `url`.
pub fn parse(url: &str) -> Result<Target, LoadError> {
    let (tls, rest) = after_scheme(url)?;
    let split = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(split);
    let path = path_of(url, tail)?;
    let default_port = if tls { 443 } else { 80 };
    let (host, port) = host_and_port(url, authority, default_port)?;
    let bracketed = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    let host_header = if port == default_port {
        bracketed
    } else {
        format!("{bracketed}:{port}")
    };
    Ok(Target {
        host_header,
        tls,
        host: host.to_string(),
        path,
        addrs: resolve(url, host, port)?,
    })
}

/// The host and port of `url`, checked but not resolved: for a URL only other hosts reach.
pub fn host_port(url: &str) -> Result<(String, u16), LoadError> {
    let (tls, rest) = after_scheme(url)?;
    let split = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(split);
    path_of(url, tail)?;
    let (host, port) = host_and_port(url, authority, if tls { 443 } else { 80 })?;
    Ok((host.to_string(), port))
}

/// Whether the scheme is `https`, and what follows `://`; any other scheme than `http` or
/// `https` is an error saying what is supported.
fn after_scheme(url: &str) -> Result<(bool, &str), LoadError> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| invalid(url, "expected a URL like http://127.0.0.1:8080/path"))?;
    match scheme.to_ascii_lowercase().as_str() {
        "http" => Ok((false, rest)),
        "https" => Ok((true, rest)),
        other => Err(LoadError::UnsupportedScheme {
            url: url.to_string(),
            reason: format!("unknown scheme `{other}`; only http:// and https:// are supported"),
        }),
    }
}

/// The request target from what follows the authority: path and query (at least `/`), the
/// fragment dropped.
fn path_of(url: &str, tail: &str) -> Result<String, LoadError> {
    let tail = tail.split('#').next().unwrap_or("");
    let path = if tail.is_empty() {
        "/".to_string()
    } else if tail.starts_with('?') {
        format!("/{tail}")
    } else {
        tail.to_string()
    };
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(invalid(
            url,
            "the path contains spaces or control characters; percent-encode them",
        ));
    }
    Ok(path)
}

/// Host (an IPv6 literal without its brackets) and port (`default_port` when none is written)
/// of the authority.
fn host_and_port<'a>(
    url: &str,
    authority: &'a str,
    default_port: u16,
) -> Result<(&'a str, u16), LoadError> {
    if authority.contains('@') {
        return Err(invalid(url, "user info (user@host) is not supported"));
    }
    if authority.is_empty() {
        return Err(invalid(url, "missing host"));
    }
    let (host, port_text) = if let Some(after) = authority.strip_prefix('[') {
        let end = after
            .find(']')
            .ok_or_else(|| invalid(url, "unterminated IPv6 literal (missing `]`)"))?;
        let host = &after[..end];
        let rest = &after[end + 1..];
        let port = match rest.strip_prefix(':') {
            Some(p) => Some(p),
            None if rest.is_empty() => None,
            None => return Err(invalid(url, "unexpected text after the IPv6 literal")),
        };
        host.parse::<std::net::Ipv6Addr>()
            .map_err(|_| invalid(url, format!("`{host}` is not an IPv6 address")))?;
        (host, port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err(invalid(url, "missing host"));
    }
    let port: u16 = match port_text {
        None | Some("") => default_port,
        Some(p) => p
            .parse()
            .map_err(|_| invalid(url, format!("invalid port `{p}`")))?,
    };
    if port == 0 {
        return Err(invalid(url, "port 0 is not a valid target"));
    }
    Ok((host, port))
}

/// The addresses `host` resolves to (at least one).
fn resolve(url: &str, host: &str, port: u16) -> Result<Vec<SocketAddr>, LoadError> {
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| LoadError::Resolve {
            url: url.to_string(),
            host: host.to_string(),
            source: e,
        })?
        .collect();
    if addrs.is_empty() {
        return Err(LoadError::Resolve {
            url: url.to_string(),
            host: host.to_string(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no addresses"),
        });
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms() {
        let t = parse("http://127.0.0.1:8080/plaintext?x=1").unwrap();
        assert_eq!(t.host_header, "127.0.0.1:8080");
        assert_eq!(t.path, "/plaintext?x=1");
        assert_eq!(t.addrs, vec!["127.0.0.1:8080".parse().unwrap()]);
        let t = parse("http://[::1]:9000").unwrap();
        assert_eq!(t.host_header, "[::1]:9000");
        assert_eq!(t.path, "/");
        assert_eq!(t.addrs, vec!["[::1]:9000".parse().unwrap()]);
        let t = parse("HTTP://127.0.0.1/a#frag").unwrap();
        assert_eq!(t.host_header, "127.0.0.1");
        assert_eq!(t.path, "/a");
        let t = parse("http://localhost:1234?q").unwrap();
        assert_eq!(t.host_header, "localhost:1234");
        assert_eq!(t.path, "/?q");
        assert!(!t.addrs.is_empty());
        assert!(!t.tls);
    }

    #[test]
    fn https_defaults_to_443_and_keeps_the_host_for_tls() {
        let t = parse("https://127.0.0.1/x").unwrap();
        assert!(t.tls);
        assert_eq!(t.host, "127.0.0.1");
        assert_eq!(t.host_header, "127.0.0.1");
        assert_eq!(t.addrs, vec!["127.0.0.1:443".parse().unwrap()]);
        let t = parse("HTTPS://[::1]:8443").unwrap();
        assert_eq!(t.host, "::1");
        assert_eq!(t.host_header, "[::1]:8443");
        let t = parse("https://localhost:80/").unwrap();
        assert_eq!(t.host, "localhost");
        assert_eq!(t.host_header, "localhost:80");
    }

    #[test]
    fn rejects_bad_urls() {
        let e = parse("gopher://x/").unwrap_err().to_string();
        assert!(e.contains("only http:// and https://"), "{e}");
        assert!(parse("ftp://x/").unwrap_err().to_string().contains("ftp"));
        assert!(parse("127.0.0.1:80")
            .unwrap_err()
            .to_string()
            .contains("127.0.0.1:80"));
        assert!(parse("http://:80/").is_err());
        assert!(parse("http://h:99999/").is_err());
        assert!(parse("http://[::1/").is_err());
        assert!(parse("http://[zz]:80/").is_err());
        assert!(parse("http://h/a b").is_err());
    }
}
