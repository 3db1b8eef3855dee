//! Simulation checks that the paired statistics keep their promises: A/A pairs rarely claim a
//! change, the repeated looks of `--until-conclusive` keep the run's false-alarm rate (and a
//! fresh 95% test at each look does not), the noise floor's change is found about as often as
//! its power says, and the covariate adjustment narrows without biasing. Seeds are fixed, so
//! the figures printed are the same on every run.

use crate::test_support::Rng;
use crate::{
    adjust, compare_paired, detectable_change_pct, log_ratio_spread, look_confidence, Change,
};

const TRIALS: usize = 4000;
/// Three Monte Carlo standard errors of a 5% rate over [`TRIALS`]: 3·√(0.05·0.95/4000).
const MC_SLACK: f64 = 0.0104;

#[derive(Clone, Copy, Debug)]
enum Shape {
    Normal,
    /// Student t with 3 degrees of freedom: heavy tails, infinite kurtosis.
    T3,
}

fn draw(rng: &mut Rng, shape: Shape) -> f64 {
    match shape {
        Shape::Normal => rng.normal(),
        Shape::T3 => {
            let chi2: f64 = (0..3).map(|_| rng.normal().powi(2)).sum();
            rng.normal() / (chi2 / 3.0).sqrt()
        }
    }
}

/// One run of n interleaved rounds: each round's machine speed drifts (shared by both sides),
/// each iteration adds its own noise of `sd` in log terms, the candidate is `shift` (log)
/// faster.
fn rounds(rng: &mut Rng, n: usize, sd: f64, shift: f64, shape: Shape) -> (Vec<f64>, Vec<f64>) {
    let mut base = Vec::with_capacity(n);
    let mut cand = Vec::with_capacity(n);
    for _ in 0..n {
        let round = 1000.0 * (0.1 * rng.normal()).exp();
        base.push(round * (sd * draw(rng, shape)).exp());
        cand.push(round * (shift + sd * draw(rng, shape)).exp());
    }
    (base, cand)
}

fn excludes_zero(c: &Change) -> bool {
    c.ci_low_pct > 0.0 || c.ci_high_pct < 0.0
}

#[test]
fn aa_pairs_rarely_exclude_zero() {
    let mut seed = 100;
    for shape in [Shape::Normal, Shape::T3] {
        for n in [6, 10, 20] {
            seed += 1;
            let mut rng = Rng::new(seed);
            let mut claims = 0;
            let mut small_p = 0;
            for _ in 0..TRIALS {
                let (b, c) = rounds(&mut rng, n, 0.02, 0.0, shape);
                let change = compare_paired(&b, &c, 0.95).unwrap();
                claims += excludes_zero(&change) as usize;
                small_p += (change.p_value <= 0.05) as usize;
            }
            let rate = claims as f64 / TRIALS as f64;
            let p_rate = small_p as f64 / TRIALS as f64;
            println!("A/A paired {shape:?} n={n}: CI excludes 0 in {rate:.4}, p<=0.05 in {p_rate:.4} ({TRIALS} trials)");
            assert!(rate <= 0.05 + MC_SLACK, "{shape:?} n={n}: {rate}");
            assert!(p_rate <= 0.05 + MC_SLACK, "{shape:?} n={n}: {p_rate}");
        }
    }
}

/// Fractions of A/A runs of up to 20 pairs, looked at after every pair from the 5th, in which
/// some look's interval excludes zero: at each look's spending confidence, and at a fresh 95%.
fn sequential_false_alarms(seed: u64, spending: &[f64]) -> (f64, f64) {
    let mut rng = Rng::new(seed);
    let (mut with_spending, mut fresh) = (0, 0);
    let alarm = |b: &[f64], c: &[f64], confidence: &dyn Fn(usize) -> f64| {
        (5..=20).any(|n| excludes_zero(&compare_paired(&b[..n], &c[..n], confidence(n)).unwrap()))
    };
    for _ in 0..TRIALS {
        let (b, c) = rounds(&mut rng, 20, 0.02, 0.0, Shape::Normal);
        with_spending += alarm(&b, &c, &|n| spending[n - 5]) as usize;
        fresh += alarm(&b, &c, &|_| 0.95) as usize;
    }
    (
        with_spending as f64 / TRIALS as f64,
        fresh as f64 / TRIALS as f64,
    )
}

#[test]
fn repeated_looks_keep_the_false_alarm_rate_only_with_spending() {
    let looks: Vec<usize> = (5..=20).collect();
    let spending: Vec<f64> = (1..=looks.len())
        .map(|i| look_confidence(&looks[..i], 20, 0.95))
        .collect();
    let (with_spending, naive) = sequential_false_alarms(7, &spending);
    println!(
        "A/A paired, looks at n=5..20 of 20: any look excludes 0 in {with_spending:.4} with alpha \
         spending (last look at {:.4}), {naive:.4} with a fresh 95% at each look ({TRIALS} trials)",
        spending[spending.len() - 1]
    );
    assert!(with_spending <= 0.05 + MC_SLACK, "{with_spending}");
    assert!(
        naive > 0.10,
        "a fresh 95% at each look should inflate the rate: {naive}"
    );
}

