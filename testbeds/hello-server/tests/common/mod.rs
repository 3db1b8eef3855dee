//! Test helpers: an in-process server on an ephemeral port and a tiny, strict HTTP/1.1 client
//! (deliberately independent of the server's own code).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use hello_server::{Config, Server};

/// A config on an ephemeral port with two threads, so tests run in parallel without clashes.
pub fn config() -> Config {
    Config {
        port: 0,
        threads: 2,
        ..Config::default()
    }
}

pub fn start(config: Config) -> Server {
    hello_server::start(config).expect("server starts")
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Number of chunks the body came in (0 when not chunked).
    pub chunks: usize,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write");
    }

    pub fn get(&mut self, path: &str) -> Response {
        self.send(get(path).as_bytes());
        self.read(false)
    }

    /// Reads one response; `head_only` for answers to HEAD (no body whatever the headers say).
    pub fn read(&mut self, head_only: bool) -> Response {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status line");
        let mut parts = line.trim_end().splitn(3, ' ');
        assert_eq!(parts.next(), Some("HTTP/1.1"), "status line {line:?}");
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .expect("status code");
        let mut headers = Vec::new();
        loop {
            let mut line = Vec::new();
            self.reader
                .read_until(b'\n', &mut line)
                .expect("header line");
            let line = String::from_utf8(line).expect("utf8 header");
            let line = line.strip_suffix("\r\n").expect("CRLF");
            if line.is_empty() {
                break;
            }
            let (k, v) = line.split_once(':').expect("header colon");
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let mut resp = Response {
            status,
            headers,
            body: Vec::new(),
            chunks: 0,
        };
        if head_only || status < 200 || status == 204 || status == 304 {
            return resp;
        }
        if resp.header("transfer-encoding") == Some("chunked") {
            loop {
                let mut size = String::new();
                self.reader.read_line(&mut size).unwrap();
                let n = usize::from_str_radix(size.trim_end(), 16).expect("chunk size");
                let mut chunk = vec![0; n + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                assert_eq!(&chunk[n..], b"\r\n");
                if n == 0 {
                    break;
                }
                resp.chunks += 1;
                resp.body.extend_from_slice(&chunk[..n]);
            }
        } else {
            let len: usize = resp
                .header("content-length")
                .expect("length")
                .parse()
                .unwrap();
            resp.body = vec![0; len];
            self.reader.read_exact(&mut resp.body).expect("body");
        }
        resp
    }

    /// True when the server closed the connection (EOF, or reset) with nothing more to read.
    pub fn closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        match self.reader.read(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
        }
    }

    /// Half-closes: no more requests, but answers can still arrive.
    pub fn shutdown_write(&mut self) {
        self.writer.shutdown(std::net::Shutdown::Write).unwrap();
    }

    /// Reads exactly `n` raw bytes.
    pub fn read_raw(&mut self, n: usize) -> Vec<u8> {
        let mut out = vec![0; n];
        self.reader.read_exact(&mut out).expect("raw bytes");
        out
    }

    /// Reads everything until the server closes.
    pub fn read_to_end(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = self.reader.read_to_end(&mut out);
        out
    }
}

pub fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n")
}
