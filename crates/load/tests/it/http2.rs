//! HTTP/2 against nginx: h2 over TLS (ALPN) and cleartext h2c, many streams per connection.
//! Every response the engine counts is a request nginx logged as HTTP/2.0; the server's stream
//! limit is obeyed and reported; connections nginx ends with GOAWAY are replaced and the
//! goodbyes counted; servers that do not speak HTTP/2 are named before any load. Skipped
//! (`test-skip: needs nginx`) without nginx.

use rigor_load::{run, Live, LoadError, LoadReport, LoadSpec};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use testkit::nginx::{self, Nginx};

fn self_signed() -> (String, String) {
    let c = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("generate a certificate");
    (c.cert.pem(), c.key_pair.serialize_pem())
}

/// nginx serving "Hello, World!" over HTTP/2: with TLS (`tls`) or cleartext h2c; `http` adds
/// directives (limits) to its `http` block.
fn h2_nginx(name: &str, tls: bool, http: &str) -> Option<Nginx> {
    if !nginx::available() {
        testkit::skip("needs nginx");
        return None;
    }
    let (cert, key) = self_signed();
    let listen = if tls {
        "listen 127.0.0.1:{port} ssl http2;\n\
         ssl_certificate {dir}/cert.pem;\n\
         ssl_certificate_key {dir}/key.pem;"
    } else {
        "listen 127.0.0.1:{port} http2;"
    };
    Some(Nginx::start(
        name,
        http,
        &format!(
            "{listen}\nlocation / {{ default_type text/plain; return 200 \"Hello, World!\"; }}\n\
"
        ),
        &[("cert.pem", &cert), ("key.pem", &key)],
    ))
}

fn spec(srv: &Nginx, tls: bool) -> LoadSpec {
    let scheme = if tls { "https" } else { "http" };
    LoadSpec {
        url: format!("{scheme}://{}/hello", srv.addr),
        connections: 4,
        threads: 2,
        duration: Duration::from_millis(1000),
        insecure: tls,
        http2: true,
        streams: 8,
        ..Default::default()
    }
}

fn go(spec: &LoadSpec) -> Result<LoadReport, LoadError> {
    run(spec, &Live::default(), &AtomicBool::new(false))
}

/// Lines of nginx's access log that say HTTP/2.0, and all lines.
fn http2_lines(srv: &Nginx) -> (usize, usize) {
    let log = std::fs::read_to_string(srv.dir().join("access.log")).unwrap_or_default();
    let h2 = log.lines().filter(|l| l.contains("HTTP/2.0\"")).count();
    (h2, log.lines().count())
}

fn assert_counts_match(srv: &Nginx, r: &LoadReport) {
    assert_eq!(r.errors.total(), 0, "{:?} {:?}", r.errors, r.http2);
    assert!(r.requests > 0, "only {} requests", r.requests);
    let logged = srv.settle(r.requests as usize, Duration::from_secs(2));
    assert_eq!(logged as u64, r.requests, "nginx logged {logged}");
    let (h2, all) = http2_lines(srv);
    assert_eq!(h2, all, "every request nginx logged came over HTTP/2");
}

#[test]
fn h2_over_tls_counts_equal_nginx_log() {
    let Some(srv) = h2_nginx("h2tls", true, "keepalive_requests 1000000;") else {
        return;
    };
    let r = go(&spec(&srv, true)).expect("run");
    assert_counts_match(&srv, &r);
    let h2 = r.http2.as_ref().expect("an HTTP/2 section");
    assert_eq!(h2.protocol, "h2");
    assert_eq!(h2.streams, 8);
    assert_eq!(h2.goaways, 0);
    assert_eq!(r.status_counts.get(&200), Some(&r.requests));
    assert!(r.tls.as_ref().is_some_and(|t| t.handshakes >= 4));
    // Each response is at least its HEADERS and DATA frames with the 13-byte body.
    assert!(r.bytes_read >= r.requests * (13 + 18), "{}", r.bytes_read);
}

