//! Runtime metrics (`metrics = URL` on an application job): the application's own Prometheus or
//! OpenMetrics page, scraped at the measured window's edges and every sample between, so
//! figures only the runtime knows (allocations, GC, its own request count) sit beside rigor's.
//! Counters become `app.metric.NAME.rate` (per second over the window), gauges
//! `app.metric.NAME` (the highest value scraped in the window). A scrape that fails is a
//! warning, never a failed iteration: the load's figures stand without them.

mod figures;
mod parse;
mod reading;
mod scrape;

pub use scrape::Scraper;

use crate::config::metrics_select::Selector;
use crate::config::{AppJob, MetricsScrape};
use figures::{Figures, Scrape};
use reading::Flavor;
use rigor_model::declarations::Declaration;
use rigor_model::result::{Iteration, Warning, WarningKind};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Starts scraping the job's `metrics` URL, if it has one, every `interval`; times are ms
/// since `spawned_at`.
pub fn start(app: &AppJob, interval: Duration, spawned_at: Instant) -> Option<Scraper> {
    let m: &MetricsScrape = app.metrics.as_ref()?;
    Some(Scraper::start(
        &m.url,
        selectors(&m.select),
        interval,
        spawned_at,
    ))
}

/// Stops the scraper and records what it saw in the iteration.
pub fn finish(scraper: Scraper, app: &AppJob, it: &mut Iteration) {
    let Some(m) = app.metrics.as_ref() else {
        return;
    };
    record(scraper.stop(), &m.url, &selectors(&m.select), it);
}

/// The selectors of a job's `metrics_select` (checked when the config was read, so none fails
/// here).
fn selectors(entries: &[String]) -> Vec<Selector> {
    entries
        .iter()
        .filter_map(|e| Selector::parse(e).ok())
        .collect()
}

/// Puts what the scraper saw in the iteration: the figures when both window edges were read,
/// a warning naming the URL and the error when one was not, the scrapes as a time series.
fn record(log: scrape::Log, url: &str, select: &[Selector], it: &mut Iteration) {
    it.metrics_scrapes = Some(log.attempts);
    let figures = window_figures(&log, url, it);
    if let Some(f) = &figures {
        for (id, v) in &f.measurements {
            it.measurements.insert(id.clone(), *v);
        }
        for p in &f.problems {
            it.warnings.push(warning(format!("{url}: {p}")));
        }
        declare(f, it);
        unmatched(&log.scrapes, log.start, select, url, it);
    }
    let periodic: Vec<&String> = log
        .failures
        .iter()
        .filter(|(edge, _)| edge.is_none())
        .map(|(_, e)| e)
        .collect();
    if let Some(first) = periodic.first() {
        it.warnings.push(warning(format!(
            "{} of {} scrapes of {url} between the window's edges failed (first: {first}); the \
             time series has gaps and a gauge's highest value is over the others",
            periodic.len(),
            log.attempts
        )));
    }
    if log.scrapes.is_empty() {
        return;
    }
    non_finite(&log.scrapes, url, it);
    let kept = figures
        .map(|f| f.kept)
        .unwrap_or_else(|| all_stems(&log.scrapes));
    let series = it.series.get_or_insert_with(Default::default);
    series.metrics_t_ms = log
        .scrapes
        .iter()
        .map(|s| rigor_model::series::tenth(s.t_ms))
        .collect();
    series.metrics = figures::series(&log.scrapes, &kept);
}

/// The window's figures, or `None` with a warning saying which edge could not be read.
fn window_figures(log: &scrape::Log, url: &str, it: &mut Iteration) -> Option<Figures> {
    if !log.start_tried {
        return None; // the window never started: the iteration failed before it
    }
    match (log.start, log.end) {
        (Some(s), Some(e)) => Some(figures::window(&log.scrapes, s, e)),
        _ => {
            let (edge, why) = log
                .failures
                .iter()
                .find_map(|(edge, e)| edge.map(|edge| (edge, e.as_str())))
                .unwrap_or(("at the window's end", "not scraped"));
            it.warnings.push(warning(format!(
                "no app.metric.* figures: scraping {url} {edge} failed: {why}"
            )));
            None
        }
    }
}

