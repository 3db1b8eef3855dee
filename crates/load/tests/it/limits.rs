//! Hostile settings and impatient users: absurd numbers are clear errors before anything runs,
//! and a cancel is obeyed in every phase, the first connect included.

use crate::common;

use common::*;
use hello_server::Config;
use rigor_load::{check, run, Live, LoadError, LoadSpec};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A listener whose accept queue is full: further connects hang in SYN-SENT until they time out.
fn unanswering_listener() -> (
    std::net::SocketAddr,
    std::net::TcpListener,
    Vec<std::net::TcpStream>,
) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a descriptor we create and then hand to a TcpListener.
    let listener = unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes([127, 0, 0, 1]),
            },
            sin_zero: [0; 8],
        };
        let rc = libc::bind(
            fd,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        assert_eq!(rc, 0);
        assert_eq!(libc::listen(fd, 0), 0);
        std::net::TcpListener::from_raw_fd(fd)
    };
    let addr = listener.local_addr().unwrap();
    // Fill the queue (never accepted).
    let fill: Vec<_> = (0..2)
        .filter_map(|_| {
            std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok()
        })
        .collect();
    (addr, listener, fill)
}

#[test]
fn cancel_during_the_first_connect_is_obeyed_at_once() {
    let (addr, _listener, _fill) = unanswering_listener();
    let s = LoadSpec {
        url: format!("http://{addr}/"),
        timeout: Duration::from_secs(60),
        connections: 2,
        ..Default::default()
    };
    let (r, took) = cancelled_after(&s, &Live::default(), Duration::from_millis(300));
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert!(
        matches!(r, Err(LoadError::Interrupted)),
        "{:?}",
        r.map(|r| r.requests)
    );
}

#[test]
fn cancel_at_an_absurd_rate_is_obeyed_at_once() {
    let srv = server(Config::default());
    let s = LoadSpec {
        rate: Some(1e12),
        duration: Duration::from_secs(30),
        ..spec(&srv, "/plaintext")
    };
    let (r, took) = cancelled_after(&s, &Live::default(), Duration::from_millis(500));
    assert!(took < Duration::from_secs(8), "took {took:?}");
    let r = r.unwrap();
    assert!(r.cancelled);
    assert!(r.requests > 0);
}

#[test]
fn absurd_numbers_are_clear_errors_before_anything_runs() {
    // Nothing listens here: every case must fail on its numbers, before connecting.
    let base = LoadSpec {
        url: "http://127.0.0.1:9/".into(),
        ..Default::default()
    };
    let hour = Duration::from_secs(3600);
    for (spec, needle) in [
        (
            LoadSpec {
                connections: usize::MAX,
                ..base.clone()
            },
            "connections",
        ),
        (
            LoadSpec {
                threads: usize::MAX,
                ..base.clone()
            },
            "threads",
        ),
        (
            LoadSpec {
                pipeline: 100_000_000_000,
                ..base.clone()
            },
            "pipeline",
        ),
        (
            LoadSpec {
                duration: hour * 999_999,
                ..base.clone()
            },
            "duration",
        ),
        (
            LoadSpec {
                warmup: hour * 999_999,
                ..base.clone()
            },
            "warmup",
        ),
        (
            LoadSpec {
                rate: Some(1e300),
                ..base.clone()
            },
            "rate",
        ),
        (
            LoadSpec {
                connections: 1_000_000,
                pipeline: 1000,
                ..base.clone()
            },
            "in flight",
        ),
        (
            LoadSpec {
                timeout: hour * 2,
                ..base.clone()
            },
            "timeout",
        ),
        (
            LoadSpec {
                rate: Some(f64::NAN),
                ..base.clone()
            },
            "rate",
        ),
        (
            LoadSpec {
                rate: Some(-1.0),
                ..base.clone()
            },
            "rate",
        ),
        (
            LoadSpec {
                pipeline: 1000,
                body: Some(vec![b'x'; 1 << 20]),
                ..base.clone()
            },
            "pipeline",
        ),
    ] {
        let e = check(&spec).unwrap_err();
        assert!(matches!(e, LoadError::InvalidSpec(_)), "{e}");
        assert!(e.to_string().contains(needle), "{needle}: {e}");
        let start = Instant::now();
        let e = run(&spec, &Live::default(), &AtomicBool::new(false)).unwrap_err();
        assert!(e.to_string().contains(needle), "{needle}: {e}");
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "{:?}",
            start.elapsed()
        );
    }
    // In range, it passes (connecting is run's business, not check's).
    check(&base).unwrap();
}

#[test]
fn a_long_window_costs_nothing_up_front() {
    // A 100-day window, cancelled after a moment: nothing is sized by the duration.
    let srv = server(Config::default());
    let s = LoadSpec {
        duration: Duration::from_secs(100 * 24 * 3600),
        ..spec(&srv, "/plaintext")
    };
    let (r, took) = cancelled_after(&s, &Live::default(), Duration::from_millis(400));
    assert!(took < Duration::from_secs(8), "took {took:?}");
    let r = r.unwrap();
    assert!(r.cancelled && r.requests > 0);
    assert!(
        r.timeline.len() <= 2,
        "{} timeline entries",
        r.timeline.len()
    );
}