#[test]
fn h2c_closed_and_open_models_count_equal_nginx_log() {
    let Some(srv) = h2_nginx("h2c", false, "keepalive_requests 1000000;") else {
        return;
    };
    let r = go(&spec(&srv, false)).expect("closed run");
    assert_counts_match(&srv, &r);
    assert_eq!(r.http2.as_ref().unwrap().protocol, "h2c");

    let Some(srv) = h2_nginx("h2c-open", false, "keepalive_requests 1000000;") else {
        return;
    };
    let r = go(&LoadSpec {
        rate: Some(3000.0),
        ..spec(&srv, false)
    })
    .expect("open run");
    assert_counts_match(&srv, &r);
    let rate = r.rate.as_ref().expect("open model");
    assert!(
        (rate.achieved - 3000.0).abs() < 300.0,
        "the schedule is kept: {rate:?}"
    );
}

#[test]
fn request_bodies_go_out_under_flow_control() {
    if !nginx::available() {
        testkit::skip("needs nginx");
        return;
    }
    // nginx reads each body whole (it proxies it to an upstream of its own on a unix socket):
    // 100 KiB per request is more than its initial stream window (64 KiB), so every body
    // waits for WINDOW_UPDATEs.
    let name = "h2body";
    let dir = std::env::temp_dir().join(format!("rigor-nginx-{name}-{}", std::process::id()));
    let sock = dir.join("up.sock");
    let srv = Nginx::start(
        name,
        &format!(
            "keepalive_requests 1000000;\n\
             server {{ listen unix:{s}; location / {{ return 201 \"made\"; }} }}",
            s = sock.display()
        ),
        &format!(
            "listen 127.0.0.1:{{port}} http2;\n\
             location /post {{ client_body_buffer_size 1m; proxy_pass http://unix:{}:/made; }}",
            sock.display()
        ),
        &[],
    );
    let r = go(&LoadSpec {
        url: format!("http://{}/post", srv.addr),
        method: "POST".into(),
        body: Some(vec![b'x'; 100 * 1024]),
        ..spec(&srv, false)
    })
    .expect("run");
    assert_eq!(r.errors.total(), 0, "{:?} {:?}", r.errors, r.http2);
    assert!(r.requests > 0, "only {} requests", r.requests);
    assert_eq!(r.status_counts.get(&201), Some(&r.requests));
    let posted = || {
        std::fs::read_to_string(srv.dir().join("access.log"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"POST /post HTTP/2.0\" 201"))
            .count()
    };
    let start = std::time::Instant::now();
    while (posted() as u64) < r.requests && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        posted() as u64,
        r.requests,
        "every body reached nginx whole"
    );
}

#[test]
fn the_servers_stream_limit_is_obeyed_and_reported() {
    let Some(srv) = h2_nginx(
        "h2limit",
        false,
        "keepalive_requests 1000000; http2_max_concurrent_streams 3;",
    ) else {
        return;
    };
    let r = go(&LoadSpec {
        streams: 16,
        ..spec(&srv, false)
    })
    .expect("run");
    // Streams beyond the limit would be refused (RST_STREAM): none may be.
    assert_counts_match(&srv, &r);
    let h2 = r.http2.as_ref().unwrap();
    assert_eq!(h2.server_max_streams, Some(3), "{h2:?}");
    assert!(
        r.warnings.iter().any(|w| w.kind == "streams_limited"),
        "{:?}",
        r.warnings
    );
}

#[test]
fn goaway_mid_run_is_survived_and_counted() {
    // nginx ends each connection with GOAWAY after 50 requests.
    let Some(srv) = h2_nginx("h2goaway", false, "keepalive_requests 50;") else {
        return;
    };
    let r = go(&spec(&srv, false)).expect("run");
    let h2 = r.http2.as_ref().unwrap();
    assert!(r.requests > 0, "only {} requests: {h2:?}", r.requests);
    assert!(
        h2.goaways as f64 >= r.requests as f64 / 50.0 - 8.0,
        "{h2:?}"
    );
    assert_eq!(
        h2.goaways,
        h2.codes.get("GOAWAY NO_ERROR").copied().unwrap_or(0),
        "{h2:?}"
    );
    // Every answer counted was a request nginx logged; streams it refused were never
    // processed, so they are errors of their own kind, not answers.
    let logged = srv.settle(r.requests as usize, Duration::from_secs(2));
    assert_eq!(logged as u64, r.requests);
    assert_eq!(
        r.errors.total(),
        r.errors.goaway + r.errors.closed,
        "{:?}",
        r.errors
    );
}

