//! The time series a result keeps for each iteration: one point per application sample on the
//! spawn clock, with the window inside the samples and the app.* figures its extremes; the load's
//! seconds adding up to the window's totals, their latency above the testbed's own fixed delay
//! and consistent with the full-window histogram; a command's series spanning its whole life.

use crate::common;

use common::marks::{self, MARK};
use common::*;
use serde_json::Value;
use std::time::Duration;

/// The testbed's fixed delay per response: a floor no latency can be under.
const DELAY_MS: f64 = 5.0;
const INTERVAL_MS: f64 = 100.0;

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("not a number: {x}")))
        .collect()
}

fn optionals(v: &Value) -> Vec<Option<f64>> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(Value::as_f64)
        .collect()
}

fn max(xs: impl IntoIterator<Item = f64>) -> f64 {
    xs.into_iter().fold(f64::NEG_INFINITY, f64::max)
}

/// Checks what holds of any application series: aligned arrays, a rising clock, at most one
/// point per scheduled sample plus the marks' own, and none missing beyond what a stall skips.
/// Periodic samples are due an interval apart but each may be taken late: a late first one
/// shortens the span by up to an interval, hence one more than the span holds.
fn check_samples(s: &Value, marks: usize) -> Vec<f64> {
    let t = numbers(&s["t_ms"]);
    assert!(t.len() >= 3, "{s}");
    for field in ["cpu", "rss", "threads"] {
        assert_eq!(s[field].as_array().unwrap().len(), t.len(), "{field}: {s}");
    }
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    assert!(t[0] >= 0.0, "{t:?}");
    let span = t[t.len() - 1] - t[0];
    let scheduled = (span / INTERVAL_MS).floor() as usize + 1;
    assert!(
        t.len() <= scheduled + 1 + marks,
        "{} points over {span} ms",
        t.len()
    );
    assert!(
        t.len() * 2 >= scheduled,
        "{} points over {span} ms",
        t.len()
    );
    assert!(s.get("thinned_from").is_none(), "{s}");
    t
}

#[test]
fn a_load_run_keeps_its_samples_and_seconds_on_one_clock() {
    let dir = temp_dir("series-load");
    let port = free_port();
    let toml = config(
        port,
        &format!("--delay-us {}", (DELAY_MS * 1e3) as u64),
        "/plaintext",
        "",
    )
    .replace("duration = \"1s\"", "duration = \"3s\"");
    let (out, json) = run_exit(&dir, &toml, &["-i", "1", "--sample-interval", "100ms"], 0);
    let json = json.unwrap_or_else(|| panic!("{out}"));
    let it = &iterations(&json)[0];
    let s = &it["series"];
    // Marks: the window's start, and its end (said by the engine and again before the stop).
    let t = check_samples(s, 3);
    let last = t[t.len() - 1];

    let w = numbers(&s["window"]);
    assert!(
        t[0] <= w[0] && w[0] < w[1] && w[1] <= last,
        "window {w:?} in {t:?}"
    );
    assert!(
        t.contains(&w[0]) && t.contains(&w[1]),
        "{w:?} are samples' times"
    );
    assert!((w[1] - w[0] - 3000.0).abs() < 300.0, "a 3 s window: {w:?}");
    // The window's extremes are the app.* figures (by the same rule, rounded to 0.01).
    let inside: Vec<usize> = (0..t.len())
        .filter(|&i| t[i] >= w[0] && t[i] <= w[1])
        .collect();
    let cpu = optionals(&s["cpu"]);
    let cpu_max = max(inside.iter().skip(1).filter_map(|&i| cpu[i]));
    let app_cpu = m(it, "app.cpu").unwrap();
    assert!(
        (cpu_max - app_cpu).abs() <= 0.006,
        "{cpu_max} vs app.cpu {app_cpu}"
    );
    let rss = numbers(&s["rss"]);
    let rss_max = max(inside.iter().map(|&i| rss[i]));
    assert!(
        (rss_max - m(it, "app.rss").unwrap()).abs() <= 0.006,
        "{rss_max}"
    );
    let threads = numbers(&s["threads"]);
    assert_eq!(
        max(inside.iter().map(|&i| threads[i])),
        m(it, "app.threads.max").unwrap()
    );

    check_load(&s["load"], it, &w);
}

