//! https:// against nginx with a certificate the test makes: every request the engine counts is
//! one nginx logged (closed and open models, pipelining), reconnects resume sessions, a
//! self-signed certificate is refused with the reason unless `insecure`, and a server that
//! will not speak the offered protocol is named. Skipped (`test-skip: needs nginx`) without
//! nginx.

use rigor_load::{run, Live, LoadError, LoadReport, LoadSpec, ReportWire};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use testkit::nginx::{self, Nginx};

/// A self-signed certificate for localhost and 127.0.0.1: (certificate, key), PEM.
fn self_signed() -> (String, String) {
    let c = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("generate a certificate");
    (c.cert.pem(), c.key_pair.serialize_pem())
}

/// nginx serving "Hello, World!" over TLS; `keepalive_requests` closes each connection after
/// that many requests (sending `Connection: close` with the last).
fn tls_nginx(name: &str, keepalive_requests: u32) -> Option<Nginx> {
    if !nginx::available() {
        testkit::skip("needs nginx");
        return None;
    }
    let (cert, key) = self_signed();
    Some(Nginx::start(
        name,
        &format!("keepalive_requests {keepalive_requests};"),
        "listen 127.0.0.1:{port} ssl;\n\
         ssl_certificate {dir}/cert.pem;\n\
         ssl_certificate_key {dir}/key.pem;\n\
         location / { default_type text/plain; return 200 \"Hello, World!\"; }",
        &[("cert.pem", &cert), ("key.pem", &key)],
    ))
}

fn spec(srv: &Nginx) -> LoadSpec {
    LoadSpec {
        url: format!("https://{}/hello", srv.addr),
        connections: 8,
        threads: 2,
        duration: Duration::from_millis(1000),
        insecure: true,
        ..Default::default()
    }
}

fn go(spec: &LoadSpec) -> Result<LoadReport, LoadError> {
    run(spec, &Live::default(), &AtomicBool::new(false))
}

/// Every response the engine counted is a request nginx logged, and nothing failed.
fn assert_counts_match(srv: &Nginx, r: &LoadReport) {
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert!(r.requests > 0, "only {} requests", r.requests);
    assert_eq!(r.status_counts.get(&200), Some(&r.requests));
    let logged = srv.settle(r.requests as usize, Duration::from_secs(2));
    assert_eq!(logged as u64, r.requests, "nginx logged {logged}");
    assert_eq!(srv.logged(200), logged);
}

