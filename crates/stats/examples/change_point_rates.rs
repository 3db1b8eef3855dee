//! How often `e_divisive` cries wolf and how often it finds a real step, on synthetic series of
//! 60 run medians: flat series at 1%, 2% and 5% noise (any change point is a false alarm), and
//! steps of 2%, 5% and 10% at index 30 under the same noise (a hit is a change point within ±2
//! of 30). Each rate comes with its count and a 95% Wilson interval.
//!
//! Then how long one call takes on 60, 250 and 1,000 runs.
//!
//! `cargo run -p rigor-stats --release --example change_point_rates [-- TRIALS [SEED]]`
//! (500 series per line and seed 1 by default).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rigor_stats::{e_divisive, ChangePoint, ChangePointOptions};

const LEN: usize = 60;
const STEP_AT: usize = 30;

/// Standard normal by Box–Muller (rand alone has no normal distribution).
fn normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// 60 points around 1000 with relative noise `cv`, times `1 + step` from index 30 on.
fn series(rng: &mut StdRng, cv: f64, step: f64) -> Vec<f64> {
    (0..LEN)
        .map(|i| {
            let level = if i >= STEP_AT {
                1000.0 * (1.0 + step)
            } else {
                1000.0
            };
            level * (1.0 + cv * normal(rng))
        })
        .collect()
}

/// 95% Wilson score interval of `k` successes in `n`, in %.
fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n, z) = (k as f64, n as f64, 1.959_963_984_540_054);
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    (
        100.0 * (centre - half).max(0.0),
        100.0 * (centre + half).min(1.0),
    )
}

/// One line of the table: `trials` series, the count `counted` accepts, and how many had more
/// than one change point.
fn line(
    label: &str,
    cv: f64,
    step: f64,
    trials: usize,
    seed: u64,
    counted: fn(&[ChangePoint]) -> bool,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    let opts = ChangePointOptions::default();
    let (mut k, mut several) = (0, 0);
    for t in 0..trials {
        let found = e_divisive(
            &series(&mut rng, cv, step),
            &ChangePointOptions {
                seed: seed ^ t as u64,
                ..opts
            },
        );
        k += counted(&found) as usize;
        several += (found.len() > 1) as usize;
    }
    let (lo, hi) = wilson(k, trials);
    println!(
        "| {label:<12} | {:>4.0}% | {:>5} | {k:>4} / {trials:<4} | {:>5.1}% | {lo:>4.1}–{hi:<5.1}% | {several:>4} |",
        cv * 100.0,
        if step == 0.0 { "-".to_string() } else { format!("{:.0}%", step * 100.0) },
        100.0 * k as f64 / trials as f64,
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let trials: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let opts = ChangePointOptions::default();
    println!(
        "E-divisive on {LEN}-point series: alpha {}, {} permutations, segments ≥ {}; {trials} series a line, seed {seed}",
        opts.alpha, opts.permutations, opts.min_segment
    );
    println!();
    println!("| what         | noise |  step | count       |  rate  | 95% interval | >1 point |");
    println!("|--------------|-------|-------|-------------|--------|--------------|----------|");
    let mut s = seed * 1000;
    for cv in [0.01, 0.02, 0.05] {
        s += 1;
        line("false alarm", cv, 0.0, trials, s, |found| !found.is_empty());
    }
    for cv in [0.01, 0.02, 0.05] {
        for step in [0.02, 0.05, 0.10] {
            s += 1;
            line("detection", cv, step, trials, s, |found| {
                found.iter().any(|c| c.index.abs_diff(STEP_AT) <= 2)
            });
        }
    }
    println!();
    println!("false alarm: a flat series with any change point; detection: a change point within ±2 of {STEP_AT}");
    println!();
    for len in [60, 250, 1000] {
        timing(len, seed);
    }
}

/// How long `e_divisive` takes on a `len`-run series with a 5% step in the middle (noise 1%).
fn timing(len: usize, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let xs: Vec<f64> = (0..len)
        .map(|i| {
            let level = if i >= len / 2 { 1050.0 } else { 1000.0 };
            level * (1.0 + 0.01 * normal(&mut rng))
        })
        .collect();
    let started = std::time::Instant::now();
    let found = e_divisive(&xs, &ChangePointOptions::default());
    println!(
        "time: {len} runs with one 5% step: {:.1} ms, {} change point(s) at {:?}",
        started.elapsed().as_secs_f64() * 1000.0,
        found.len(),
        found.iter().map(|c| c.index).collect::<Vec<_>>()
    );
}
