//! The text of a capacity search (`--find-rate`, `find_rate`): the banner, one line per probe
//! as it ends, and the answer with its interval above the table of every probe.

use rigor_load::capacity::{Capacity, FindRate, Outcome, ProbeRow};
use rigor_load::LoadSpec;

/// `Finding the rate … holds with p99<50ms` and how each probe runs.
pub fn banner(spec: &LoadSpec, find: &FindRate) -> String {
    format!(
        "Finding the highest rate {} holds with {}\n  from {} to {} req/s, within {}; each probe {} \
         after {} warmup, {} connections\n",
        spec.url,
        find.objective,
        rate(find.start),
        rate(find.max),
        percent(find.precision),
        crate::load_text::fmt_secs(find.probe_duration().as_secs_f64()),
        crate::load_text::fmt_secs(find.probe_warmup(spec).as_secs_f64()),
        spec.connections,
    )
}

/// The table's header, matching [`probe_line`]'s columns.
pub fn header() -> String {
    format!(
        "  {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10}  {}\n",
        "rate", "achieved", "p50", "p99", "max", "errors", "requests", "objective"
    )
}

/// One probe: the rate offered and reached, its latency, its errors, met or missed.
pub fn probe_line(p: &ProbeRow) -> String {
    let w = &p.window;
    format!(
        "  {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10}  {}\n",
        rate(p.rate),
        rate(w.achieved_rps),
        ms(w.p50_ms),
        ms(w.p99_ms),
        ms(w.max_ms),
        percent(p.error_rate),
        w.due,
        if p.met { "met" } else { "missed" }
    )
}

/// The answer, then every probe in rate order (repeats together, in the order made).
pub fn summary(c: &Capacity) -> String {
    let mut o = String::new();
    o.push_str(&answer(c));
    o.push('\n');
    o.push_str(&header());
    let mut rows = c.probes.clone();
    rows.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    for p in &rows {
        o.push_str(&probe_line(p));
    }
    o
}

/// `Capacity: 812 req/s for p99<50ms (met at 812, missed at 850: within 5%; 14 probes)`.
pub fn answer(c: &Capacity) -> String {
    let n = c.probes.len();
    let probes = if n == 1 { "probe" } else { "probes" };
    match (c.outcome, c.low, c.high) {
        (Outcome::Settled, Some(l), Some(h)) => format!(
            "Capacity: {} req/s for {} (met at {}, missed at {}: within {}; {n} {probes})\n",
            rate(l),
            c.objective,
            rate(l),
            rate(h),
            percent((h - l) / l),
        ),
        (Outcome::AtLeastMax, Some(l), _) => format!(
            "Capacity: at least {} req/s for {}: met at the highest rate searched ({n} {probes}); \
             raise the maximum to search higher\n",
            rate(l),
            c.objective
        ),
        (Outcome::NeverMet, _, _) => format!(
            "Capacity: none: no rate met {}; {} ({n} {probes})\n",
            c.objective,
            lowest(c)
        ),
        (_, l, h) => format!(
            "Capacity: not settled for {} after {n} {probes}: {}, {}\n",
            c.objective,
            l.map_or_else(
                || "no rate met yet".into(),
                |l| format!("met up to {} req/s", rate(l))
            ),
            h.map_or_else(
                || "no rate missed yet".into(),
                |h| format!("missed from {} req/s", rate(h))
            ),
        ),
    }
}

/// The lowest rate probed and what its last probe measured: `the lowest probed, 3.34 req/s,
/// missed it with p99 5.20ms (max 6.10ms), 0% errors over 10 requests`.
fn lowest(c: &Capacity) -> String {
    let Some(low) = c.probes.iter().map(|p| p.rate).reduce(f64::min) else {
        return "no rate was probed".into();
    };
    let Some(p) = c.probes.iter().rev().find(|p| p.rate == low) else {
        return "no rate was probed".into();
    };
    let w = &p.window;
    let how = if w.answered == 0 {
        "no request was answered".to_string()
    } else {
        format!(
            "p50 {}, p99 {} (max {})",
            ms(w.p50_ms),
            ms(w.p99_ms),
            ms(w.max_ms)
        )
    };
    format!(
        "the lowest probed, {} req/s, {} it with {how}, {} errors over {} requests",
        rate(low),
        if p.met { "met" } else { "missed" },
        percent(p.error_rate),
        w.due
    )
}

