//! Checks of single values (HTTP method, headers, addresses, status codes) that the runner
//! would otherwise only trip over after the build.

use crate::config::ValueError;

use rigor_load::parser::is_token_text as is_token;

/// A request method must be an HTTP token such as `GET` or `POST`.
pub fn method(m: &str) -> Result<(), ValueError> {
    if is_token(m) {
        Ok(())
    } else {
        Err(format!("`{m}` is not an HTTP method (letters such as GET or POST, no spaces)").into())
    }
}

/// A header name must be a token and its value must not break the request's lines.
pub fn header(name: &str, value: &str) -> Result<(), ValueError> {
    if !is_token(name) {
        return Err(format!("`{name}` is not a valid header name").into());
    }
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(format!("the value of header `{name}` holds a line break or NUL").into());
    }
    Ok(())
}

/// An environment variable's name and value as the OS takes them (no `=` in the name, no NUL).
pub fn env_var(name: &str, value: &str) -> Result<(), ValueError> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(
            format!("`{name}` is not an environment variable name (no `=`, not empty)").into(),
        );
    }
    no_nul(name, value)
}

/// Text handed to a shell or the OS cannot hold a NUL byte.
pub fn no_nul(what: &str, text: &str) -> Result<(), ValueError> {
    if text.contains('\0') {
        Err(format!("`{what}` holds a NUL character").into())
    } else {
        Ok(())
    }
}

/// `host:port` for a TCP readiness check.
pub fn tcp_address(addr: &str) -> Result<(), ValueError> {
    let bad = || format!("`{addr}` is not HOST:PORT (e.g. 127.0.0.1:5000)");
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    if host.trim().is_empty() || port.parse::<u16>().map_or(true, |p| p == 0) {
        return Err(bad().into());
    }
    Ok(())
}

/// An expected HTTP status code.
pub fn status(code: u16) -> Result<(), ValueError> {
    if (100..=599).contains(&code) {
        Ok(())
    } else {
        Err(format!("{code} is not an HTTP status code (100 to 599)").into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert!(method("GET").is_ok());
        assert!(method("GE T").is_err() && method("").is_err());
        assert!(header("X-Id", "1").is_ok());
        assert!(header("X Id", "1").is_err());
        assert!(header("X-Id", "1\r\nHost: evil").is_err());
        assert!(tcp_address("127.0.0.1:5000").is_ok());
        assert!(tcp_address("[::1]:5000").is_ok());
        assert!(tcp_address("localhost").is_err() && tcp_address("h:0").is_err());
        assert!(env_var("RUST_LOG", "off").is_ok());
        assert!(env_var("A=B", "x").is_err() && env_var("", "x").is_err());
        assert!(env_var("A", "x\0y").is_err());
        assert!(status(200).is_ok() && status(0).is_err() && status(600).is_err());
    }
}
