//! A small HTTP/1.1 server independent of the engine that counts what it received per path
//! (pipelined requests too), keeps the bodies it was sent and the second each request arrived
//! in, and answers `/sleep/N…` after N ms: the reference a request mix is checked against.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Default)]
pub struct Seen {
    /// Requests by path.
    pub paths: BTreeMap<String, u64>,
    /// Every request body received, in arrival order.
    pub bodies: Vec<Vec<u8>>,
    /// Requests by the second (since the server started) they arrived in.
    pub per_second: Vec<u64>,
}

pub struct PathServer {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Seen>>,
    pub started: Instant,
}

impl PathServer {
    pub fn start() -> PathServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let started = Instant::now();
        let shared = seen.clone();
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(s) = s else { continue };
                let seen = shared.clone();
                std::thread::spawn(move || serve(s, &seen, started));
            }
        });
        PathServer {
            addr,
            seen,
            started,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Requests to `path` so far.
    pub fn count(&self, path: &str) -> u64 {
        self.seen
            .lock()
            .unwrap()
            .paths
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

fn serve(mut s: TcpStream, seen: &Mutex<Seen>, started: Instant) {
    let _ = s.set_nodelay(true);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        // Answer every whole request in the buffer, in order (a pipeline's too).
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut req = httparse::Request::new(&mut headers);
            let Ok(httparse::Status::Complete(head)) = req.parse(&buf) else {
                break;
            };
            let len = req
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse().ok())
                .unwrap_or(0usize);
            if buf.len() < head + len {
                break;
            }
            let path = req.path.unwrap_or("").to_string();
            let method = req.method.unwrap_or("").to_string();
            let body = buf[head..head + len].to_vec();
            buf.drain(..head + len);
            {
                let mut seen = seen.lock().unwrap();
                *seen.paths.entry(path.clone()).or_insert(0) += 1;
                if !body.is_empty() {
                    seen.bodies.push(body);
                }
                let sec = started.elapsed().as_secs() as usize;
                if seen.per_second.len() <= sec {
                    seen.per_second.resize(sec + 1, 0);
                }
                seen.per_second[sec] += 1;
            }
            if let Some(ms) = path
                .strip_prefix("/sleep/")
                .and_then(|r| r.split(['/', '?']).next()?.parse::<u64>().ok())
            {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            let answer: &[u8] = if method == "HEAD" {
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
            } else if path.starts_with("/missing") {
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
            } else {
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
            };
            if s.write_all(answer).is_err() {
                return;
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}
