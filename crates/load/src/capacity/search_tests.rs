//! The search against fake services whose capacity is known: monotone, noisy, never met,
//! always met up to the maximum, and stopped part way.

use super::*;

/// A service that holds `capacity` rps: below it p99 is 5 ms, above it the queue grows.
fn window(rate: f64, capacity: f64) -> Window {
    let p99 = if rate <= capacity {
        5.0
    } else {
        5.0 + 1000.0 * (rate / capacity - 1.0)
    };
    Window {
        p50_ms: p99 / 5.0,
        p90_ms: p99 / 2.0,
        p99_ms: p99,
        p999_ms: p99,
        max_ms: p99,
        answered: 1000,
        errors: 0,
        due: 1000,
        achieved_rps: rate.min(capacity),
    }
}

fn objective() -> Objective {
    "p99<20ms".parse().unwrap()
}

fn settings(start: f64, max: f64) -> SearchSettings {
    SearchSettings {
        start,
        max,
        precision: 0.05,
        confirm: CONFIRM,
        max_probes: MAX_PROBES,
        min_rate: start / 1024.0,
    }
}

fn run(s: &SearchSettings, mut fake: impl FnMut(f64) -> Window) -> Capacity {
    search::<()>(&objective(), s, 3.0, 1.0, |r| Ok(fake(r)), |_| {}).unwrap()
}

/// The answer's interval holds the true capacity, is within the precision, and each end has
/// the probes it needed.
fn assert_settled(c: &Capacity, truth: f64) {
    assert_eq!(c.outcome, Outcome::Settled, "{c:#?}");
    let (low, high) = (c.low.unwrap(), c.high.unwrap());
    assert!(low <= truth && truth < high, "{low}..{high} misses {truth}");
    assert!(high - low <= 0.05 * low, "{low}..{high} is wider than 5%");
    assert_eq!(c.capacity_rps, Some(low));
    for end in [low, high] {
        let n = c.probes.iter().filter(|p| p.rate == end).count();
        assert!(n >= CONFIRM, "{end} probed {n} times");
    }
}

#[test]
fn a_monotone_service_is_bracketed_by_doubling_then_bisected() {
    let c = run(&settings(100.0, 100_000.0), |r| window(r, 730.0));
    assert_settled(&c, 730.0);
    let first: Vec<f64> = c.probes.iter().take(5).map(|p| p.rate).collect();
    assert_eq!(first, [100.0, 200.0, 400.0, 800.0, 600.0]);
    assert!(c.probes.len() <= 14, "{} probes", c.probes.len());
}

#[test]
fn a_start_above_capacity_halves_down_first() {
    let c = run(&settings(5000.0, 100_000.0), |r| window(r, 730.0));
    assert_settled(&c, 730.0);
    assert_eq!(c.probes[1].rate, 2500.0);
}

#[test]
fn a_noisy_service_is_settled_by_repeating_the_boundary() {
    // 200 searches of one service whose every probe's verdict is flipped one time in ten
    // (a stall in a fast window, a quiet spell in an overloaded one).
    let truth = 730.0;
    let mut close = 0;
    for search_seed in 0..200u64 {
        let mut seed = search_seed;
        let c = run(&settings(100.0, 100_000.0), |r| {
            let honest = window(r, truth);
            match splitmix(&mut seed) % 10 {
                0 if honest.p99_ms < 20.0 => window(r, r / 2.0),
                0 => window(r, r * 2.0),
                _ => honest,
            }
        });
        assert!(c.probes.len() <= MAX_PROBES);
        let low = c.capacity_rps.unwrap_or(0.0);
        if (truth * 0.9..=truth * 1.05).contains(&low) {
            close += 1;
        }
    }
    assert!(
        close >= 170,
        "only {close} of 200 noisy searches within -10%..+5%"
    );
}

#[test]
fn a_fluke_miss_below_a_met_rate_is_measured_again_before_it_is_believed() {
    let mut first_at_400 = true;
    let c = run(&settings(100.0, 100_000.0), |r| {
        if r == 400.0 && first_at_400 {
            first_at_400 = false;
            return window(r, 100.0);
        }
        window(r, 730.0)
    });
    assert_settled(&c, 730.0);
    let at_400 = c.probes.iter().filter(|p| p.rate == 400.0).count();
    assert_eq!(at_400, 3, "the split verdict is settled by a third probe");
}

#[test]
fn an_objective_never_met_ends_below_the_lowest_rate() {
    let c = run(&settings(100.0, 100_000.0), |r| window(r, 0.01));
    assert_eq!(c.outcome, Outcome::NeverMet);
    assert_eq!(c.capacity_rps, None);
    assert!(c.probes.iter().all(|p| !p.met));
    let lowest = c.probes.iter().map(|p| p.rate).fold(f64::MAX, f64::min);
    assert!(lowest < 0.2, "{lowest}");
    assert_eq!(c.high, Some(lowest));
}