/// The load's seconds: three of them from where the window opened, adding up to the window's
/// totals, their latency above the server's delay and consistent with the whole window's.
fn check_load(l: &Value, it: &Value, window: &[f64]) {
    let t = numbers(&l["t_ms"]);
    let rps = numbers(&l["rps"]);
    let errors = numbers(&l["errors"]);
    let mean = optionals(&l["latency_mean"]);
    let p99 = optionals(&l["latency_p99"]);
    // A 3 s window that ends on time has exactly three seconds, every one full.
    assert_eq!(t.len(), 3, "{l}");
    assert!([&rps, &errors].iter().all(|a| a.len() == 3), "{l}");
    assert!(mean.len() == 3 && p99.len() == 3, "{l}");
    assert!(
        t.windows(2).all(|p| (p[1] - p[0] - 1000.0).abs() <= 0.1),
        "{t:?}"
    );
    // The engine's window opened where the sampler was told it did, give or take the 20 ms
    // the runner takes to notice and the sample taken in answer.
    assert!(
        (t[0] - window[0]).abs() < 100.0,
        "{t:?} vs window {window:?}"
    );
    // The seconds hold every response and error of the window: those answered after it closed
    // count in its last second.
    assert_eq!(
        rps.iter().sum::<f64>(),
        m(it, "load.requests").unwrap(),
        "{l}"
    );
    assert_eq!(
        errors.iter().sum::<f64>(),
        m(it, "load.socket_errors").unwrap()
    );
    let load = &it["load"]["latency"];
    let (all_mean, all_p99, all_max) = (
        load["mean_ms"].as_f64().unwrap(),
        load["p99_ms"].as_f64().unwrap(),
        load["max_ms"].as_f64().unwrap(),
    );
    for i in 0..3 {
        let (mean, p99) = (mean[i].expect("a mean"), p99[i].expect("a p99"));
        assert!(rps[i] > 100.0, "second {i}: {l}");
        assert!(
            (DELAY_MS..DELAY_MS + 30.0).contains(&mean),
            "second {i}: mean {mean}"
        );
        assert!(
            p99 >= mean && p99 <= all_max,
            "second {i}: p99 {p99}, max {all_max}"
        );
    }
    // Weighted by their responses, the seconds' means are the window's (from its histogram,
    // exact to 0.1%).
    let weighted = (0..3).map(|i| rps[i] * mean[i].unwrap()).sum::<f64>() / rps.iter().sum::<f64>();
    assert!(
        (weighted - all_mean).abs() <= all_mean * 0.002 + 0.002,
        "{weighted} vs {all_mean}"
    );
    // The window's p99 lies between the seconds' (theirs read up to 12.5% high).
    let p99s: Vec<f64> = p99.iter().map(|p| p.unwrap()).collect();
    let lowest = p99s.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(lowest <= all_p99 * 1.125 + 0.001, "{p99s:?} vs {all_p99}");
    assert!(
        max(p99s.iter().copied()) >= all_p99 * 0.999 - 0.001,
        "{p99s:?} vs {all_p99}"
    );
}

#[test]
fn a_command_series_spans_its_whole_life() {
    let dir = temp_dir("series-command");
    let token = marks::token("series");
    // Burns CPU for a moment in the shell itself, then sleeps.
    let script = "i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done; sleep 0.3";
    let toml = format!(
        "[jobs.job]\ncommand = {}\nenv = {{ {MARK} = \"{token}\" }}\n\
         [scenarios.s]\ncommand = \"job\"\niterations = 1\n",
        toml_string(&format!("sh -c '{script}'"))
    );
    let (out, json) = run_exit(&dir, &toml, &["--sample-interval", "100ms"], 0);
    let json = json.unwrap_or_else(|| panic!("{out}"));
    let it = &iterations(&json)[0];
    let s = &it["series"];
    // Marks: the start (the end comes after the exit: nothing left to sample).
    let t = check_samples(s, 2);
    let elapsed = m(it, "app.elapsed").unwrap();
    let w = numbers(&s["window"]);
    assert_eq!(w[0], 0.0, "{s}");
    assert!(
        (w[1] - elapsed).abs() <= 0.05,
        "window {w:?}, app.elapsed {elapsed}"
    );
    assert!(
        t[t.len() - 1] <= w[1],
        "samples {t:?} within the life {w:?}"
    );
    let cpu = optionals(&s["cpu"]);
    assert_eq!(cpu[0], None);
    let busiest = max(cpu.iter().flatten().copied());
    assert!(busiest > 10.0 && busiest <= 100.5, "{cpu:?}");
    assert!(numbers(&s["rss"]).iter().all(|&r| r > 0.0), "{s}");
    assert!(numbers(&s["threads"]).iter().all(|&n| n >= 1.0), "{s}");
    assert!(s.get("load").is_none(), "{s}");
    assert!(marks::left_after(&token, Duration::from_secs(3)).is_empty());
}
