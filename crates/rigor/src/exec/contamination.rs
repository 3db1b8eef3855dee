//! Whether an iteration was contaminated: the rest of the machine (a hypervisor's steal, other
//! processes) took far more CPU during it than during the run's other iterations, so its
//! figures measure the neighbours as much as the application.
//!
//! The baseline is the run's own: the median interference of the iterations that measured
//! it so far, across all rows, with how busy the machine was just before the run as its first
//! figure (a machine busy from the start is the run's normal, not a contaminated first slot). An iteration is contaminated when its interference exceeds
//! that median by more than `max(5 points, 3 × 1.4826 × MAD)` — three robust standard
//! deviations, but never less than 5 points so a very steady run does not re-run an iteration
//! for a blip. Before three iterations have measured it, the spread is unknown, so only an
//! iteration above an absolute 15%, and 15 points above whatever baseline there is, counts (a
//! machine whose load is still rising must not spend the re-runs on the first slot).
//!
//! Interference is a share of the machine, so it cannot rise once the machine is fully busy: a
//! run that starts on a loaded machine has a baseline near 100% and no iteration can exceed it.
//! The second figure can: the time the application's and the load client's threads waited in
//! a run queue for a CPU per unit of CPU they got. An iteration is contaminated too when it
//! waited more than [`WAIT_ABSOLUTE`] per CPU second and more than [`WAIT_FACTOR`] times the
//! median of the run's iterations before it; the first iteration has no such baseline (wake-up
//! latency alone makes a server on a busy CPU wait many times its CPU), so it is not judged on it.

use crate::result::{Iteration, MachineDuring};

/// Points above the baseline an iteration may always have.
pub const MIN_EXCESS_POINTS: f64 = 5.0;
/// How many robust standard deviations (1.4826 × MAD) above the baseline are still noise.
pub const SPREAD_FACTOR: f64 = 3.0;
/// Iterations the baseline needs before its spread is trusted.
pub const MIN_HISTORY: usize = 3;
/// Interference that is contamination even before the run has a baseline, in %.
pub const ABSOLUTE_PCT: f64 = 15.0;
/// Points above a baseline of fewer than [`MIN_HISTORY`] iterations, whose spread is unknown.
pub const EARLY_EXCESS_POINTS: f64 = 15.0;

/// Seconds waited for a CPU per CPU second that are contamination whatever the baseline: the
/// threads got at most a quarter of the CPU they asked for.
pub const WAIT_ABSOLUTE: f64 = 3.0;
/// How many times the run's median wait per CPU second an iteration may have.
pub const WAIT_FACTOR: f64 = 8.0;

/// A contaminated iteration's figure against the run's baseline, to name both in a warning.
#[derive(Debug, Clone, PartialEq)]
pub struct Contaminated {
    /// The iteration's interference, in % of the machine's CPU time.
    pub interference: f64,
    pub steal: f64,
    /// CPU used by other processes, where measured.
    pub foreign: Option<f64>,
    /// The run's median interference before this iteration; `None` when nothing measured it yet.
    pub baseline: Option<f64>,
    /// When the run-queue delay was far above the run's: the iteration's wait per CPU second
    /// and the run's median before it.
    pub waited: Option<(f64, Option<f64>)>,
    /// Whether the interference itself was far above the run's.
    pub by_interference: bool,
}

impl Contaminated {
    /// `interference 23.4% (steal 20.1% + other processes 3.3%) vs the run's 2.0%`
    pub fn describe(&self) -> String {
        let waited = self.waited.map(|(w, base)| {
            let against = match base {
                Some(b) => format!("vs the run's {b:.2} s"),
                None => String::from("with no baseline"),
            };
            format!(
                "the application or the load client waited {w:.2} s for a CPU per CPU second \
                 (run-queue delay) {against}"
            )
        });
        match (self.by_interference, waited) {
            (false, Some(w)) => format!("{w}; interference {:.1}%", self.interference),
            (true, Some(w)) => format!("{}; {w}", self.describe_interference()),
            (_, None) => self.describe_interference(),
        }
    }

    /// The interference part of [`Contaminated::describe`].
    fn describe_interference(&self) -> String {
        let parts = match self.foreign {
            Some(f) => format!(" (steal {:.1}% + other processes {f:.1}%)", self.steal),
            None => format!(" (steal {:.1}%)", self.steal),
        };
        let against = match self.baseline {
            Some(b) => format!("vs the run's {b:.1}%"),
            None => format!("above {ABSOLUTE_PCT:.0}% before the run had a baseline"),
        };
        format!("interference {:.1}%{parts} {against}", self.interference)
    }
}