/// Requests per second as the search writes them: whole from 100 up, else two decimals.
pub fn rate(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.2}")
    }
}

fn ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.2}s", v / 1000.0)
    } else {
        format!("{v:.2}ms")
    }
}

fn percent(f: f64) -> String {
    let p = f * 100.0;
    if p == 0.0 || p >= 10.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigor_load::capacity::Window;

    fn row(rate: f64, p99: f64, met: bool) -> ProbeRow {
        ProbeRow {
            rate,
            window: Window {
                p50_ms: 1.0,
                p90_ms: 2.0,
                p99_ms: p99,
                p999_ms: p99,
                max_ms: p99,
                answered: 100,
                errors: 0,
                due: 100,
                achieved_rps: rate,
            },
            error_rate: 0.0,
            met,
        }
    }

    #[test]
    fn the_answer_comes_first_and_probes_in_rate_order() {
        let c = Capacity {
            objective: "p99<50ms".into(),
            capacity_rps: Some(800.0),
            low: Some(800.0),
            high: Some(825.0),
            outcome: Outcome::Settled,
            precision: 0.05,
            probe_secs: 3.0,
            warmup_secs: 1.0,
            probes: vec![
                row(800.0, 10.0, true),
                row(1600.0, 900.0, false),
                row(825.0, 70.0, false),
            ],
        };
        let text = summary(&c);
        assert!(
            text.starts_with("Capacity: 800 req/s for p99<50ms (met at 800, missed at 825: within 3.1%; 3 probes)"),
            "{text}"
        );
        let rates: Vec<&str> = text
            .lines()
            .skip(3)
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(rates, ["800", "825", "1600"]);
        assert!(text.contains("missed"));
    }

    #[test]
    fn no_rate_met_names_the_lowest_probed_and_its_figures() {
        let c = Capacity {
            objective: "p99<1ms".into(),
            capacity_rps: None,
            low: None,
            high: Some(3.34),
            outcome: Outcome::NeverMet,
            precision: 0.05,
            probe_secs: 3.0,
            warmup_secs: 1.0,
            probes: vec![
                row(100.0, 9.0, false),
                row(3.34, 5.2, false),
                row(6.25, 5.0, false),
                row(3.34, 5.1, false),
            ],
        };
        assert_eq!(
            answer(&c),
            "Capacity: none: no rate met p99<1ms; the lowest probed, 3.34 req/s, missed it with \
             p50 1.00ms, p99 5.10ms (max 5.10ms), 0% errors over 100 requests (4 probes)\n"
        );
    }

    #[test]
    fn an_unsettled_search_says_what_it_has_not_seen_yet() {
        let mut c = Capacity {
            objective: "p99<20ms".into(),
            capacity_rps: Some(400.0),
            low: Some(400.0),
            high: None,
            outcome: Outcome::Unsettled,
            precision: 0.05,
            probe_secs: 1.0,
            warmup_secs: 1.0,
            probes: vec![row(200.0, 5.0, true), row(400.0, 9.0, true)],
        };
        assert_eq!(
            answer(&c),
            "Capacity: not settled for p99<20ms after 2 probes: met up to 400 req/s, no rate missed yet\n"
        );
        (c.low, c.high) = (None, Some(100.0));
        assert_eq!(
            answer(&c),
            "Capacity: not settled for p99<20ms after 2 probes: no rate met yet, missed from 100 req/s\n"
        );
    }
}