/// Fraction of runs of n pairs whose interval excludes zero upwards when the true change is
/// `change_pct`.
fn detection_rate(seed: u64, n: usize, sd: f64, change_pct: f64, shape: Shape) -> f64 {
    let mut rng = Rng::new(seed);
    let shift = (change_pct / 100.0).ln_1p();
    let mut found = 0;
    for _ in 0..TRIALS {
        let (b, c) = rounds(&mut rng, n, sd, shift, shape);
        found += (compare_paired(&b, &c, 0.95).unwrap().ci_low_pct > 0.0) as usize;
    }
    found as f64 / TRIALS as f64
}

#[test]
fn the_noise_floor_is_found_as_often_as_promised() {
    let mut seed = 300;
    let mut off = Vec::new();
    for shape in [Shape::Normal, Shape::T3] {
        // The spread as a long pilot run would measure it, then the floor it implies.
        seed += 1;
        let mut rng = Rng::new(seed);
        let (b, c) = rounds(&mut rng, 1500, 0.01, 0.0, shape);
        let spread = log_ratio_spread(&b, &c).unwrap();
        for n in [6, 10, 20] {
            seed += 1;
            let floor = detectable_change_pct(spread, n, 0.95, 0.8);
            let rate = detection_rate(seed, n, 0.01, floor, shape);
            println!(
                "power {shape:?}: spread {spread:.5}, n={n}: floor {floor:.3}% found in {rate:.4} ({TRIALS} trials)"
            );
            if (rate - 0.8).abs() > 0.05 {
                off.push((shape, n, rate));
            }
        }
    }
    assert!(off.is_empty(), "detection rate off 80%: {off:?}");
}

/// What the covariate adjustment did over `trials` runs of n rounds, half A/A and half with a
/// true 1% change: mean variance reduction, share of runs with a narrower interval, A/A rates
/// of an interval excluding zero (raw, adjusted) and mean estimates of the 1% (raw, adjusted).
struct CupedFigures {
    reduction: f64,
    narrower: f64,
    aa_raw: f64,
    aa_adjusted: f64,
    change_raw: f64,
    change_adjusted: f64,
}

/// Each round's log ratio moves with the interference difference x between the sides (half of
/// its variance); the candidate is 1% faster in every other run.
fn cuped_figures(seed: u64, n: usize, trials: usize) -> CupedFigures {
    let mut rng = Rng::new(seed);
    let ones = vec![1.0; n];
    let exp = |v: &[f64]| v.iter().map(|r| r.exp()).collect::<Vec<_>>();
    let mut f = CupedFigures {
        reduction: 0.0,
        narrower: 0.0,
        aa_raw: 0.0,
        aa_adjusted: 0.0,
        change_raw: 0.0,
        change_adjusted: 0.0,
    };
    for trial in 0..trials {
        let shift = if trial % 2 == 0 { 0.0 } else { 0.01f64.ln_1p() };
        let x: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let d: Vec<f64> = x
            .iter()
            .map(|xi| shift + 0.01 * xi + 0.01 * rng.normal())
            .collect();
        let a = adjust(&d, &x).unwrap();
        let raw = compare_paired(&ones, &exp(&d), 0.95).unwrap();
        let adj = compare_paired(&ones, &exp(&a.adjusted), 0.95).unwrap();
        f.reduction += a.variance_reduction;
        f.narrower +=
            (adj.ci_high_pct - adj.ci_low_pct < raw.ci_high_pct - raw.ci_low_pct) as u8 as f64;
        if shift == 0.0 {
            f.aa_raw += excludes_zero(&raw) as u8 as f64;
            f.aa_adjusted += excludes_zero(&adj) as u8 as f64;
        } else {
            f.change_raw += raw.change_pct;
            f.change_adjusted += adj.change_pct;
        }
    }
    let (all, half) = (trials as f64, (trials / 2) as f64);
    f.reduction /= all;
    f.narrower /= all;
    f.aa_raw /= half;
    f.aa_adjusted /= half;
    f.change_raw /= half;
    f.change_adjusted /= half;
    f
}

#[test]
fn covariate_adjustment_narrows_without_bias() {
    let trials = 2 * TRIALS;
    let mut reductions = Vec::new();
    for (seed, n) in [(400, 10), (401, 20)] {
        let f = cuped_figures(seed, n, trials);
        println!(
            "CUPED n={n}: variance reduction {:.3} (population 0.5), narrower in {:.3} ({trials} \
             trials); A/A excludes 0: raw {:.4}, adjusted {:.4}; 1% change estimated as {:.3}% \
             raw, {:.3}% adjusted ({TRIALS} trials each)",
            f.reduction, f.narrower, f.aa_raw, f.aa_adjusted, f.change_raw, f.change_adjusted
        );
        assert!(
            f.reduction > 0.25 && f.reduction < 0.5,
            "n={n}: {}",
            f.reduction
        );
        assert!(f.narrower > 0.75, "n={n}: {}", f.narrower);
        assert!(f.aa_adjusted <= 0.05 + MC_SLACK, "n={n}: {}", f.aa_adjusted);
        assert!(
            (f.change_adjusted - 1.0).abs() < 0.03,
            "n={n}: {}",
            f.change_adjusted
        );
        reductions.push(f.reduction);
    }
    // Out of sample the reduction approaches the population's 0.5 as n grows.
    assert!(reductions[1] > reductions[0], "{reductions:?}");
}
