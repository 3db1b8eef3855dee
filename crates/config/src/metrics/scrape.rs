//! Reading the metrics URL: one bounded GET (chunked or not, 2 s, 16 MiB), and a scraper that
//! reads it at the window's edges (on the caller's thread, so the edges are where the load's
//! are) and every sample interval in between (on a thread of its own, so the load never waits).

use crate::metrics::MetricsError;

use super::figures::Scrape;
use super::parse;
use super::reading;
use crate::config::metrics_select::Selector;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A scrape slower than this is a failure: a metrics page is rendered in milliseconds.
pub const TIMEOUT: Duration = Duration::from_secs(2);
/// How long before the load's window closes the end scrape is taken: more than the load's
/// watcher ticks (20 ms) after the start was seen, so it is always inside the window.
pub const END_LEAD: Duration = Duration::from_millis(50);
/// A larger body is refused as soon as it is exceeded (a runtime's page is a few hundred KiB).
pub const MAX_BODY: usize = 16 << 20;

/// Reads and parses the page once; an error says what went wrong (refused, timed out, a
/// status other than 2xx, not the text format).
pub fn fetch(
    url: &str,
    select: &[Selector],
) -> Result<(reading::Reading, reading::NonFinite), MetricsError> {
    let r = rigor_load::fetch_body(url, TIMEOUT, MAX_BODY).map_err(|e| e.to_string())?;
    if !(200..300).contains(&r.status) {
        return Err(format!("{url} answered {}", r.status).into());
    }
    let text =
        std::str::from_utf8(&r.body).map_err(|_| "the body is not UTF-8 text".to_string())?;
    let families = parse::parse(text).map_err(|e| format!("not Prometheus text: {e}"))?;
    Ok(reading::reduce(&families, select))
}

/// Which edge of the window a scrape was taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edge {
    Start,
    End,
}

/// What the scrapes gave, in time order, and which were the window's edges.
#[derive(Debug, Default)]
pub struct Log {
    pub scrapes: Vec<Scrape>,
    /// Index into `scrapes` of the window's first and last scrape, when they succeeded.
    pub start: Option<usize>,
    pub end: Option<usize>,
    /// Every attempt, failed ones included.
    pub attempts: u64,
    /// Failures: at which edge (`None` between them), and why.
    pub failures: Vec<(Option<&'static str>, String)>,
    /// Whether the window's start was reached (a scrape attempted there).
    pub start_tried: bool,
}

/// One scrape as taken: when (ms), at which edge, what it gave.
type Attempt = (
    f64,
    Option<Edge>,
    Result<(reading::Reading, reading::NonFinite), MetricsError>,
);

/// State shared with the background thread.
struct Shared {
    url: String,
    select: Vec<Selector>,
    origin: Instant,
    log: Mutex<Vec<Attempt>>,
}

impl Shared {
    /// One scrape, timed at the midpoint of the exchange (where the page was most likely
    /// rendered), in ms since `origin`.
    fn scrape(&self, edge: Option<Edge>) {
        let before = self.origin.elapsed();
        let result = fetch(&self.url, &self.select);
        let after = self.origin.elapsed();
        let t_ms = (before + (after - before) / 2).as_secs_f64() * 1e3;
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((t_ms, edge, result));
    }
}

/// Scrapes one application's metrics URL through one iteration.
pub struct Scraper {
    shared: Arc<Shared>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    marked: (bool, bool),
    /// When the window's start was scraped.
    started: Option<Instant>,
}

impl Scraper {
    /// Starts scraping every `interval`; times are ms since `origin` (the application's spawn).
    pub fn start(url: &str, select: Vec<Selector>, interval: Duration, origin: Instant) -> Scraper {
        let shared = Arc::new(Shared {
            url: url.to_string(),
            select,
            origin,
            log: Mutex::new(Vec::new()),
        });
        let (tx, rx) = mpsc::channel::<()>();
        let bg = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("rigor-metrics".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(interval) {
                    bg.scrape(None);
                }
            })
            .ok();
        Scraper {
            shared,
            stop: Some(tx),
            thread,
            marked: (false, false),
            started: None,
        }
    }

    /// The scrape at the window's start (once).
    pub fn window_start(&mut self) {
        if !self.marked.0 {
            self.marked.0 = true;
            self.started = Some(Instant::now());
            self.shared.scrape(Some(Edge::Start));
        }
    }

    /// Called while the load runs a window of `window`: takes the end scrape [`END_LEAD`]
    /// before the window would close, so both edges fall while the load still runs. A scrape
    /// after the load stopped would add idle time to the rate's denominator (the window's
    /// start is seen up to a tick late, the end up to a tick late again: 1–2% of a 2 s window).
    pub fn tick(&mut self, window: Duration) {
        let lead = END_LEAD.min(window / 10);
        if self.started.is_some_and(|t| t.elapsed() + lead >= window) {
            self.window_end();
        }
    }

    /// The scrape at the window's end (once, and only after a start).
    pub fn window_end(&mut self) {
        if self.marked.0 && !self.marked.1 {
            self.marked.1 = true;
            self.shared.scrape(Some(Edge::End));
        }
    }

    /// Stops the background thread and returns every scrape in time order.
    pub fn stop(mut self) -> Log {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut raw =
            std::mem::take(&mut *self.shared.log.lock().unwrap_or_else(|e| e.into_inner()));
        raw.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut log = Log {
            attempts: raw.len() as u64,
            start_tried: self.marked.0,
            ..Log::default()
        };
        for (t_ms, edge, result) in raw {
            match result {
                Ok((reading, non_finite)) => {
                    match edge {
                        Some(Edge::Start) => log.start = Some(log.scrapes.len()),
                        Some(Edge::End) => log.end = Some(log.scrapes.len()),
                        None => {}
                    }
                    log.scrapes.push(Scrape {
                        t_ms,
                        reading,
                        non_finite,
                    });
                }
                Err(e) => log.failures.push((
                    edge.map(|e| match e {
                        Edge::Start => "at the window's start",
                        Edge::End => "at the window's end",
                    }),
                    e.to_string(),
                )),
            }
        }
        log
    }
}

#[cfg(test)]
#[path = "scrape_tests.rs"]
mod tests;
