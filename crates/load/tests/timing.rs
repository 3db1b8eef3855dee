//! Timing-sensitive engine tests (schedules, stalls). They take a lock so they never run at the
//! same time as each other; cargo runs this binary after (not alongside) the other test binaries.

mod common;

use common::*;
use hello_server::Config;
use rigor_load::LoadSpec;
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
    assert!(
        rate.waited_for_connection <= r.requests / 10,
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
    // A busy 2-core box can stall the server for many ms: honest waiting, not a bug.
    assert!(
        rate.waited_for_connection <= r.requests / 10,
        "{} waited",
        rate.waited_for_connection
    );
    assert!(
        (rate.achieved - 5000.0).abs() < 150.0,
        "achieved {}",
        rate.achieved
    );
    // The worst lag depends on how busy the machine is; it must be measured, not bounded here.
    assert!(rate.max_schedule_lag_ms.is_finite() && rate.max_schedule_lag_ms >= 0.0);
    // Typical schedule accuracy: the median request leaves well under a millisecond late.
    let unc = r.latency_uncorrected.unwrap();
    assert!(
        r.latency.p50_ms - unc.p50_ms < 0.5,
        "p50 corrected {} vs uncorrected {}",
        r.latency.p50_ms,
        unc.p50_ms
    );
}
