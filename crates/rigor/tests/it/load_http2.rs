//! HTTP/2 through the CLI and the config, against nginx: `rigor load --http2 --streams N`
//! reports what nginx logged and an `http2` section; `rigor run` with `http2 = true` validates
//! its first request over HTTP/2 and records the HTTP/2 error kinds; an application that speaks
//! only h2c is found ready over HTTP/2; streams without HTTP/2 are refused by name. Skipped (`test-skip: needs nginx`) without nginx.

use crate::common;
use common::*;
use testkit::nginx::{self, Nginx};

fn h2c_nginx(name: &str) -> Option<Nginx> {
    if !nginx::available() {
        testkit::skip("needs nginx");
        return None;
    }
    Some(Nginx::start(
        name,
        "keepalive_requests 1000000;",
        "listen 127.0.0.1:{port} http2;\n\
         location / { default_type text/plain; return 200 \"Hello, World!\"; }",
        &[],
    ))
}

/// Writes `dir/nginx.conf` for an nginx the application job starts, with `http` lines and a
/// server `listen`ing as given that answers "Hello, World!"; returns the job's command.
fn write_nginx_conf(dir: &std::path::Path, port: u16, http: &str, listen: &str) -> String {
    nginx::write_config(
        dir,
        port,
        &format!("keepalive_requests 1000000;\n{http}"),
        &format!(
            "{listen}\nlocation / {{ default_type text/plain; return 200 \"Hello, World!\"; }}"
        ),
    )
}

#[test]
fn rigor_load_http2_counts_what_nginx_logged() {
    let Some(srv) = h2c_nginx("cli-h2c") else {
        return;
    };
    let url = format!("http://{}/", srv.addr);
    let dir = temp_dir("load-h2c");
    let out = rigor(
        &dir,
        &[
            "load",
            "--http2",
            "--streams",
            "8",
            "-c",
            "4",
            "-d",
            "1s",
            "--json",
            "-",
            &url,
        ],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("HTTP/2 with 8 streams each"), "{stderr}");
    assert!(
        stderr.contains("HTTP/2 (h2c): 8 streams per connection"),
        "{stderr}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let requests = json["measurements"]["load.requests"].as_f64().unwrap();
    assert!(requests > 0.0, "{json}");
    assert_eq!(
        json["measurements"]["load.errors.goaway"].as_f64(),
        Some(0.0)
    );
    assert_eq!(
        json["measurements"]["load.errors.reset"].as_f64(),
        Some(0.0)
    );
    assert_eq!(json["report"]["http2"]["protocol"], "h2c", "{json}");
    let logged = srv.settle(requests as usize, std::time::Duration::from_secs(2));
    assert_eq!(logged as f64, requests);
}

#[test]
fn streams_without_http2_are_usage_errors() {
    let dir = temp_dir("load-streams");
    let out = rigor(&dir, &["load", "--streams", "4", "http://127.0.0.1:9/"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--http2"), "{}", text(&out));
    let out = rigor(
        &dir,
        &["load", "--http2", "--pipeline", "4", "http://127.0.0.1:9/"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("HTTP/1.1's"), "{}", text(&out));
    let toml = "[jobs.app]\ncommand = \"true\"\n\n\
                [jobs.load]\nurl = \"http://127.0.0.1:9/\"\nstreams = 4\n\n\
                [scenarios.s]\napplication = \"app\"\nload = \"load\"\n";
    let (all, _) = run_exit(&dir, toml, &["-i", "1"], 2);
    assert!(
        all.contains("streams") && all.contains("http2 = true"),
        "{all}"
    );
}

#[test]
fn an_http2_load_job_validates_over_http2_and_reports_its_streams() {
    if !nginx::available() {
        testkit::skip("needs nginx");
        return;
    }
    let dir = temp_dir("h2-run");
    let port = free_port();
    let c = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    std::fs::write(dir.join("cert.pem"), c.cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), c.key_pair.serialize_pem()).unwrap();
    let command = write_nginx_conf(
        &dir,
        port,
        "http2_max_concurrent_streams 6;",
        "listen 127.0.0.1:{port} ssl http2;\nssl_certificate {dir}/cert.pem;\n\
         ssl_certificate_key {dir}/key.pem;",
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
http2 = true
streams = 12
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
    let requests = m(it, "load.requests").unwrap();
    assert!(requests > 0.0, "{it}");
    assert_eq!(m(it, "load.socket_errors"), Some(0.0));
    assert_eq!(m(it, "load.errors.goaway"), Some(0.0));
    let h2 = &it["load"]["http2"];
    assert_eq!(h2["protocol"], "h2", "{it}");
    assert_eq!(h2["streams"], 12);
    assert_eq!(h2["server_max_streams"], 6);
    assert!(text(&out).contains("[streams_limited]"), "{}", text(&out));
    // Every request nginx logged came over HTTP/2 but the readiness checks (HTTP/1.1).
    let log = std::fs::read_to_string(dir.join("access.log")).unwrap();
    let h2_lines = log.lines().filter(|l| l.contains("HTTP/2.0\"")).count();
    assert!(h2_lines as f64 >= requests, "{h2_lines} < {requests}");
}

#[test]
fn an_application_that_speaks_only_h2c_is_found_ready_over_http2() {
    if !nginx::available() {
        testkit::skip("needs nginx");
        return;
    }
    let dir = temp_dir("h2c-ready");
    let port = free_port();
    // Plaintext `listen … http2`: this nginx answers only the HTTP/2 preface, never HTTP/1.1.
    let command = write_nginx_conf(&dir, port, "", "listen 127.0.0.1:{port} http2;");
    let toml = format!(
        r#"
[jobs.app]
command = "{command}"
ready = {{ http = "http://127.0.0.1:{port}/", timeout = "10s" }}
stop_timeout = "2s"

[jobs.load]
url = "http://127.0.0.1:{port}/"
http2 = true
streams = 4
connections = 2
warmup = "200ms"
duration = "1s"

[scenarios.s]
application = "app"
load = "load"
"#
    );
    let (out, json) = run(&dir, &toml, &["-i", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let json = json.expect("result json");
    let it = &iterations(&json)[0];
    let requests = m(it, "load.requests").unwrap();
    assert!(requests > 0.0, "{it}");
    // nginx logged only HTTP/2 requests, all 200: the readiness check that passed spoke HTTP/2.
    let log = std::fs::read_to_string(dir.join("access.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert!(
        lines.len() as f64 > requests,
        "{} <= {requests}",
        lines.len()
    );
    assert!(
        lines.iter().all(|l| l.contains("HTTP/2.0\" 200")),
        "{}",
        lines
            .iter()
            .find(|l| !l.contains("HTTP/2.0\" 200"))
            .unwrap()
    );
}
