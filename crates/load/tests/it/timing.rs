//! Timing-sensitive engine tests (schedules, stalls). They take a lock so they never run at the
//! same time as each other; cargo runs this binary after (not alongside) the other test binaries.

use crate::common;

use common::*;
use hello_server::Config;
use rigor_load::{Live, LoadReport, LoadSpec};
use std::sync::Mutex;
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn open_model_counts_match_server_and_rate_is_met() {
    let _serial = serial();
    let srv = server(Config::default());
    let s = LoadSpec {
        rate: Some(2000.0),
        connections: 32,
        warmup: Duration::from_millis(200),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert_clean(&r);
    let rate = r.rate.expect("rate report");
    assert!(
        (rate.achieved - 2000.0).abs() < 100.0,
        "achieved {}",
        rate.achieved
    );
    // How many requests found every connection busy depends on how fast a busy machine lets
    // the server answer: only that they are among the requests due is certain.
    assert!(
        rate.waited_for_connection <= r.requests + rate.not_sent + r.outside_window.requests,
        "{} waited",
        rate.waited_for_connection
    );
    assert!(r.latency_uncorrected.is_some());
    assert_counts_match(&srv, &r);
}

#[test]
fn stall_shows_in_corrected_latency_only() {
    let _serial = serial();
    // The whole server freezes 100 ms every 500 ms. At a fixed rate with two connections, the
    // requests due during a stall wait: their corrected latency includes the wait, while the
    // uncorrected one (from the late send) does not.
    let srv = server(Config {
        stall: Some((Duration::from_millis(100), Duration::from_millis(500))),
        ..Default::default()
    });
    let s = LoadSpec {
        connections: 2,
        threads: 1,
        rate: Some(1000.0),
        duration: Duration::from_millis(2000),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    let unc = r.latency_uncorrected.clone().unwrap();
    assert!(
        r.latency.p99_ms > 60.0,
        "corrected p99 {} ms",
        r.latency.p99_ms
    );
    assert!(
        r.latency.max_ms < 400.0,
        "corrected max {} ms",
        r.latency.max_ms
    );
    assert!(unc.p99_ms < 20.0, "uncorrected p99 {} ms", unc.p99_ms);
    assert!(r.rate.unwrap().waited_for_connection > 0);
}

#[test]
fn open_model_keeps_schedule_without_warmup() {
    let _serial = serial();
    // Connections open before the clock starts, so even the first requests go out on time.
    let srv = server(Config::default());
    let s = LoadSpec {
        rate: Some(5000.0),
        connections: 64,
        threads: 1,
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert_clean(&r);
    let rate = r.rate.unwrap();
    // A busy 2-core box can stall the server for many ms: honest waiting, not a bug. Without
    // warmup, those that waited are among the requests due.
    assert!(
        rate.waited_for_connection <= r.requests + rate.not_sent + r.outside_window.requests,
        "{} waited",
        rate.waited_for_connection
    );
    assert_counts_match(&srv, &r);
    assert!(
        (rate.achieved - 5000.0).abs() < 150.0,
        "achieved {}",
        rate.achieved
    );
    // The worst lag depends on how busy the machine is; it must be measured, not bounded here.
    assert!(rate.max_schedule_lag_ms.is_finite() && rate.max_schedule_lag_ms >= 0.0);
    // Each corrected latency is its uncorrected one plus its own send lag, which is between 0
    // and the worst lag: so are the medians (within the histograms' precision). How late the
    // median leaves depends on how busy the machine is, so it is not bounded here.
    let unc = r.latency_uncorrected.unwrap();
    let lag = r.latency.p50_ms - unc.p50_ms;
    let precision = 0.01 * r.latency.p50_ms + 0.01;
    assert!(
        lag >= -precision && lag <= rate.max_schedule_lag_ms + precision,
        "p50 corrected {} vs uncorrected {}, worst lag {}",
        r.latency.p50_ms,
        unc.p50_ms,
        rate.max_schedule_lag_ms
    );
}

/// A server frozen over `[from, from + stall)` ms after it starts (its first freeze).
fn frozen_server(from_ms: u64, stall_ms: u64) -> hello_server::Server {
    server(Config {
        stall: Some((
            Duration::from_millis(stall_ms),
            Duration::from_millis(from_ms + stall_ms),
        )),
        ..Default::default()
    })
}

#[test]
fn open_model_freeze_over_the_window_end_is_in_the_latency() {
    let _serial = serial();
    // The server freezes 1.0–1.6 s after it starts; the window is the first 1.3 s. A quarter of
    // the window's requests are due during the freeze and answered only after the window
    // closes: they must be waited for, with latencies of 300–600 ms.
    let srv = frozen_server(1000, 600);
    let s = LoadSpec {
        rate: Some(1000.0),
        connections: 64,
        threads: 1,
        duration: Duration::from_millis(1300),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert!(r.latency.p99_ms > 250.0, "p99 {} ms", r.latency.p99_ms);
    assert!(r.latency.max_ms > 250.0, "max {} ms", r.latency.max_ms);
    // Every request due in the window is accounted for: 1300 of them.
    let rate = r.rate.unwrap();
    assert_eq!(
        r.requests + r.errors.timeout + r.abandoned,
        1300,
        "{} answered, {:?}, {} abandoned, {} not sent",
        r.requests,
        r.errors,
        r.abandoned,
        rate.not_sent
    );
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.latency.count, 1300);
    assert_eq!(r.in_flight_at_end, 0);
    assert_counts_match(&srv, &r);
}

#[test]
fn closed_model_freeze_over_the_window_end_is_in_the_latency() {
    let _serial = serial();
    // Closed model: the requests in flight when the server froze (1.0 s) are answered at 1.6 s,
    // after the 1.3 s window closed; their 600 ms belongs in the window's latency.
    let srv = frozen_server(1000, 600);
    let s = LoadSpec {
        connections: 8,
        threads: 1,
        duration: Duration::from_millis(1300),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert!(r.latency.max_ms > 400.0, "max {} ms", r.latency.max_ms);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.in_flight_at_end, 0);
    assert_eq!(r.latency.count, r.requests);
    assert_counts_match(&srv, &r);
}

#[test]
fn freeze_past_the_timeout_after_the_window_gives_timeouts_not_silence() {
    let _serial = serial();
    // The freeze (1.0–1.9 s) outlasts the window (1.2 s) plus the timeout (0.3 s): the requests
    // due from 1.0 s get no answer in time. Each is a timeout, in the latency at >= 300 ms, and
    // the run still ends by window + timeout.
    let srv = frozen_server(1000, 900);
    let s = LoadSpec {
        rate: Some(500.0),
        connections: 16,
        threads: 1,
        timeout: Duration::from_millis(300),
        duration: Duration::from_millis(1200),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert_eq!(
        r.requests + r.errors.timeout + r.abandoned,
        600,
        "{} answered, {:?}, {} abandoned",
        r.requests,
        r.errors,
        r.abandoned
    );
    assert!(r.errors.timeout >= 50, "{:?}", r.errors);
    assert!(r.latency.p99_ms >= 300.0, "p99 {} ms", r.latency.p99_ms);
    assert_eq!(r.latency.count, r.requests + r.errors.timeout);
}

#[test]
fn absurd_rate_ends_on_time_and_says_the_rate_was_not_met() {
    let _serial = serial();
    // A trillion requests per second: the engine must send as fast as its connections allow,
    // end on time, and report the unmet rate and the requests never sent.
    let srv = server(Config::default());
    let s = LoadSpec {
        rate: Some(1e12),
        connections: 16,
        threads: 1,
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    let rate = r.rate.unwrap();
    assert!(r.requests > 0, "no request answered");
    assert!(
        rate.not_sent > 100_000_000_000,
        "{} not sent",
        rate.not_sent
    );
    assert!(r
        .warnings
        .iter()
        .any(|w| w.kind == "rate_not_met" && w.message.contains("never sent")));
    assert_counts_match(&srv, &r);
}

/// Runs `spec`, setting the cancel flag `cancel_after` into the run, as Ctrl-C does.
fn go_cancelled(spec: &LoadSpec, cancel_after: Duration) -> (LoadReport, Duration) {
    let (r, took) = cancelled_after(spec, &Live::default(), cancel_after);
    (r.expect("run"), took)
}

#[test]
fn cancel_during_the_drain_gives_up_the_stuck_requests_as_timeouts() {
    let _serial = serial();
    // Closed model: the server freezes at 0.8 s for 5 s; the window is 1 s and the timeout 20 s,
    // so the requests in flight at the freeze are still awaited when the run is cancelled at
    // 2.5 s. They are the stall the drain exists for: timeouts in the latency at ~1.7 s.
    let srv = frozen_server(800, 5000);
    let s = LoadSpec {
        connections: 4,
        threads: 1,
        timeout: Duration::from_secs(20),
        duration: Duration::from_millis(1000),
        ..spec(&srv, "/plaintext")
    };
    let (r, took) = go_cancelled(&s, Duration::from_millis(2500));
    // Before the server thaws at 5.8 s: the drain was cut, not ended by the answers.
    assert!(took < Duration::from_millis(5500), "took {took:?}");
    assert!(r.cancelled && r.drain_cut);
    assert_eq!(r.in_flight_at_end, 0);
    assert_eq!(r.errors.timeout, 4, "{:?}", r.errors);
    assert_eq!(r.latency.count, r.requests + 4);
    assert!(r.latency.max_ms > 1000.0, "max {} ms", r.latency.max_ms);
    assert!((r.measured_secs - 1.0).abs() < 1e-9, "{}", r.measured_secs);
    let w = r.warnings.iter().find(|w| w.kind == "cancelled").unwrap();
    assert!(w.message.contains("window had closed"), "{}", w.message);
}

#[test]
fn open_model_cancel_during_the_drain_gives_up_the_unsent_too() {
    let _serial = serial();
    // 200 req/s for 1.5 s on 4 connections; the server freezes at 1.0 s for 5 s. When the run is
    // cancelled at 2.5 s, every one of the window's 300 requests is answered or a timeout —
    // including those due but never sent, each in the latency.
    let srv = frozen_server(1000, 5000);
    let s = LoadSpec {
        rate: Some(200.0),
        connections: 4,
        threads: 1,
        timeout: Duration::from_secs(10),
        duration: Duration::from_millis(1500),
        ..spec(&srv, "/plaintext")
    };
    let (r, _) = go_cancelled(&s, Duration::from_millis(2500));
    let rate = r.rate.unwrap();
    assert!(r.drain_cut);
    assert_eq!(r.in_flight_at_end, 0);
    assert_eq!(
        r.requests + r.errors.timeout,
        300,
        "{} answered, {:?}",
        r.requests,
        r.errors
    );
    assert!(rate.not_sent >= 50, "{} not sent", rate.not_sent);
    assert_eq!(r.latency.count, 300);
    assert!(r.latency.p99_ms > 1000.0, "p99 {} ms", r.latency.p99_ms);
}

#[test]
fn each_second_has_its_own_latency_above_the_servers_delay_with_the_freeze_in_its_second() {
    let _serial = serial();
    // Every answer takes at least 3 ms; the server also freezes 1.2–1.6 s after it starts (and
    // next at 2.8 s, after the window). The window is 2.5 s: two full seconds and a half.
    let srv = server(Config {
        delay: Duration::from_millis(3),
        stall: Some((Duration::from_millis(400), Duration::from_millis(1600))),
        ..Default::default()
    });
    let s = LoadSpec {
        connections: 8,
        threads: 2,
        duration: Duration::from_millis(2500),
        ..spec(&srv, "/plaintext")
    };
    let r = go(&s);
    assert_clean(&r);
    let t = &r.timeline;
    assert_eq!(t.len(), 3, "{t:?}");
    // Every response of the window is in exactly one second.
    assert_eq!(t.iter().map(|s| s.requests).sum::<u64>(), r.requests);
    let ms = |x: Option<f64>| x.expect("a second with responses");
    for (i, sec) in t.iter().enumerate() {
        let (mean, p99, max) = (
            ms(sec.latency_mean_ms),
            ms(sec.latency_p99_ms),
            ms(sec.latency_max_ms),
        );
        assert!(mean >= 3.0 && p99 >= 3.0, "second {i}: {sec:?}");
        assert!(
            p99 <= max && max <= r.latency.max_ms * 1.001,
            "second {i}: {sec:?}"
        );
    }
    // The requests in flight when the server froze were answered 400 ms later, in second 1.
    assert!(ms(t[1].latency_max_ms) >= 350.0, "{t:?}");
    assert!(ms(t[0].latency_max_ms) < 350.0, "{t:?}");
    // Weighted by their requests, the seconds' exact means are the window's (its histogram is
    // exact to 0.1%).
    let weighted = t
        .iter()
        .map(|s| s.requests as f64 * ms(s.latency_mean_ms))
        .sum::<f64>()
        / r.requests as f64;
    let mean = r.latency.mean_ms;
    assert!(
        (weighted - mean).abs() <= mean * 0.002,
        "{weighted} vs {mean}"
    );
    assert_counts_match(&srv, &r);
}