#[test]
fn halving_stops_where_rounding_cannot_go_lower() {
    // From a start of 1 rps, halving reaches 0.01 rps, whose half rounds back to 0.01: the
    // search must end there, not probe 0.01 again until it runs out of probes.
    let c = run(&settings(1.0, 100_000.0), |r| window(r, 1e-6));
    assert_eq!(c.outcome, Outcome::NeverMet, "{:?}", c.probes.len());
    assert!(c.probes.len() < 15, "{} probes", c.probes.len());
}

#[test]
fn halving_stops_at_the_rate_whose_probe_is_due_a_few_requests() {
    // 3 s probes: 10 requests need 3.34 rps; the search probes that rate itself and none lower.
    let f = FindRate::new("p99<20ms".parse().unwrap());
    assert_eq!(f.probe_duration(), MIN_PROBE);
    assert_eq!(f.min_rate(), 3.34);
    let c = run(&f.settings(), |r| window(r, 1e-6));
    assert_eq!(c.outcome, Outcome::NeverMet);
    let rates: Vec<f64> = c.probes.iter().map(|p| p.rate).collect();
    assert_eq!(
        rates,
        [100.0, 50.0, 25.0, 12.5, 6.25, 3.34, 3.34],
        "{rates:?}"
    );
    assert!(rates
        .iter()
        .all(|r| r * MIN_PROBE.as_secs_f64() >= MIN_PROBE_REQUESTS));
    assert_eq!(c.high, Some(3.34));
}

#[test]
fn a_start_too_low_for_a_few_requests_per_probe_is_refused() {
    let mut f = FindRate::new("p99<20ms".parse().unwrap());
    f.start = 0.05;
    let e = f.check().unwrap_err().to_string();
    assert_eq!(
        e,
        "start 0.05 rps sends fewer than 10 requests in a probe of 3s: start at 3.34 rps or \
         more, or lengthen the probe"
    );
    f.probe = Some(Duration::from_secs(200));
    assert!(f.check().is_ok(), "0.05 rps over 200 s is due 10 requests");
    assert_eq!(f.min_rate(), 0.05);
}

#[test]
fn an_objective_met_up_to_max_says_at_least_max() {
    let c = run(&settings(100.0, 1000.0), |r| window(r, 1e9));
    assert_eq!(c.outcome, Outcome::AtLeastMax);
    assert_eq!(c.capacity_rps, Some(1000.0));
    assert_eq!(c.high, None);
    let rates: Vec<f64> = c.probes.iter().map(|p| p.rate).collect();
    assert_eq!(rates, [100.0, 200.0, 400.0, 800.0, 1000.0, 1000.0]);
}

#[test]
fn errors_count_against_the_objective() {
    let o: Objective = "errors<1%".parse().unwrap();
    let c = search::<()>(
        &o,
        &settings(100.0, 10_000.0),
        3.0,
        1.0,
        |r| {
            let mut w = window(r, 1e9);
            w.errors = if r > 1500.0 { 50 } else { 0 };
            Ok(w)
        },
        |_| {},
    )
    .unwrap();
    assert_settled(&c, 1500.0);
}

#[test]
fn a_failed_probe_returns_the_probes_so_far() {
    let mut n = 0;
    let stopped = search(
        &objective(),
        &settings(100.0, 100_000.0),
        3.0,
        1.0,
        |r| {
            n += 1;
            if n == 4 {
                Err("interrupted")
            } else {
                Ok(window(r, 730.0))
            }
        },
        |_| {},
    )
    .unwrap_err();
    assert_eq!(stopped.cause, "interrupted");
    assert_eq!(stopped.so_far.probes.len(), 3);
    assert_eq!(stopped.so_far.outcome, Outcome::Unsettled);
    assert_eq!(stopped.so_far.capacity_rps, Some(400.0));
}

#[test]
fn a_tiny_precision_or_huge_limit_gives_the_longest_probe_not_a_panic() {
    let mut f = FindRate::new("p99<50ms".parse().unwrap());
    f.precision = 1e-300;
    assert_eq!(f.probe_duration(), MAX_AUTO_PROBE);
    f.precision = 0.05;
    f.objective = "p99<99999999999999999999999s".parse().unwrap();
    assert_eq!(f.probe_duration(), MAX_AUTO_PROBE);
}

#[test]
fn settings_are_checked_and_the_probe_rule_holds() {
    let mut f = FindRate::new("p99<50ms".parse().unwrap());
    assert_eq!(
        f.probe_duration(),
        MIN_PROBE,
        "2·50ms/5% = 2s, raised to 3s"
    );
    f.objective = "p99<500ms".parse().unwrap();
    assert_eq!(f.probe_duration(), Duration::from_secs(20));
    f.start = 1000.0;
    f.max = 500.0;
    let e = f.check().unwrap_err().to_string();
    assert!(
        e.contains("max 500 rps is below the start rate 1000 rps"),
        "{e}"
    );
    f.max = 5000.0;
    f.precision = 0.0;
    assert!(f.check().unwrap_err().to_string().contains("precision 0"));
    f.precision = 0.05;
    f.probe = Some(Duration::from_millis(10));
    assert!(f
        .check()
        .unwrap_err()
        .to_string()
        .contains("at least 100ms"));
    f.probe = None;
    assert!(f.check().is_ok());
}
/// splitmix64: a well-mixed deterministic sequence for the fake's flukes.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
