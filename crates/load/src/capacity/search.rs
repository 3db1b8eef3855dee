//! The search for the highest rate that meets an objective, over any `probe(rate) -> window`:
//! doubling from a start rate until a probe misses (halving while the start itself misses),
//! then bisecting between the highest rate met and the lowest missed until they are within
//! the precision, each end measured again until its verdict holds.

use super::objective::{Objective, Window};
use serde::{Deserialize, Serialize};

/// How the search goes: where it starts and stops, how close its answer must be.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSettings {
    /// The first rate probed, requests per second.
    pub start: f64,
    /// The highest rate probed: a service that meets the objective there holds at least this.
    pub max: f64,
    /// Settled when the lowest rate missed is within `precision` × the highest met (0.05: 5%).
    pub precision: f64,
    /// Probes each end of the final interval needs, all agreeing by majority, before it stands.
    pub confirm: usize,
    /// The search gives up (unsettled) after this many probes.
    pub max_probes: usize,
    /// The lowest rate probed: halving stops here (probing it once a half would pass it), and
    /// the objective missed here is not met at any rate.
    pub min_rate: f64,
}

/// How many probes one rate gets at most when its verdicts disagree with each other or with
/// its neighbours' (an odd number, so a majority always decides).
const MAX_REPEATS: usize = 3;

/// One probe: the rate offered and what its window measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeRow {
    /// Requests per second offered (open model).
    pub rate: f64,
    #[serde(flatten)]
    pub window: Window,
    /// Failed requests over requests due.
    pub error_rate: f64,
    /// Whether this probe's window met the objective.
    pub met: bool,
}

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The highest rate met and the lowest missed are within the precision, each confirmed.
    Settled,
    /// The objective held at `max`: the capacity is at least that.
    AtLeastMax,
    /// The objective was missed even at the lowest rate tried.
    NeverMet,
    /// The probes ran out (or were stopped) before the answer settled.
    Unsettled,
}

/// The answer: the highest rate that met the objective, the interval the true one lies in,
/// and every probe made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The objective, as written canonically.
    pub objective: String,
    /// The highest rate whose probes met the objective (by majority); `None` when none did.
    pub capacity_rps: Option<f64>,
    /// The interval the rate the service holds lies in: `low` met, `high` missed (`None`
    /// when nothing above `low` missed, i.e. the search reached `max`).
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub outcome: Outcome,
    pub precision: f64,
    /// Each probe's measured seconds and the warmup before them.
    pub probe_secs: f64,
    pub warmup_secs: f64,
    /// In the order they were made.
    pub probes: Vec<ProbeRow>,
}

/// The search stopped because a probe failed (an engine error, Ctrl-C): what it had so far.
#[derive(Debug)]
pub struct Stopped<E> {
    /// Boxed: the answer so far is large beside the cause.
    pub so_far: Box<Capacity>,
    pub cause: E,
}

/// The tally of one rate's probes.
#[derive(Debug, Clone, Copy)]
struct Tally {
    rate: f64,
    met: usize,
    missed: usize,
}

impl Tally {
    fn probes(&self) -> usize {
        self.met + self.missed
    }
    fn verdict(&self) -> Option<bool> {
        match self.met.cmp(&self.missed) {
            std::cmp::Ordering::Greater => Some(true),
            std::cmp::Ordering::Less => Some(false),
            std::cmp::Ordering::Equal => None,
        }
    }
}

/// What to do next.
enum Step {
    Probe(f64),
    Done(Outcome),
}

/// Runs the search: `probe(rate)` loads the service at `rate` and returns its window's
/// figures; `seen` hears of each probe as it ends. `probe_secs`/`warmup_secs` only describe the probes in the answer.
pub fn search<E>(
    objective: &Objective,
    settings: &SearchSettings,
    probe_secs: f64,
    warmup_secs: f64,
    mut probe: impl FnMut(f64) -> Result<Window, E>,
    mut seen: impl FnMut(&ProbeRow),
) -> Result<Capacity, Stopped<E>> {
    let mut rows: Vec<ProbeRow> = Vec::new();
    let outcome = loop {
        let step = next_step(&tallies(&rows), settings);
        let rate = match step {
            Step::Done(outcome) => break outcome,
            Step::Probe(_) if rows.len() >= settings.max_probes => break Outcome::Unsettled,
            Step::Probe(rate) => rate,
        };
        match probe(rate) {
            Ok(window) => {
                let row = ProbeRow {
                    rate,
                    window,
                    error_rate: window.error_rate(),
                    met: objective.met(&window),
                };
                seen(&row);
                rows.push(row);
            }
            Err(cause) => {
                let so_far = Box::new(answer(
                    objective,
                    settings,
                    probe_secs,
                    warmup_secs,
                    rows,
                    None,
                ));
                return Err(Stopped { so_far, cause });
            }
        }
    };
    Ok(answer(
        objective,
        settings,
        probe_secs,
        warmup_secs,
        rows,
        Some(outcome),
    ))
}

