//! `rigor run` with an https:// load: nginx over TLS is the application, readiness asks over
//! TLS, the validation request and the load accept its self-signed certificate because the job
//! says `insecure = true`, and the TLS figures and the `insecure_tls` warning reach the result.
//! Skipped (`test-skip: needs nginx`) without nginx.

use crate::common;
use common::*;

#[test]
fn an_https_load_job_runs_validates_and_reports_its_handshakes() {
    if !testkit::nginx::available() {
        testkit::skip("needs nginx");
        return;
    }
    let dir = temp_dir("https-run");
    let port = free_port();
    let c = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    std::fs::write(dir.join("cert.pem"), c.cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), c.key_pair.serialize_pem()).unwrap();
    let command = testkit::nginx::write_config(
        &dir,
        port,
        "keepalive_requests 1000000;",
        "listen 127.0.0.1:{port} ssl;\nssl_certificate {dir}/cert.pem;\n\
         ssl_certificate_key {dir}/key.pem;\n\
         location / { default_type text/plain; return 200 \"Hello, World!\"; }",
    );
    let toml = format!(
        r#"
[jobs.app]
command = "{command}"
ready = {{ http = "https://127.0.0.1:{port}/", timeout = "10s" }}
stop_timeout = "2s"

[jobs.load]
url = "https://127.0.0.1:{port}/"
insecure = true
connections = 4
warmup = "200ms"
duration = "1s"
validate = {{ status = 200, body_contains = "Hello" }}

[scenarios.s]
application = "app"
load = "load"
"#
    );
    let (out, json) = run(&dir, &toml, &["-i", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json = json.expect("result json");
    let it = &iterations(&json)[0];
    assert!(m(it, "load.requests").unwrap() > 0.0);
    assert_eq!(m(it, "load.errors.tls"), Some(0.0));
    assert_eq!(m(it, "load.socket_errors"), Some(0.0));
    assert!(m(it, "load.tls.handshakes").unwrap() >= 4.0);
    assert!(m(it, "load.tls.handshake.mean").unwrap() > 0.0);
    assert!(m(it, "load.tls.handshake.p99").is_some());
    assert!(it["load"]["tls"]["insecure"].as_bool().unwrap());
    let all = text(&out);
    assert!(all.contains("[insecure_tls]"), "{all}");
}
