//! `/metrics`: the server's own counters in the Prometheus text format (0.0.4), so a harness
//! that scrapes runtime metrics can be checked against what the server counted. Rendered per
//! request from the same per-worker counters `/stats` sums; nothing is added to the hot path.

use std::fmt::Write as _;
use std::io::Write as _;

use crate::response::Connection;
use crate::stats::StatsSnapshot;

/// The page: requests by path, answers by status, bytes each way, connections accepted and
/// open now, and the memory the hold knob keeps.
pub(crate) fn render(s: &StatsSnapshot, held_bytes: u64) -> String {
    let mut out = String::with_capacity(2048);
    family(
        &mut out,
        "hello_requests_total",
        "counter",
        "Requests answered, by path (probes included; /metrics counts once answered).",
    );
    for (path, n) in &s.by_path {
        let _ = writeln!(out, "hello_requests_total{{path=\"{}\"}} {n}", escape(path));
    }
    family(
        &mut out,
        "hello_responses_total",
        "counter",
        "Answers by status code.",
    );
    for (code, n) in &s.status {
        let _ = writeln!(out, "hello_responses_total{{code=\"{code}\"}} {n}");
    }
    let single: [(&str, &str, &str, u64); 5] = [
        (
            "hello_bytes_sent_total",
            "counter",
            "Bytes of answers queued for clients.",
            s.bytes_sent,
        ),
        (
            "hello_bytes_received_total",
            "counter",
            "Bytes read from clients.",
            s.bytes_received,
        ),
        (
            "hello_connections_total",
            "counter",
            "Connections accepted.",
            s.connections,
        ),
        (
            "hello_open_connections",
            "gauge",
            "Connections open now.",
            s.open_connections,
        ),
        (
            "hello_held_bytes",
            "gauge",
            "Memory held by --hold-mib.",
            held_bytes,
        ),
    ];
    for (name, kind, help, value) in single {
        family(&mut out, name, kind, help);
        let _ = writeln!(out, "{name} {value}");
    }
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value as the format writes it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Appends the answer carrying the page.
pub(crate) fn put(out: &mut Vec<u8>, body: &str, head_only: bool, conn: Connection) -> u16 {
    let _ = write!(
        out,
        "HTTP/1.1 200 OK\r\nServer: hello-server\r\n\
         Content-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\n",
        body.len()
    );
    out.extend_from_slice(conn.header());
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    200
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_family_with_its_type() {
        let mut s = StatsSnapshot {
            bytes_sent: 1234,
            connections: 3,
            open_connections: 2,
            ..Default::default()
        };
        s.by_path.insert("/plaintext".into(), 10);
        s.by_path.insert("/health".into(), 1);
        s.status.insert(200, 11);
        let text = render(&s, 1 << 20);
        for line in [
            "# TYPE hello_requests_total counter",
            "hello_requests_total{path=\"/plaintext\"} 10",
            "hello_requests_total{path=\"/health\"} 1",
            "hello_responses_total{code=\"200\"} 11",
            "hello_bytes_sent_total 1234",
            "# TYPE hello_open_connections gauge",
            "hello_open_connections 2",
            "hello_held_bytes 1048576",
        ] {
            assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
        }
    }
}
