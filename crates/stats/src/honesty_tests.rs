//! Simulation checks that the verdicts keep their promises (A/A honesty):
//! same-distribution comparisons rarely claim a change, real changes are found, and
//! the 95% intervals cover the truth about 95% of the time.

use crate::test_support::Rng;
use crate::{compare, median_ci, verdict, Direction, Verdict};

const TRIALS: usize = 4000;

#[derive(Clone, Copy, Debug)]
enum Noise {
    /// level * exp(sigma * Z)
    LogNormal(f64),
    /// level * (1 + sigma * Z)
    Normal(f64),
}

fn sample(rng: &mut Rng, n: usize, level: f64, noise: Noise) -> Vec<f64> {
    (0..n)
        .map(|_| match noise {
            Noise::LogNormal(s) => level * (s * rng.normal()).exp(),
            Noise::Normal(s) => level * (1.0 + s * rng.normal()),
        })
        .collect()
}

/// Fractions of A/A trials with a Regression/Improvement verdict at threshold 0 and
/// at 2%, and with p < 0.05.
fn aa_rates(seed: u64, n: usize, noise: Noise) -> (f64, f64, f64) {
    let mut rng = Rng::new(seed);
    let (mut claims0, mut claims2, mut significant) = (0, 0, 0);
    let claim = |c: &crate::Change, t: f64| {
        matches!(
            verdict(c, Direction::HigherIsBetter, t),
            Verdict::Regression | Verdict::Improvement
        ) as usize
    };
    for _ in 0..TRIALS {
        let a = sample(&mut rng, n, 1000.0, noise);
        let b = sample(&mut rng, n, 1000.0, noise);
        let c = compare(&a, &b, 0.95).unwrap();
        claims0 += claim(&c, 0.0);
        claims2 += claim(&c, 2.0);
        significant += (c.p_value < 0.05) as usize;
    }
    let rate = |k: usize| k as f64 / TRIALS as f64;
    (rate(claims0), rate(claims2), rate(significant))
}

#[test]
fn aa_comparisons_rarely_claim_a_change() {
    let mut seed = 1;
    for n in [5, 10] {
        for noise in [
            Noise::LogNormal(0.01),
            Noise::LogNormal(0.05),
            Noise::Normal(0.01),
            Noise::Normal(0.05),
        ] {
            seed += 1;
            let (claims0, claims2, p_rate) = aa_rates(seed, n, noise);
            eprintln!("A/A n={n} {noise:?}: claims {claims0} (threshold 0), {claims2} (2%), p<0.05 {p_rate}");
            // Threshold 0: a claim whenever the CI excludes 0, so the nominal 5% applies
            // (the exact interval is conservative: 3.2% at n = 5, 4.3% at n = 10).
            assert!(
                claims0 <= 0.06,
                "n={n} {noise:?}: {claims0} claims at threshold 0"
            );
            assert!(p_rate <= 0.06, "n={n} {noise:?}: p<0.05 in {p_rate}");
            // Default 2% threshold: far rarer still.
            assert!(
                claims2 <= 0.01,
                "n={n} {noise:?}: {claims2} claims at threshold 2%"
            );
        }
    }
}

#[test]
fn five_percent_shift_is_found() {
    let mut rng = Rng::new(99);
    let (mut faster, mut slower_latency, mut slower_rps) = (0, 0, 0);
    for _ in 0..TRIALS / 4 {
        let base = sample(&mut rng, 10, 1000.0, Noise::LogNormal(0.01));
        let up = sample(&mut rng, 10, 1050.0, Noise::LogNormal(0.01));
        let down = sample(&mut rng, 10, 950.0, Noise::Normal(0.01));
        let c = compare(&base, &up, 0.95).unwrap();
        faster += (verdict(&c, Direction::HigherIsBetter, 2.0) == Verdict::Improvement) as usize;
        slower_latency +=
            (verdict(&c, Direction::LowerIsBetter, 2.0) == Verdict::Regression) as usize;
        let c = compare(&base, &down, 0.95).unwrap();
        slower_rps += (verdict(&c, Direction::HigherIsBetter, 2.0) == Verdict::Regression) as usize;
    }
    eprintln!(
        "5% shift found: {faster} {slower_latency} {slower_rps} of {}",
        TRIALS / 4
    );
    let need = (TRIALS / 4) * 9 / 10;
    assert!(faster >= need, "{faster}");
    assert!(slower_latency >= need, "{slower_latency}");
    assert!(slower_rps >= need, "{slower_rps}");
}

#[test]
fn identical_samples_are_no_change() {
    let mut rng = Rng::new(5);
    for n in [4, 5, 10, 30] {
        let a = sample(&mut rng, n, 500.0, Noise::LogNormal(0.001));
        let c = compare(&a, &a, 0.95).unwrap();
        assert_eq!(c.change_pct, 0.0);
        assert_eq!(
            verdict(&c, Direction::LowerIsBetter, 2.0),
            Verdict::NoChange
        );
        // tiny noise, independent draws
        let b = sample(&mut rng, n, 500.0, Noise::LogNormal(0.001));
        let c = compare(&a, &b, 0.95).unwrap();
        assert_eq!(
            verdict(&c, Direction::HigherIsBetter, 2.0),
            Verdict::NoChange
        );
    }
    // Too few iterations: never a verdict, however clean the data.
    let c = compare(&[100.0, 100.0, 100.0], &[100.0, 100.0, 100.0], 0.95).unwrap();
    assert_eq!(
        verdict(&c, Direction::HigherIsBetter, 2.0),
        Verdict::Inconclusive
    );
}

#[test]
fn ratio_ci_covers_the_truth() {
    for (n, noise, seed) in [
        (5, Noise::LogNormal(0.03), 11),
        (10, Noise::LogNormal(0.03), 12),
        (10, Noise::LogNormal(0.20), 13),
    ] {
        let mut rng = Rng::new(seed);
        let true_pct = 3.0;
        let mut covered = 0;
        for _ in 0..TRIALS {
            let a = sample(&mut rng, n, 1000.0, noise);
            let b = sample(&mut rng, n, 1030.0, noise);
            let c = compare(&a, &b, 0.95).unwrap();
            covered += (c.ci_low_pct <= true_pct && true_pct <= c.ci_high_pct) as usize;
        }
        let rate = covered as f64 / TRIALS as f64;
        eprintln!("ratio CI coverage n={n} {noise:?}: {rate}");
        // exact coverage of the interval: 1 - 2*4/252 = 0.968 (n=5), 1 - 2*0.02163 = 0.957 (n=10)
        assert!(
            (0.94..=0.985).contains(&rate),
            "n={n} {noise:?}: coverage {rate}"
        );
    }
}

#[test]
fn median_ci_covers_the_truth() {
    let mut rng = Rng::new(21);
    let mut covered = 0;
    for _ in 0..TRIALS {
        // skewed: the median of 1000 * exp(0.3 Z) is exactly 1000
        let a = sample(&mut rng, 10, 1000.0, Noise::LogNormal(0.3));
        let (lo, hi) = median_ci(&a, 0.95).unwrap();
        covered += (lo <= 1000.0 && 1000.0 <= hi) as usize;
    }
    let rate = covered as f64 / TRIALS as f64;
    eprintln!("median CI coverage n=10: {rate}");
    // exact: 1 - 2 * binom.cdf(1, 10, 0.5) = 0.9785
    assert!((0.965..=0.99).contains(&rate), "coverage {rate}");
}