fn answer(
    objective: &Objective,
    settings: &SearchSettings,
    probe_secs: f64,
    warmup_secs: f64,
    probes: Vec<ProbeRow>,
    outcome: Option<Outcome>,
) -> Capacity {
    let (low, high) = bracket(&tallies(&probes));
    Capacity {
        objective: objective.to_string(),
        capacity_rps: low,
        low,
        high,
        outcome: outcome.unwrap_or(Outcome::Unsettled),
        precision: settings.precision,
        probe_secs,
        warmup_secs,
        probes,
    }
}

/// The probes grouped by rate, lowest rate first.
fn tallies(rows: &[ProbeRow]) -> Vec<Tally> {
    let mut t: Vec<Tally> = Vec::new();
    for r in rows {
        let i = match t.iter().position(|x| x.rate == r.rate) {
            Some(i) => i,
            None => {
                t.push(Tally {
                    rate: r.rate,
                    met: 0,
                    missed: 0,
                });
                t.len() - 1
            }
        };
        if r.met {
            t[i].met += 1;
        } else {
            t[i].missed += 1;
        }
    }
    t.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    t
}

/// The lowest rate missed (by majority) and the highest met below it.
fn bracket(t: &[Tally]) -> (Option<f64>, Option<f64>) {
    let high = t
        .iter()
        .find(|x| x.verdict() == Some(false))
        .map(|x| x.rate);
    let low = t
        .iter()
        .filter(|x| x.verdict() == Some(true) && high.is_none_or(|h| x.rate < h))
        .map(|x| x.rate)
        .next_back();
    (low, high)
}

fn tally_at(t: &[Tally], rate: f64) -> Tally {
    t.iter().copied().find(|x| x.rate == rate).unwrap_or(Tally {
        rate,
        met: 0,
        missed: 0,
    })
}

fn next_step(t: &[Tally], s: &SearchSettings) -> Step {
    // A rate whose probes split evenly is measured again, lowest first.
    if let Some(tie) = t.iter().find(|x| x.verdict().is_none()) {
        return Step::Probe(tie.rate);
    }
    let (low, high) = bracket(t);
    // A rate met above one missed: one of them was a fluke or the service is not monotone;
    // measure the less-measured one again (each up to MAX_REPEATS), else keep the lower answer.
    if let Some(h) = high {
        let above = t
            .iter()
            .filter(|x| x.rate > h && x.verdict() == Some(true))
            .copied()
            .next_back();
        if let Some(above) = above {
            let missed = tally_at(t, h);
            let again = [missed, above]
                .into_iter()
                .filter(|x| x.probes() < MAX_REPEATS)
                .min_by_key(|x| x.probes());
            if let Some(again) = again {
                return Step::Probe(again.rate);
            }
        }
    }
    match (low, high) {
        (None, None) => Step::Probe(s.start),
        (Some(l), None) if l >= s.max => confirm(t, &[l], s.confirm, Outcome::AtLeastMax),
        (Some(l), None) => Step::Probe(round((l * 2.0).min(s.max))),
        (None, Some(h)) => {
            // Never below the lowest rate worth a probe, which is itself probed once a half
            // would pass it; below 0.01 rps a half rounds back to the rate missed.
            let half = round(h / 2.0).max(s.min_rate);
            if half >= h {
                confirm(t, &[h], s.confirm, Outcome::NeverMet)
            } else {
                Step::Probe(half)
            }
        }
        (Some(l), Some(h)) => {
            let mid = round((l + h) / 2.0);
            if h - l <= s.precision * l || mid <= l || mid >= h {
                confirm(t, &[l, h], s.confirm, Outcome::Settled)
            } else {
                Step::Probe(mid)
            }
        }
    }
}

/// Done once each of `ends` has `confirm` probes; else the next probe at the end short of them.
fn confirm(t: &[Tally], ends: &[f64], need: usize, outcome: Outcome) -> Step {
    match ends
        .iter()
        .map(|&r| tally_at(t, r))
        .find(|x| x.probes() < need)
    {
        Some(short) => Step::Probe(short.rate),
        None => Step::Done(outcome),
    }
}

/// A probe rate people can read: whole requests per second from 100 up, two decimals below.
fn round(rate: f64) -> f64 {
    if rate >= 100.0 {
        rate.round()
    } else {
        (rate * 100.0).round() / 100.0
    }
}
