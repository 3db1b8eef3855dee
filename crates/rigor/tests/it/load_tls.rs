//! `rigor load https://…` against nginx with certificates the test makes: a self-signed one is
//! refused naming the URL and the reason, accepted with `--insecure` (and a warning), and one
//! signed by a CA that `SSL_CERT_FILE` trusts is verified without any. Skipped (`test-skip:
//! needs nginx`) without nginx.

use std::process::{Command, Output};
use testkit::nginx::{self, Nginx};

fn rigor() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rigor"))
}

/// nginx over TLS with `cert` and `key` (PEM), serving "Hello, World!", never closing a
/// keep-alive connection (so each connection has one handshake).
fn tls_nginx(name: &str, cert: &str, key: &str) -> Option<Nginx> {
    if !nginx::available() {
        testkit::skip("needs nginx");
        return None;
    }
    Some(Nginx::start(
        name,
        "keepalive_requests 1000000;",
        "listen 127.0.0.1:{port} ssl;\n\
         ssl_certificate {dir}/cert.pem;\n\
         ssl_certificate_key {dir}/key.pem;\n\
         location / { default_type text/plain; return 200 \"Hello, World!\"; }",
        &[("cert.pem", cert), ("key.pem", key)],
    ))
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn self_signed_is_refused_with_the_reason_and_accepted_with_insecure() {
    let c =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let Some(srv) = tls_nginx("cli-self", &c.cert.pem(), &c.key_pair.serialize_pem()) else {
        return;
    };
    let url = format!("https://{}/", srv.addr);
    let o = rigor()
        .args(["load", &url, "-c", "4", "-d", "300ms"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(err.contains(&url) && err.contains("UnknownIssuer"), "{err}");
    assert!(err.contains("insecure"), "{err}");
    assert_eq!(srv.logged_all(), 0);

    let json = srv.dir().join("r.json");
    let o = rigor()
        .args([
            "load",
            &url,
            "-c",
            "4",
            "-d",
            "500ms",
            "--insecure",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("WARNING: the certificate of"), "{out}");
    assert!(out.contains("TLS: 4 handshakes ("), "{out}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let m = &doc["measurements"];
    assert_eq!(m["load.tls.handshakes"], 4.0);
    assert!(m["load.tls.handshake.mean"].as_f64().unwrap() > 0.0, "{m}");
    let requests = m["load.requests"].as_f64().unwrap() as usize;
    assert!(requests > 0);
    assert_eq!(
        srv.settle(requests, std::time::Duration::from_secs(2)),
        requests
    );
    // Among the warnings (a busy machine adds its own, such as client_saturated).
    let warnings = doc["report"]["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w["kind"] == "insecure_tls"),
        "{warnings:?}"
    );
}

#[test]
fn a_certificate_from_a_trusted_ca_is_verified_without_warnings() {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "rigor test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let Some(srv) = tls_nginx("cli-ca", &leaf.pem(), &leaf_key.serialize_pem()) else {
        return;
    };
    let ca_file = srv.dir().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    // By name, so the name is verified (and sent as SNI).
    let url = format!("https://localhost:{}/", srv.addr.port());
    let o = rigor()
        .args(["load", &url, "-c", "2", "-d", "300ms"])
        .env("SSL_CERT_FILE", &ca_file)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(!out.contains("WARNING"), "{out}");
    assert!(out.contains("TLS: 2 handshakes"), "{out}");
    // The same certificate reached by an address it does not name is refused.
    let o = rigor()
        .args(["load", &format!("https://{}/", srv.addr), "-d", "300ms"])
        .env("SSL_CERT_FILE", &ca_file)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("not valid for name") && err.contains("does not name the URL's host"),
        "{err}"
    );
}

#[test]
fn insecure_with_an_http_url_is_a_usage_error() {
    let o = rigor()
        .args(["load", "http://127.0.0.1:9/", "--insecure"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}{err}");
    assert!(err.contains("https:// URLs only"), "{err}");
}