#[test]
fn closed_model_counts_equal_nginx_log_and_handshakes_are_timed() {
    let Some(srv) = tls_nginx("closed", 1_000_000) else {
        return;
    };
    let r = go(&spec(&srv)).expect("run");
    assert_counts_match(&srv, &r);
    let tls = r.tls.as_ref().expect("an https run has a tls section");
    // Keep-alive: the 8 connections opened before the clock are the only handshakes.
    assert_eq!(tls.handshakes, 8, "{tls:?}");
    assert_eq!(
        tls.resumed, 0,
        "the first handshakes are full ones: {tls:?}"
    );
    let mean = tls.handshake_mean_ms.expect("timed");
    assert!(mean > 0.0 && mean < 1000.0, "{tls:?}");
    let m = r.measurements();
    assert_eq!(m["load.tls.handshakes"], 8.0);
    assert!(m["load.tls.handshake.p99"] >= m["load.tls.handshake.mean"] * 0.5);
    assert_eq!(m["load.errors.tls"], 0.0);
    assert!(
        r.warnings.iter().any(|w| w.kind == "insecure_tls"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn pipelined_and_open_model_counts_equal_nginx_log() {
    let Some(srv) = tls_nginx("pipe", 1_000_000) else {
        return;
    };
    let r = go(&LoadSpec {
        pipeline: 8,
        ..spec(&srv)
    })
    .expect("pipelined run");
    assert_counts_match(&srv, &r);
    drop(srv);

    let Some(srv) = tls_nginx("open", 1_000_000) else {
        return;
    };
    let r = go(&LoadSpec {
        rate: Some(2000.0),
        ..spec(&srv)
    })
    .expect("open-model run");
    assert_counts_match(&srv, &r);
    let rate = r.rate.as_ref().expect("open model");
    assert!(rate.achieved > 1800.0, "{rate:?}");
}

#[test]
fn large_pipelined_bodies_are_read_whole() {
    // Responses of many TLS records each: the engine must drain what rustls has not yet taken
    // from the socket, or a connection waits for an event that never comes (timeouts).
    if !nginx::available() {
        testkit::skip("needs nginx");
        return;
    }
    let (cert, key) = self_signed();
    let body = "x".repeat(300 * 1024);
    let srv = Nginx::start(
        "big",
        "keepalive_requests 1000000;",
        "listen 127.0.0.1:{port} ssl;\n\
         ssl_certificate {dir}/cert.pem;\n\
         ssl_certificate_key {dir}/key.pem;\n\
         root {dir};",
        &[("cert.pem", &cert), ("key.pem", &key), ("big.bin", &body)],
    );
    let r = go(&LoadSpec {
        url: format!("https://{}/big.bin", srv.addr),
        connections: 4,
        threads: 1,
        pipeline: 4,
        insecure: true,
        duration: Duration::from_millis(1000),
        ..Default::default()
    })
    .expect("run");
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert!(r.requests > 0, "only {} requests", r.requests);
    assert!(r.bytes_read >= r.requests * body.len() as u64);
    let logged = srv.settle(r.requests as usize, Duration::from_secs(2));
    assert_eq!(logged as u64, r.requests);
}

#[test]
fn reconnects_resume_sessions() {
    // nginx closes every connection after 10 requests: each reconnect is a new handshake,
    // which can resume a session an earlier connection got.
    let Some(srv) = tls_nginx("resume", 10) else {
        return;
    };
    let r = go(&spec(&srv)).expect("run");
    assert_counts_match(&srv, &r);
    let tls = r.tls.as_ref().expect("tls section");
    assert!(tls.handshakes as f64 >= r.requests as f64 / 10.0, "{tls:?}");
    assert!(
        tls.resumed as f64 > 0.5 * tls.handshakes as f64,
        "most reconnects should resume: {tls:?}"
    );
}

#[test]
fn a_self_signed_certificate_is_refused_with_the_reason() {
    let Some(srv) = tls_nginx("refused", 1_000_000) else {
        return;
    };
    let s = LoadSpec {
        insecure: false,
        ..spec(&srv)
    };
    let e = go(&s).unwrap_err();
    assert!(matches!(e, LoadError::Tls { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains(&s.url), "{text}");
    assert!(text.contains("UnknownIssuer"), "{text}");
    assert!(text.contains("insecure"), "{text}");
    assert_eq!(srv.logged_all(), 0, "no request may have been sent");
    // The one-off probe refuses it alike, and accepts it when told to.
    let e = rigor_load::probe_request_finding(
        &s.url,
        "GET",
        &[],
        None,
        Duration::from_secs(2),
        None,
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");
    let p = rigor_load::probe_request_finding(
        &s.url,
        "GET",
        &[],
        None,
        Duration::from_secs(2),
        Some(b"World"),
        true,
    )
    .expect("insecure probe");
    assert_eq!((p.status, p.found), (200, Some(true)));
}

#[test]
fn an_http_port_behind_an_https_url_is_a_clear_error() {
    let Some(srv) = (if nginx::available() {
        Some(Nginx::start(
            "plainport",
            "",
            "listen 127.0.0.1:{port};\nlocation / { return 200 \"x\"; }",
            &[],
        ))
    } else {
        testkit::skip("needs nginx");
        None
    }) else {
        return;
    };
    let url = format!("https://{}/", srv.addr);
    let e = go(&LoadSpec {
        url: url.clone(),
        insecure: true,
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains(&url) && e.contains("TLS handshake"), "{e}");
}

#[test]
fn the_tls_section_crosses_hosts_and_merges_exactly() {
    let Some(srv) = tls_nginx("merge", 10) else {
        return;
    };
    let a = go(&spec(&srv)).expect("run a");
    let b = go(&LoadSpec {
        connections: 3,
        threads: 1,
        ..spec(&srv)
    })
    .expect("run b");
    let wire = |r: &LoadReport| -> LoadReport {
        let text = serde_json::to_string(&ReportWire::encode(r).unwrap()).unwrap();
        serde_json::from_str::<ReportWire>(&text)
            .unwrap()
            .decode()
            .unwrap()
    };
    let merged = rigor_load::merge(&[wire(&a), wire(&b)]);
    let (ta, tb, tm) = (
        a.tls.as_ref().unwrap(),
        b.tls.as_ref().unwrap(),
        merged.tls.as_ref().unwrap(),
    );
    assert_eq!(tm.handshakes, ta.handshakes + tb.handshakes);
    assert_eq!(tm.resumed, ta.resumed + tb.resumed);
    assert_eq!(merged.errors.tls, a.errors.tls + b.errors.tls);
    let mut h = a.tls_histogram.clone().unwrap();
    h.add(b.tls_histogram.as_ref().unwrap()).unwrap();
    assert_eq!(merged.tls_histogram.as_ref(), Some(&h));
    assert_eq!(
        tm.handshake_p99_ms,
        Some(h.value_at_quantile(0.99) as f64 / 1000.0)
    );
    assert!(tm.insecure);
}

#[test]
fn http_runs_have_no_tls_figures() {
    let srv = hello_server::start(hello_server::Config {
        port: 0,
        threads: 1,
        ..Default::default()
    })
    .expect("hello-server");
    let r = go(&LoadSpec {
        url: format!("http://{}/plaintext", srv.addr()),
        connections: 2,
        duration: Duration::from_millis(300),
        ..Default::default()
    })
    .expect("run");
    assert!(r.tls.is_none() && r.tls_histogram.is_none());
    let m = r.measurements();
    assert!(!m.keys().any(|k| k.starts_with("load.tls.")), "{m:?}");
    assert_eq!(m["load.errors.tls"], 0.0);
    // And an http:// URL with `insecure` is refused: there is no certificate to accept.
    let e = rigor_load::check(&LoadSpec {
        url: format!("http://{}/", srv.addr()),
        insecure: true,
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("https:// URLs only"), "{e}");
}

/// A TLS server that speaks only `h2` (no nginx can refuse HTTP/1.1): every handshake that
/// offers nothing else ends with its `no_application_protocol` alert.
fn h2_only_server() -> std::net::SocketAddr {
    use std::sync::Arc;
    let c = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(c.key_pair.serialize_der());
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![c.cert.der().clone()], key.into())
    .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let config = Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut tcp in listener.incoming().flatten() {
            let mut conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let _ = tcp.set_read_timeout(Some(Duration::from_secs(2)));
            while conn.is_handshaking() {
                if conn.complete_io(&mut tcp).is_err() {
                    break;
                }
            }
        }
    });
    addr
}

#[test]
fn a_server_that_refuses_http1_by_alpn_is_named() {
    let addr = h2_only_server();
    let url = format!("https://{addr}/");
    let e = go(&LoadSpec {
        url: url.clone(),
        insecure: true,
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains(&url), "{e}");
    assert!(e.contains("NoApplicationProtocol"), "{e}");
    assert!(e.contains("ALPN: http/1.1"), "{e}");
}

/// A TLS server that requires a client certificate (signed by a CA of its own, which the
/// engine never has): over TLS 1.3 the client's side of the handshake completes, then the
/// server's `certificate_required` alert ends the session.
fn client_certificate_server() -> std::net::SocketAddr {
    use std::sync::Arc;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let ca = rcgen::generate_simple_self_signed(vec!["a client CA".into()]).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.cert.der().clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let c = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(c.key_pair.serialize_der());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![c.cert.der().clone()], key.into())
        .unwrap();
    let config = Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut tcp in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let mut conn = rustls::ServerConnection::new(config).unwrap();
                let _ = tcp.set_read_timeout(Some(Duration::from_secs(2)));
                while conn.is_handshaking() {
                    if conn.complete_io(&mut tcp).is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn a_server_that_refuses_the_client_after_its_handshake_is_named() {
    let addr = client_certificate_server();
    let url = format!("https://{addr}/");
    let e = go(&LoadSpec {
        url: url.clone(),
        insecure: true,
        connections: 2,
        duration: Duration::from_millis(300),
        ..Default::default()
    })
    .map(|r| format!("ran: {} requests, {} TLS errors", r.requests, r.errors.tls))
    .unwrap_or_else(|e| e.to_string());
    assert!(e.contains(&url), "{e}");
    assert!(e.contains("CertificateRequired"), "{e}");
}