/// Rates are per second; so reports label them. Which way is better nobody but the user
/// knows, so no direction is declared.
fn declare(f: &Figures, it: &mut Iteration) {
    for (stem, flavor) in &f.kept {
        if *flavor == Flavor::Counter {
            it.declared
                .entry(figures::id(stem, *flavor))
                .or_insert_with(|| Declaration {
                    unit: Some("1/s".into()),
                    direction: None,
                    label: Some(format!("{stem} per second")),
                    threshold_pct: None,
                });
        }
    }
}

/// A warning for each `metrics_select` entry that matched no series at the window's start
/// (a typo in a name or a label value would otherwise just record nothing).
fn unmatched(
    scrapes: &[Scrape],
    start: Option<usize>,
    select: &[Selector],
    url: &str,
    it: &mut Iteration,
) {
    let Some(reading) = start.and_then(|s| scrapes.get(s)).map(|s| &s.reading) else {
        return;
    };
    for sel in select {
        let labels = sel.stem("");
        let hit = reading
            .keys()
            .any(|k| k.starts_with(&sel.name) && k.ends_with(&labels) && labels.len() < k.len());
        if !hit {
            it.warnings.push(warning(format!(
                "`metrics_select` entry `{}` matched no counter or gauge series at {url}",
                sel.stem(&sel.name)
            )));
        }
    }
}

/// Most stems a non-finite warning names: the count says how many more there were.
const NAMED_STEMS: usize = 5;

/// A warning when scrapes held NaN or ±Inf samples: they were left out, so a stem has no
/// figure where it had no other sample, and a sum over series lacks them.
fn non_finite(scrapes: &[Scrape], url: &str, it: &mut Iteration) {
    let mut by_stem: BTreeMap<&str, u64> = BTreeMap::new();
    let mut in_scrapes = 0;
    for s in scrapes.iter().filter(|s| !s.non_finite.is_empty()) {
        in_scrapes += 1;
        for (stem, n) in &s.non_finite {
            *by_stem.entry(stem).or_default() += n;
        }
    }
    if by_stem.is_empty() {
        return;
    }
    let total: u64 = by_stem.values().sum();
    let mut named: Vec<String> = by_stem
        .iter()
        .take(NAMED_STEMS)
        .map(|(stem, n)| format!("`{stem}` {n}"))
        .collect();
    if by_stem.len() > NAMED_STEMS {
        named.push(format!("and {} more", by_stem.len() - NAMED_STEMS));
    }
    it.warnings.push(Warning::of(
        WarningKind::MetricsNonFinite,
        format!(
            "{url}: {total} NaN or ±Inf samples in {in_scrapes} of {} scrapes were left out \
             ({}): a figure summed over series lacks them, and one with no other sample is \
             missing",
            scrapes.len(),
            named.join(", ")
        ),
    ));
}

/// Every stem any scrape read (at most [`figures::MAX_IDS`]), for a series without figures.
fn all_stems(scrapes: &[Scrape]) -> BTreeMap<String, Flavor> {
    let mut all = BTreeMap::new();
    for s in scrapes {
        for (k, (f, _)) in &s.reading {
            all.entry(k.clone()).or_insert(*f);
        }
    }
    all.into_iter().take(figures::MAX_IDS).collect()
}

fn warning(message: String) -> Warning {
    Warning::of(WarningKind::Metrics, message)
}

/// Why a runtime-metrics page could not be scraped or read: the message names the line or the
/// figure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MetricsError(pub String);

impl From<String> for MetricsError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for MetricsError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

impl From<crate::config::ValueError> for MetricsError {
    fn from(e: crate::config::ValueError) -> Self {
        Self(e.0)
    }
}

/// The message alone, for the callers that still report errors as text.
impl From<MetricsError> for String {
    fn from(e: MetricsError) -> String {
        e.0
    }
}