#[test]
fn servers_without_http2_are_named_before_any_load() {
    if !nginx::available() {
        testkit::skip("needs nginx");
        return;
    }
    let (cert, key) = self_signed();
    // HTTP/1.1 only, with and without TLS.
    let srv = Nginx::start(
        "h1only",
        "",
        "listen 127.0.0.1:{port} ssl;\n\
         ssl_certificate {dir}/cert.pem;\n\
         ssl_certificate_key {dir}/key.pem;\n\
         location / { return 200 \"x\"; }",
        &[("cert.pem", &cert), ("key.pem", &key)],
    );
    let e = go(&spec(&srv, true)).unwrap_err();
    assert!(matches!(e, LoadError::Tls { .. }), "{e:?}");
    assert!(e.to_string().contains("h2"), "{e}");
    let plain = Nginx::start(
        "h1plain",
        "",
        "listen 127.0.0.1:{port};\nlocation / { return 200 \"x\"; }",
        &[],
    );
    let e = go(&spec(&plain, false)).unwrap_err();
    assert!(matches!(e, LoadError::Protocol { .. }), "{e:?}");
    assert!(e.to_string().contains("cleartext HTTP/2"), "{e}");
    assert_eq!(plain.logged(200), 0, "no request was answered");
}

#[test]
fn streams_and_pipelines_do_not_mix() {
    let bad = |s: LoadSpec| rigor_load::check(&s).unwrap_err().to_string();
    let base = LoadSpec {
        url: "http://127.0.0.1:1/".into(),
        ..Default::default()
    };
    let e = bad(LoadSpec {
        streams: 4,
        ..base.clone()
    });
    assert!(e.contains("HTTP/2's"), "{e}");
    let e = bad(LoadSpec {
        http2: true,
        pipeline: 4,
        ..base.clone()
    });
    assert!(e.contains("HTTP/1.1's"), "{e}");
    let e = bad(LoadSpec {
        http2: true,
        streams: 0,
        ..base.clone()
    });
    assert!(e.contains("between 1 and"), "{e}");
    let e = bad(LoadSpec {
        http2: true,
        headers: vec![("Connection".into(), "close".into())],
        ..base
    });
    assert!(e.contains("connection-specific"), "{e}");
}

#[test]
fn a_mix_over_h2c_reaches_each_location_as_weighted() {
    // Two locations; nginx's access log counts each path, the reference for each request's
    // figures and for the 3:1 weights.
    if !nginx::available() {
        testkit::skip("needs nginx");
        return;
    }
    let srv = Nginx::start(
        "h2mix",
        "keepalive_requests 1000000;",
        "listen 127.0.0.1:{port} http2;\n\
         location /a { default_type text/plain; return 200 \"a\"; }\n\
         location /b { default_type text/plain; return 200 \"bb\"; }\n",
        &[],
    );
    let get = |name: &str, weight| rigor_load::MixRequest {
        name: name.into(),
        path: format!("/{name}"),
        method: "GET".into(),
        headers: Vec::new(),
        bodies: Vec::new(),
        weight,
    };
    let r = go(&LoadSpec {
        url: format!("http://{}/", srv.addr),
        mix: Some(rigor_load::RequestMix {
            requests: vec![get("a", 3), get("b", 1)],
            seed: 3,
        }),
        ..spec(&srv, false)
    })
    .expect("run");
    assert_counts_match(&srv, &r);
    let log = std::fs::read_to_string(srv.dir().join("access.log")).unwrap_or_default();
    let on = |p: &str| {
        log.lines()
            .filter(|l| l.contains(&format!("GET {p} HTTP/2.0")))
            .count() as u64
    };
    let (a, b) = (on("/a"), on("/b"));
    let figures = |n: &str| r.mix.iter().find(|m| m.name == n).unwrap().requests;
    assert_eq!(
        (figures("a"), figures("b")),
        (a, b),
        "engine vs nginx per path"
    );
    assert!(a + b > 2000, "only {} requests", a + b);
    let share = a as f64 / (a + b) as f64;
    assert!((share - 0.75).abs() < 0.02, "share of /a {share:.4}");
}
