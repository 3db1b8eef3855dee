//! The request, serialised once: every send is a copy of the same bytes.

use crate::parser::is_token_text;
use crate::url::Target;
use crate::LoadError;

/// Builds the request bytes for `target`; rejects header names and values that would corrupt it.
pub fn serialize(
    target: &Target,
    method: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    close: bool,
) -> Result<Vec<u8>, LoadError> {
    if !is_token_text(method) {
        return Err(LoadError::InvalidRequest(format!(
            "invalid method `{method}`"
        )));
    }
    let mut out = Vec::with_capacity(256 + body.map_or(0, |b| b.len()));
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !has("host") {
        out.extend_from_slice(b"Host: ");
        out.extend_from_slice(target.host_header.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for (k, v) in headers {
        if !is_token_text(k) {
            return Err(LoadError::InvalidRequest(format!(
                "invalid header name `{k}`"
            )));
        }
        if v.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(LoadError::InvalidRequest(format!(
                "header `{k}` has a line break in its value"
            )));
        }
        if k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("transfer-encoding") {
            return Err(LoadError::InvalidRequest(format!(
                "header `{k}` is set by the engine from the body"
            )));
        }
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.trim().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if close && !has("connection") {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    match body {
        Some(b) => {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", b.len()).as_bytes());
            out.extend_from_slice(b);
        }
        None => {
            if matches!(method, "POST" | "PUT" | "PATCH") {
                out.extend_from_slice(b"Content-Length: 0\r\n");
            }
            out.extend_from_slice(b"\r\n");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises() {
        let t = crate::url::parse("http://127.0.0.1:8080/x").unwrap();
        let r = serialize(
            &t,
            "POST",
            &[("X-A".into(), " b ".into())],
            Some(b"hi"),
            false,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "POST /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: b\r\nContent-Length: 2\r\n\r\nhi"
        );
        let r = serialize(&t, "GET", &[("host".into(), "example".into())], None, true).unwrap();
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "GET /x HTTP/1.1\r\nhost: example\r\nConnection: close\r\n\r\n"
        );
        assert!(serialize(&t, "G T", &[], None, false).is_err());
        assert!(serialize(&t, "GET", &[("A b".into(), "x".into())], None, false).is_err());
        assert!(serialize(&t, "GET", &[("A".into(), "x\r\nB: y".into())], None, false).is_err());
    }
}
