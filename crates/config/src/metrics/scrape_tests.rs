use super::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};

/// A local server that answers every connection with `answer` (after reading the request
/// head); the URL of its `/metrics`.
fn serve(answer: impl Fn(&mut TcpStream, u64) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    let n = AtomicU64::new(0);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            answer(&mut stream, n.fetch_add(1, Ordering::SeqCst));
        }
    });
    url
}

fn chunked(body: &str) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in body.as_bytes().chunks(7) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

#[test]
fn a_chunked_page_is_read_whole() {
    let url = serve(|s, n| {
        let body = format!(
            "# TYPE req_total counter\nreq_total{{code=\"200\"}} {}\n",
            100 + n
        );
        let _ = s.write_all(&chunked(&body));
    });
    let (r, _) = fetch(&url, &[]).unwrap();
    assert_eq!(r["req_total"], (reading::Flavor::Counter, 100.0));
}

#[test]
fn failures_say_what_went_wrong() {
    let status = serve(|s, _| {
        let _ = s.write_all(b"HTTP/1.1 503 Unavailable\r\nContent-Length: 4\r\n\r\nbusy");
    });
    let e = fetch(&status, &[]).unwrap_err();
    assert!(e.0.contains("answered 503"), "{e}");

    let html = serve(|s, _| {
        let body = "<html><body>metrics</body></html>";
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    });
    let e = fetch(&html, &[]).unwrap_err();
    assert!(e.0.contains("not Prometheus text: line 1"), "{e}");

    let binary = serve(|s, _| {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n\xff\xfe\x00\x01");
    });
    let e = fetch(&binary, &[]).unwrap_err();
    assert!(e.0.contains("not UTF-8"), "{e}");

    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = fetch(&format!("http://127.0.0.1:{port}/metrics"), &[]).unwrap_err();
    assert!(e.0.to_lowercase().contains("refused"), "{e}");
}

#[test]
fn a_100_mib_page_is_refused_without_reading_it_all() {
    let url = serve(|s, _| {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
            100u64 << 20
        );
        let line = "x_total 1\n".repeat(6554); // 64 KiB of valid text
        for _ in 0..1600 {
            if s.write_all(line.as_bytes()).is_err() {
                return;
            }
        }
    });
    let t = Instant::now();
    let e = fetch(&url, &[]).unwrap_err();
    assert!(e.0.contains("larger than 16777216 bytes"), "{e}");
    assert!(t.elapsed() < TIMEOUT, "{:?}", t.elapsed());
}

#[test]
fn a_page_that_never_comes_times_out() {
    let url = serve(|_, _| std::thread::sleep(Duration::from_secs(5)));
    let t = Instant::now();
    let e = fetch(&url, &[]).unwrap_err();
    assert!(e.0.contains("did not answer within 2000 ms"), "{e}");
    let waited = t.elapsed();
    assert!(
        waited >= TIMEOUT && waited < TIMEOUT + Duration::from_millis(500),
        "{waited:?}"
    );
}

#[test]
fn the_scraper_reads_the_edges_and_between() {
    let url = serve(|s, n| {
        let body = format!("# TYPE req_total counter\nreq_total {}\n", n * 10);
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
    });
    let origin = Instant::now();
    let mut sc = Scraper::start(&url, vec![], Duration::from_millis(20), origin);
    std::thread::sleep(Duration::from_millis(50));
    sc.window_start();
    std::thread::sleep(Duration::from_millis(200));
    sc.window_end();
    sc.window_end(); // once only
    std::thread::sleep(Duration::from_millis(50));
    let log = sc.stop();
    let (s, e) = (log.start.unwrap(), log.end.unwrap());
    assert!(
        s >= 1 && e >= s + 5,
        "start {s}, end {e} of {}",
        log.scrapes.len()
    );
    assert!(e < log.scrapes.len() - 1, "scrapes continue after the end");
    assert_eq!(log.attempts, log.scrapes.len() as u64);
    assert!(log.failures.is_empty());
    // Times ascend and the edges are 200 ms or more apart.
    assert!(log.scrapes.windows(2).all(|w| w[0].t_ms <= w[1].t_ms));
    let span = log.scrapes[e].t_ms - log.scrapes[s].t_ms;
    assert!((200.0..400.0).contains(&span), "{span}");
}
