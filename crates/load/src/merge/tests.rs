use super::*;
use crate::report::ReportInput;
use crate::stats::ThreadStats;

/// A small deterministic generator: the tests need spread-out latencies, not real randomness.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// One host's tallies: `n` samples (µs, heavy-tailed), some errors, statuses and seconds.
fn tallies(seed: u64, n: usize, open_model: bool) -> (ThreadStats, Vec<u64>) {
    let mut rng = Lcg(seed);
    let mut s = ThreadStats::new(open_model, 3);
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let us = 50 + rng.next() % 2_000 + if i % 97 == 0 { rng.next() % 500_000 } else { 0 };
        samples.push(us);
        s.latency.record(us).unwrap();
        if let Some(u) = s.uncorrected.as_mut() {
            u.record(us / 2 + 1).unwrap();
        }
        let second = s.second(i * 3 / n);
        second.responses += 1;
        second.latency.record_n(us, 1);
        s.status[if i % 50 == 0 { 503 } else { 200 }] += 1;
    }
    s.requests = n as u64;
    s.bytes_read = 120 * n as u64;
    s.errors.timeout = seed % 5;
    s.errors.closed = 2;
    s.tick_errors(1, seed % 5 + 2);
    s.parse_failure("invalid status line", || "XTTP/1.1".into());
    s.abandoned = 2;
    s.warmup_answered = 10 + seed;
    s.waited = seed;
    s.max_lag_ns = seed * 1_000_000;
    s.cpu_secs = 0.4 + seed as f64 / 10.0;
    s.measured_ns = 3_000_000_000 + seed;
    (s, samples)
}

fn report(s: &ThreadStats, open_model: bool) -> LoadReport {
    LoadReport::build(
        ReportInput {
            url: "http://127.0.0.1:8080/",
            connections: 4,
            threads: 2,
            pipeline: 1,
            warmup_secs: 0.0,
            rate: open_model.then_some(1000.0),
            cancelled: false,
            insecure: false,
            io: "epoll",
            tls: false,
            streams: None,
            request_names: None,
            cores: 2,
            window_opened_at: None,
        },
        s,
    )
}

#[test]
fn merged_latency_is_the_latency_of_the_union_of_samples() {
    for open_model in [false, true] {
        let (sa, xa) = tallies(1, 5_000, open_model);
        let (sb, xb) = tallies(2, 3_000, open_model);
        let (a, b) = (report(&sa, open_model), report(&sb, open_model));
        let m = merge(&[a.clone(), b.clone()]);

        let mut union = new_histogram();
        for us in xa.iter().chain(&xb) {
            union.record(*us).unwrap();
        }
        assert_eq!(m.latency, LatencyStats::from_histogram(&union));
        assert_eq!(m.latency_histogram.as_ref(), Some(&union));
        assert_eq!(m.latency.count, 8_000);
        assert_eq!(
            m.latency_uncorrected.is_some(),
            open_model,
            "uncorrected latency only in the open model"
        );

        assert_eq!(m.requests, a.requests + b.requests);
        assert_eq!(m.bytes_read, a.bytes_read + b.bytes_read);
        assert_eq!(m.rps, a.rps + b.rps);
        assert_eq!(m.connections, 8);
        assert_eq!(m.threads, 4);
        assert_eq!(m.client_cores, 4);
        assert_eq!(m.client_cpu_secs, a.client_cpu_secs + b.client_cpu_secs);
        assert_eq!(
            m.status_counts[&200],
            a.status_counts[&200] + b.status_counts[&200]
        );
        assert_eq!(
            m.status_counts[&503],
            a.status_counts[&503] + b.status_counts[&503]
        );
        assert_eq!(m.bad_responses, a.bad_responses + b.bad_responses);
        assert_eq!(m.errors.total(), a.errors.total() + b.errors.total());
        assert_eq!(m.errors.timeout, a.errors.timeout + b.errors.timeout);
        assert_eq!(m.parse_failures.len(), 1);
        assert_eq!(m.parse_failures[0].count, 2);
        assert_eq!(m.abandoned, 4);
        assert_eq!(
            m.outside_window.requests,
            a.outside_window.requests + b.outside_window.requests
        );
        assert_eq!(m.timeline.len(), 3);
        for (i, sec) in m.timeline.iter().enumerate() {
            assert_eq!(
                sec.requests,
                a.timeline[i].requests + b.timeline[i].requests
            );
            assert_eq!(sec.errors, a.timeline[i].errors + b.timeline[i].errors);
        }
        let timeline_requests: u64 = m.timeline.iter().map(|s| s.requests).sum();
        assert_eq!(timeline_requests, m.requests);
        if open_model {
            let (ra, rb, rm) = (a.rate.unwrap(), b.rate.unwrap(), m.rate.unwrap());
            assert_eq!(rm.offered, 2000.0);
            assert_eq!(rm.achieved, ra.achieved + rb.achieved);
            assert_eq!(rm.waited_for_connection, 3);
            assert_eq!(rm.max_schedule_lag_ms, 2.0);
        }
        // Warnings are decided on the merged figures.
        assert!(m.warnings.iter().any(|w| w.kind == "load_errors"
            && w.message
                .starts_with(&format!("{} errors", m.errors.total()))));
    }
}