/// The interference figure an iteration measured, if it ran to the end and measured one.
pub fn figure(it: &Iteration) -> Option<f64> {
    if it.error.is_some() {
        return None;
    }
    it.machine
        .as_ref()
        .and_then(|m| m.interference_pct)
        .filter(|v| v.is_finite())
}

/// The figures of every iteration of the run so far that measured one (all rows, excluded
/// ones too: a machine that got noisier for good moves the baseline rather than exhausting
/// the re-runs).
pub fn history<'a>(iterations: impl Iterator<Item = &'a Iteration>) -> Vec<f64> {
    iterations.filter_map(figure).collect()
}

/// The run-queue delay per CPU second an iteration measured, if it ran to the end and
/// measured one: the application's or the load client's, whichever waited more (either one
/// starved makes the iteration measure its neighbours).
pub fn wait_figure(it: &Iteration) -> Option<f64> {
    if it.error.is_some() {
        return None;
    }
    let m = it.machine.as_ref()?;
    [m.app_wait_per_cpu, m.client_wait_per_cpu]
        .into_iter()
        .flatten()
        .filter(|v| v.is_finite())
        .reduce(f64::max)
}

/// The run-queue delay figures of every iteration of the run so far (as [`history`]).
pub fn wait_history<'a>(iterations: impl Iterator<Item = &'a Iteration>) -> Vec<f64> {
    iterations.filter_map(wait_figure).collect()
}

/// Judges `it` against `history` and `waits` (the run's interference and run-queue delay
/// figures before it): `Some` when contaminated. An iteration without a figure (failed, or the
/// machine could not be read) never is.
pub fn judge(it: &Iteration, history: &[f64], waits: &[f64]) -> Option<Contaminated> {
    let m: &MachineDuring = it.machine.as_ref()?;
    let x = figure(it)?;
    let waited = wait_figure(it)
        .filter(|w| waited_too_long(*w, waits))
        .map(|w| (w, median(waits)));
    let by_interference = exceeds(x, history);
    if waited.is_none() && !by_interference {
        return None;
    }
    Some(Contaminated {
        by_interference,
        interference: x,
        steal: m.steal_pct,
        foreign: m.foreign_pct,
        baseline: median(history),
        waited,
    })
}

/// Whether a wait per CPU second `w` is far above the run's `waits` (the rule in the module's
/// doc).
pub fn waited_too_long(w: f64, waits: &[f64]) -> bool {
    w > WAIT_ABSOLUTE && median(waits).is_some_and(|base| w > WAIT_FACTOR * base)
}

/// Whether `x` is far above the baseline `history` gives (the rule in the module's doc).
pub fn exceeds(x: f64, history: &[f64]) -> bool {
    let Some(base) = median(history) else {
        return x > ABSOLUTE_PCT;
    };
    if history.len() < MIN_HISTORY {
        return x > ABSOLUTE_PCT && x > base + EARLY_EXCESS_POINTS;
    }
    let deviations: Vec<f64> = history.iter().map(|v| (v - base).abs()).collect();
    let mad = median(&deviations).unwrap_or(0.0);
    x > base + MIN_EXCESS_POINTS.max(SPREAD_FACTOR * 1.4826 * mad)
}

fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(interference: Option<f64>, steal: f64, foreign: Option<f64>) -> Iteration {
        let mut it = Iteration::new(0, 0);
        it.machine = Some(MachineDuring {
            steal_pct: steal,
            busy_pct: 50.0,
            throttle_events: None,
            foreign_pct: foreign,
            cpu_pressure_pct: None,
            run_queue: None,
            freq_mhz: None,
            interference_pct: interference,
            app_wait_per_cpu: None,
            client_wait_per_cpu: None,
        });
        it
    }

    #[test]
    fn far_above_a_steady_baseline_is_contaminated_and_named_with_its_parts() {
        let history = [2.0, 1.5, 2.5, 2.0];
        let it = with(Some(23.4), 20.1, Some(3.3));
        let c = judge(&it, &history, &[]).expect("contaminated");
        assert_eq!(
            c.describe(),
            "interference 23.4% (steal 20.1% + other processes 3.3%) vs the run's 2.0%"
        );
        // Within 5 points of a steady baseline is noise however small the spread.
        assert!(judge(&with(Some(6.9), 6.9, None), &history, &[]).is_none());
        assert!(judge(&with(Some(7.1), 7.1, None), &history, &[]).is_some());
    }

    #[test]
    fn a_wide_baseline_needs_three_robust_deviations() {
        // Median 10, MAD 4: threshold 10 + 3 × 1.4826 × 4 = 27.79.
        let history = [6.0, 10.0, 14.0, 2.0, 18.0];
        assert!(!exceeds(27.7, &history));
        assert!(exceeds(27.9, &history));
    }

    #[test]
    fn before_three_iterations_only_an_absolute_15_percent_counts() {
        assert!(!exceeds(14.9, &[]));
        assert!(exceeds(15.1, &[]));
        assert!(!exceeds(12.0, &[1.0, 1.0]));
        assert!(exceeds(16.5, &[1.0, 1.0]));
        // A machine that always has 20% steal is not contaminated from its second iteration,
        // nor one whose load is still rising.
        assert!(!exceeds(21.0, &[20.0]));
        assert!(!exceeds(49.5, &[38.3]));
        assert!(exceeds(53.5, &[38.3]));
        let first = judge(&with(Some(16.0), 16.0, None), &[], &[]).unwrap();
        assert_eq!(
            first.describe(),
            "interference 16.0% (steal 16.0%) above 15% before the run had a baseline"
        );
    }

    #[test]
    fn no_figure_or_a_failed_iteration_is_never_contaminated() {
        let history = [1.0, 1.0, 1.0];
        assert!(judge(&with(None, 30.0, None), &history, &[]).is_none());
        assert!(judge(&Iteration::new(0, 0), &history, &[]).is_none());
        let mut failed = with(Some(50.0), 50.0, None);
        failed.error = Some("load failed".into());
        assert!(judge(&failed, &history, &[]).is_none());
        assert!(history_of(&[failed, with(Some(3.0), 3.0, None)]) == [3.0]);
    }

    #[test]
    fn a_starved_iteration_on_an_already_busy_machine_is_contaminated_by_its_wait() {
        // A machine busy before the run: the interference baseline is ~100% and cannot be
        // exceeded, but the starved iteration waited 95 s per CPU second where the others
        // waited about one.
        let history = [99.6, 100.0, 99.8, 100.0];
        let waits = [1.1, 0.9, 1.3];
        let mut starved = with(Some(100.0), 0.0, Some(100.0));
        starved.machine.as_mut().unwrap().app_wait_per_cpu = Some(95.0);
        assert!(!exceeds(100.0, &history));
        let c = judge(&starved, &history, &waits).expect("contaminated by its wait");
        assert_eq!(
            c.describe(),
            "the application or the load client waited 95.00 s for a CPU per CPU second \
             (run-queue delay) vs the run's 1.10 s; interference 100.0%"
        );
        // On a quiet run both figures can be far above the run's: both are named.
        let mut both = with(Some(40.0), 0.0, Some(40.0));
        both.machine.as_mut().unwrap().app_wait_per_cpu = Some(20.0);
        assert_eq!(
            judge(&both, &[1.0, 1.0, 1.0], &[0.5, 0.5])
                .unwrap()
                .describe(),
            "interference 40.0% (steal 0.0% + other processes 40.0%) vs the run's 1.0%; the \
             application or the load client waited 20.00 s for a CPU per CPU second (run-queue \
             delay) vs the run's 0.50 s"
        );
        // An ordinary iteration of the same busy run is not, nor one under the absolute bar
        // however quiet the run was.
        let mut usual = with(Some(100.0), 0.0, Some(100.0));
        usual.machine.as_mut().unwrap().app_wait_per_cpu = Some(1.6);
        assert!(judge(&usual, &history, &waits).is_none());
        assert!(!waited_too_long(2.9, &[0.01, 0.02]));
        assert!(waited_too_long(3.1, &[0.01, 0.02]));
        assert!(!waited_too_long(8.0, &[2.5, 2.0]));
        // The first iteration has nothing to be compared with: a machine busy from the start
        // makes every iteration wait.
        assert!(!waited_too_long(40.0, &[]));
        assert_eq!(
            wait_history([starved, usual, Iteration::new(1, 1)].iter()),
            [95.0, 1.6]
        );
        // Whichever of the application and the client waited more is the figure.
        let mut client = with(Some(100.0), 0.0, Some(100.0));
        let m = client.machine.as_mut().unwrap();
        (m.app_wait_per_cpu, m.client_wait_per_cpu) = (Some(0.5), Some(7.0));
        assert_eq!(wait_figure(&client), Some(7.0));
        assert_eq!(wait_figure(&with(Some(1.0), 0.0, None)), None);
    }

    fn history_of(its: &[Iteration]) -> Vec<f64> {
        history(its.iter())
    }
}
