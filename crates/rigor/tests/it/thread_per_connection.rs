//! A server with a thread per connection (Python's `ThreadingHTTPServer`): its threads live as
//! long as the load's connections and exit when the load closes them, just before the window's
//! last reading. Its threads and context switches are checked against the load's connection
//! count and the server's own account of its whole life (`getrusage(RUSAGE_SELF)`, which keeps
//! the counts of threads that exited), printed when it is stopped.

use crate::common;
use common::*;

const SERVER: &str = r#"
import http.server, os, resource, signal, sys

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        body = b"hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

def stop(*_):
    u = resource.getrusage(resource.RUSAGE_SELF)
    print("involuntary-switches", u.ru_nivcsw, flush=True)
    os._exit(0)

signal.signal(signal.SIGTERM, stop)
server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
server.daemon_threads = True
server.serve_forever()
"#;

#[test]
fn threads_and_context_switches_of_a_thread_per_connection_server() {
    if !installed("python3") {
        skip("python3 is not installed");
        return;
    }
    let dir = temp_dir("thread-per-connection");
    std::fs::write(dir.join("server.py"), SERVER).unwrap();
    let port = free_port();
    let toml = with_command(
        &config(port, "", "/plaintext", ""),
        port,
        &format!("python3 server.py {port}"),
    );
    // The server and the load share one CPU, so the server's threads are preempted.
    let toml = format!(
        "{toml}\n[profiles.one]\napplication = {{ cpus = \"0\" }}\nload = {{ cpus = \"0\" }}\n"
    );
    let (t, json) = run_exit(&dir, &toml, &["-i", "1", "-p", "one"], 0);
    let json = json.unwrap_or_else(|| panic!("no result:\n{t}"));
    let it = &iterations(&json)[0];
    let connections = 8.0;
    // A thread per connection plus the listener, while the load ran. The window's last sample
    // may come after the load closed its connections when the machine is busy (the threads
    // are then gone): the most threads the window saw is what the connections made.
    let most = m(it, "app.threads.max").expect("app.threads.max");
    assert!(most > connections, "most threads {most}\n{t}");
    let end = m(it, "app.threads.end").expect("app.threads.end");
    assert!(
        (1.0..=most).contains(&end),
        "threads at end {end}, most {most}\n{t}"
    );
    let log = std::fs::read_to_string(it["log"].as_str().unwrap()).unwrap();
    let lifetime: f64 = log
        .lines()
        .find_map(|l| l.strip_prefix("involuntary-switches "))
        .unwrap_or_else(|| panic!("no rusage line in\n{log}"))
        .trim()
        .parse()
        .unwrap();
    let window = m(it, "app.ctx_switches.involuntary").expect("app.ctx_switches.involuntary");
    // The window's count is part of the server's life, and threads that served the window
    // and exited count in it.
    eprintln!("threads at end {end}, switches in the window {window}, in its life {lifetime}");
    assert!(lifetime > 0.0, "{log}");
    assert!(window > 0.0, "window 0, lifetime {lifetime}\n{t}");
    assert!(window <= lifetime, "window {window} > lifetime {lifetime}");
    let _ = std::fs::remove_dir_all(&dir);
}