#[test]
fn merging_is_associative_and_a_single_part_is_itself() {
    let parts: Vec<LoadReport> = (1..=3)
        .map(|seed| report(&tallies(seed, 1_000, false).0, false))
        .collect();
    let all = merge(&parts);
    let stepwise = merge(&[merge(&parts[..2]), parts[2].clone()]);
    assert_eq!(all.latency, stepwise.latency);
    assert_eq!(all.requests, stepwise.requests);
    let one = merge(&parts[..1]);
    assert_eq!(
        serde_json::to_value(&one).unwrap(),
        serde_json::to_value(&parts[0]).unwrap()
    );
}

#[test]
fn the_wire_form_round_trips_every_figure_and_the_histograms() {
    for open_model in [false, true] {
        let r = report(&tallies(7, 4_000, open_model).0, open_model);
        let text = serde_json::to_string(&ReportWire::encode(&r).unwrap()).unwrap();
        let back: ReportWire = serde_json::from_str(&text).unwrap();
        let d = back.decode().unwrap();
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            serde_json::to_string(&r).unwrap()
        );
        assert_eq!(d.latency_histogram, r.latency_histogram);
        assert_eq!(d.uncorrected_histogram, r.uncorrected_histogram);
        assert_eq!(d.uncorrected_histogram.is_some(), open_model);
        assert_eq!(d.rps.to_bits(), r.rps.to_bits());
        assert_eq!(d.warnings, r.warnings);
        // The report's own JSON is unchanged by the histograms it carries.
        assert!(!serde_json::to_string(&r).unwrap().contains("histogram"));
    }
}

#[test]
fn a_damaged_wire_form_is_refused() {
    let r = report(&tallies(3, 100, false).0, false);
    let mut w = ReportWire::encode(&r).unwrap();
    w.latency_hdr = "not base64!".into();
    assert!(w.decode().unwrap_err().to_string().contains("base64"));
    let mut w = ReportWire::encode(&r).unwrap();
    w.report.latency.count += 1;
    assert!(w.decode().unwrap_err().to_string().contains("holds 100"));
    let mut other = Histogram::<u64>::new_with_bounds(1, 1000, 2).unwrap();
    other.record(5).unwrap();
    let mut w = ReportWire::encode(&r).unwrap();
    w.latency_hdr = encode_histogram(&other).unwrap();
    assert!(w.decode().unwrap_err().to_string().contains("bounds"));
    let mut bare = r.clone();
    bare.latency_histogram = None;
    assert!(ReportWire::encode(&bare).is_err());
}

/// `tallies` of an https run: `n` handshakes (µs), every third one resumed, `tls` errors.
fn tls_tallies(seed: u64, n: usize) -> ThreadStats {
    let mut s = tallies(seed, 500, false).0.with_tls(true);
    let mut rng = Lcg(seed);
    let t = s.tls.as_mut().unwrap();
    for i in 0..n {
        t.handshakes.record(200 + rng.next() % 5_000).unwrap();
        t.resumed += u64::from(i % 3 == 0);
    }
    s.errors.tls = seed;
    s
}

#[test]
fn tls_sections_travel_and_merge_exactly() {
    let (sa, sb) = (tls_tallies(1, 300), tls_tallies(2, 120));
    let travel = |s: &ThreadStats| -> LoadReport {
        let text = serde_json::to_string(&ReportWire::encode(&report(s, false)).unwrap()).unwrap();
        serde_json::from_str::<ReportWire>(&text)
            .unwrap()
            .decode()
            .unwrap()
    };
    let (a, b) = (travel(&sa), travel(&sb));
    assert_eq!(
        a.tls_histogram.as_ref(),
        sa.tls.as_ref().map(|t| &t.handshakes)
    );
    let m = merge(&[a.clone(), b.clone()]);
    let tm = m.tls.as_ref().unwrap();
    assert_eq!(tm.handshakes, 420);
    assert_eq!(tm.resumed, 100 + 40);
    assert_eq!(m.errors.tls, 3);
    assert!(m.errors.to_string().ends_with(", tls 3"), "{}", m.errors);
    let mut union = sa.tls.as_ref().unwrap().handshakes.clone();
    union.add(&sb.tls.as_ref().unwrap().handshakes).unwrap();
    assert_eq!(m.tls_histogram.as_ref(), Some(&union));
    assert_eq!(tm.handshake_mean_ms, Some(union.mean() / 1000.0));
    assert_eq!(
        tm.handshake_p99_ms,
        Some(union.value_at_quantile(0.99) as f64 / 1000.0)
    );
    let ids = m.measurements();
    assert_eq!(ids["load.tls.handshakes"], 420.0);
    assert_eq!(ids["load.errors.tls"], 3.0);

    // A histogram that does not match its count is refused.
    let mut w = ReportWire::encode(&report(&sa, false)).unwrap();
    w.report.tls.as_mut().unwrap().handshakes += 1;
    assert!(w
        .decode()
        .unwrap_err()
        .to_string()
        .contains("holds 300 handshakes"));
    // http:// parts have no TLS section, and their merge has none either.
    let plain = report(&tallies(4, 100, false).0, false);
    let mp = merge(&[plain.clone(), plain]);
    assert!(mp.tls.is_none() && mp.tls_histogram.is_none());
    assert!(!mp.measurements().contains_key("load.tls.handshake.mean"));
}

#[test]
fn reports_written_before_tls_read_back() {
    let r = report(&tallies(5, 100, false).0, false);
    let mut v = serde_json::to_value(&r).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.remove("tls");
    obj["errors"].as_object_mut().unwrap().remove("tls");
    let back: LoadReport = serde_json::from_value(v).unwrap();
    assert!(back.tls.is_none());
    assert_eq!(back.errors.tls, 0);
}
