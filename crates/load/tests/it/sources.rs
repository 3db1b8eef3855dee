//! Connections from several source addresses: each connection comes from the address its turn
//! gives it (the server sees it as the peer), and a load that needs more local ports than one
//! address has is refused before it starts, saying how many addresses would do.

use rigor_load::{check, run, Live, LoadSpec};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A minimal HTTP/1.1 server that answers every request with an empty 200 and counts, per peer
/// address, the connections it accepted and the requests it answered.
/// Per peer address: connections accepted, requests answered.
type Seen = Arc<Mutex<BTreeMap<IpAddr, (usize, usize)>>>;

fn counting_server() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(BTreeMap::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let peer = stream.peer_addr().unwrap().ip();
            kept.lock().unwrap().entry(peer).or_insert((0, 0)).0 += 1;
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let mut pending = Vec::new();
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        if stream
                            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                            .is_err()
                        {
                            return;
                        }
                        kept.lock().unwrap().entry(peer).or_insert((0, 0)).1 += 1;
                    }
                }
            });
        }
    });
    (url, seen)
}

#[test]
fn connections_take_the_source_addresses_in_turn() {
    let (url, seen) = counting_server();
    let sources: Vec<IpAddr> = rigor_load::parse_sources("127.0.0.2-127.0.0.5", 16).unwrap();
    let spec = LoadSpec {
        url,
        connections: 8,
        threads: 2,
        duration: Duration::from_millis(500),
        source_addrs: sources.clone(),
        ..Default::default()
    };
    let r = run(&spec, &Live::default(), &AtomicBool::new(false)).unwrap();
    assert!(r.requests > 0);
    assert_eq!(r.errors.connect, 0);
    std::thread::sleep(Duration::from_millis(100));
    let seen = seen.lock().unwrap().clone();
    let peers: Vec<IpAddr> = seen.keys().copied().collect();
    assert_eq!(
        peers, sources,
        "only the source addresses were used: {seen:?}"
    );
    for (ip, (conns, requests)) in &seen {
        // Two of the 8 connections each; the first address also made the preflight connect.
        assert!(
            (2..=3).contains(conns),
            "{ip} had {conns} connections: {seen:?}"
        );
        assert!(*requests > 0, "{ip} served no request: {seen:?}");
    }
    let answered: usize = seen.values().map(|(_, n)| n).sum();
    let sent = r.requests + r.outside_window.requests;
    assert!(
        answered as u64 >= r.requests && answered as u64 <= sent + r.in_flight_at_end,
        "server answered {answered}; engine: {} measured, {} outside",
        r.requests,
        r.outside_window.requests
    );
}

#[test]
fn more_connections_than_local_ports_are_refused_naming_the_fix() {
    let ports = rigor_load::local_ports();
    let spec = LoadSpec {
        url: "http://127.0.0.1:9/".into(),
        connections: ports + 1,
        ..Default::default()
    };
    let e = check(&spec).unwrap_err().to_string();
    assert!(
        e.contains("local ports") && e.contains("--source-addr 127.0.0.1-127.0.0.2"),
        "{e}"
    );
    let spread = LoadSpec {
        source_addrs: rigor_load::parse_sources("127.0.0.1-127.0.0.2", 4).unwrap(),
        ..spec.clone()
    };
    // Enough ports now; what may still be short is the descriptor limit.
    if let Err(e) = check(&spread) {
        assert!(!e.to_string().contains("local ports"), "{e}");
    }
    let v6 = LoadSpec {
        source_addrs: vec!["::1".parse().unwrap()],
        connections: 1,
        ..spec
    };
    assert!(check(&v6).unwrap_err().to_string().contains("cannot reach"));
}

#[test]
fn a_source_address_this_machine_lacks_is_refused_naming_it() {
    let (url, seen) = counting_server();
    // TEST-NET-2: never an address of this machine.
    let spec = LoadSpec {
        url,
        connections: 4,
        duration: Duration::from_millis(300),
        source_addrs: rigor_load::parse_sources("127.0.0.1,198.51.100.7", 4).unwrap(),
        ..Default::default()
    };
    let e = run(&spec, &Live::default(), &AtomicBool::new(false))
        .map(|r| {
            format!(
                "ran: {} requests, {} connect errors",
                r.requests, r.errors.connect
            )
        })
        .unwrap_or_else(|e| e.to_string());
    assert!(
        e.contains("source address 198.51.100.7 cannot be used"),
        "{e}"
    );
    assert!(seen.lock().unwrap().is_empty(), "nothing connected");
}
