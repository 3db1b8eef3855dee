//! Charts for the HTML report, drawn as inline SVG so the page needs no network, no script and
//! no font of its own: comparisons (each change with its interval, coloured by verdict), sweeps
//! (a measurement against the swept variable, a line per variant), the latency percentile
//! spectrum, and per-iteration timelines. What a chart leaves out to keep the page small is
//! said under it.

mod axis;
mod bars;
mod capacity;
mod frame;
mod palette;
mod spectrum;
pub(crate) mod svg;
mod sweep;
mod thin;
mod timeline;

use crate::html::escape;
use rigor_analysis::matching::CompareReport;
use rigor_model::declarations::{self, Declarations};
use rigor_model::measurements::ids;
use rigor_model::result::{Comparison, RunResult};

/// Sweep charts, spectra and timeline rows a page draws at most; more are named as left out.
const MAX_SWEEPS: usize = 24;
const MAX_PAIRS: usize = 24;
const MAX_SPECTRA: usize = 24;
const MAX_TIMELINE_ROWS: usize = 24;

/// The charts of a run, as an HTML section (empty when there is nothing to draw).
#[cfg(any(test, feature = "fixtures"))]
pub fn run_section(result: &RunResult) -> String {
    let key = crate::headline::default_key(&result.comparisons, None);
    let RunCharts { answer, more } = run_charts(result, &key);
    let out = answer + &more;
    if out.is_empty() {
        return out;
    }
    format!("<section class=\"charts-section\">\n<h2>Charts</h2>\n{out}</section>\n")
}

/// A run's charts split for the page: what answers the question (the key figures' comparison
/// chart, the sweeps) and the rest (every measurement's comparison, spectra, timelines).
pub struct RunCharts {
    /// The key figures' comparison chart and the sweep charts, for the top of the page.
    pub answer: String,
    /// The other charts, for a folded section.
    pub more: String,
}

/// The run's charts: the answer first (the comparisons of `key`, the headline's figures, and the sweeps), the rest
/// after.
pub fn run_charts(result: &RunResult, key: &[String]) -> RunCharts {
    let page = Variants::of(result);
    let title = |c: &Comparison| {
        let row = c.row_key().detail();
        if row.is_empty() {
            format!("{} vs {}", c.candidate, c.baseline)
        } else {
            format!("{row}: {} vs {}", c.candidate, c.baseline)
        }
    };
    let key: Vec<Comparison> = result
        .comparisons
        .iter()
        .filter(|c| key.contains(&c.measurement))
        .cloned()
        .collect();
    let mut answer = comparisons(&key, &result.measurements, None, title, "Key figures");
    answer.push_str(&sweeps(result, &page));
    let mut more = String::new();
    if key.len() < result.comparisons.len() {
        more.push_str(&comparisons(
            &result.comparisons,
            &result.measurements,
            None,
            title,
            "Comparisons",
        ));
    }
    more.push_str(&capacities(result, &page));
    more.push_str(&spectra(result, &page));
    more.push_str(&timelines(result, &page));
    RunCharts { answer, more }
}

/// The charts of `rigor compare`: one comparison chart per compared row and candidate.
pub fn compare_section(report: &CompareReport) -> String {
    let out = comparisons(
        &report.comparisons,
        &report.measurements,
        Some(report.threshold_pct),
        |c| {
            let row = c.row_key().label();
            if row.is_empty() {
                format!("{} vs {}", c.candidate, c.baseline)
            } else {
                format!("{row}: {} vs {}", c.candidate, c.baseline)
            }
        },
        "Comparisons",
    );
    if out.is_empty() {
        return out;
    }
    format!("<section class=\"charts-section\">\n<h2>Charts</h2>\n{out}</section>\n")
}

/// The variants of a run in one order (the baseline first), so each has one colour and one
/// name across the page.
struct Variants {
    order: Vec<Option<String>>,
    scenario: String,
}

impl Variants {
    fn of(result: &RunResult) -> Variants {
        let mut order: Vec<Option<String>> = result
            .comparisons
            .first()
            .map(|c| vec![Some(c.baseline.clone())])
            .unwrap_or_default();
        for row in &result.rows {
            if !order.contains(&row.variant) {
                order.push(row.variant.clone());
            }
        }
        Variants {
            order,
            scenario: result.scenario.clone(),
        }
    }

    fn colour(&self, v: &Option<String>) -> &'static str {
        palette::series(self.order.iter().position(|x| x == v).unwrap_or(0))
    }

    fn name(&self, v: &Option<String>) -> String {
        v.clone().unwrap_or_else(|| self.scenario.clone())
    }
}

/// A sub-section: heading, the charts side by side, then what the reader must know about them.
fn block(title: &str, charts: &[String], notes: &[String]) -> String {
    if charts.is_empty() {
        return String::new();
    }
    let mut out = format!("<h3>{}</h3>\n<div class=\"charts\">\n", escape(title));
    for c in charts {
        out.push_str(c);
        out.push('\n');
    }
    out.push_str("</div>\n");
    for n in notes {
        out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(n)));
    }
    out
}

/// One chart per compared pair (a row's candidate against its baseline), a bar per
/// measurement: the pair is what a reader asks about ("is the new runtime slower?"), and its
/// measurements side by side answer it.
fn comparisons(
    cs: &[Comparison],
    decl: &Declarations,
    threshold: Option<f64>,
    title: impl Fn(&Comparison) -> String,
    heading: &str,
) -> String {
    let mut pairs: Vec<(String, Vec<&Comparison>)> = Vec::new();
    for c in cs {
        let t = title(c);
        match pairs.iter_mut().find(|(k, _)| *k == t) {
            Some((_, of)) => of.push(c),
            None => pairs.push((t, vec![c])),
        }
    }
    let mut notes = Vec::new();
    let charts: Vec<String> = pairs
        .iter()
        .take(MAX_PAIRS)
        .map(|(t, of)| {
            if of.len() > bars::MAX_BARS {
                notes.push(format!(
                    "{t}: the first {} of {} measurements are drawn; the tables have all.",
                    bars::MAX_BARS,
                    of.len()
                ));
            }
            bars::chart(
                t,
                of,
                |c| declarations::label(&c.measurement, decl),
                threshold,
            )
        })
        .collect();
    if pairs.len() > MAX_PAIRS {
        notes.push(format!(
            "{MAX_PAIRS} of {} compared rows are drawn; the tables have all.",
            pairs.len()
        ));
    }
    if charts.iter().any(|c| c.contains(bars::CUT_MARK)) {
        notes.push(format!(
            "Changes beyond ±{}% are cut at the edge of the axis (marked ›); the figure beside \
             the bar is the whole change.",
            crate::format::number(bars::MAX_EXTENT)
        ));
    }
    block(heading, &charts, &notes)
}

/// The measurements worth a sweep chart: a command's own figures (the pivot's first), then the
/// load's throughput and p99 latency; a command job without figures of its own charts its
/// elapsed time.
fn sweep_ids(result: &RunResult) -> Vec<String> {
    let has = |id: &str| result.rows.iter().any(|r| r.summary.contains_key(id));
    let mut out: Vec<String> = crate::pivot::default_measurement(result)
        .into_iter()
        .collect();
    let mut cmd: Vec<String> = result
        .rows
        .iter()
        .flat_map(|r| r.summary.keys())
        .filter(|id| id.starts_with("cmd."))
        .cloned()
        .collect();
    cmd.sort();
    out.extend(cmd);
    for id in [ids::LOAD_RPS, ids::LOAD_LATENCY_P99] {
        out.push(id.to_string());
    }
    if !out.iter().any(|id| has(id)) {
        out.push(ids::APP_ELAPSED.to_string());
    }
    let mut seen = Vec::new();
    out.retain(|id| {
        has(id) && !seen.contains(id) && {
            seen.push(id.clone());
            true
        }
    });
    out
}

fn sweeps(result: &RunResult, page: &Variants) -> String {
    let tables: Vec<_> = sweep_ids(result)
        .iter()
        .flat_map(|id| crate::pivot::build(result, id, None))
        .collect();
    let charts: Vec<String> = tables
        .iter()
        .take(MAX_SWEEPS)
        .map(|p| sweep::chart(p, |v| page.colour(v), |v| page.name(v)))
        .collect();
    let mut notes = vec![
        "Each line joins a variant's medians; the band spans its lowest and highest \
         iteration; a value a variant lacks leaves a gap."
            .to_string(),
    ];
    if tables.len() > MAX_SWEEPS {
        notes.push(format!(
            "{MAX_SWEEPS} of {} sweep charts are drawn; the tables have every figure.",
            tables.len()
        ));
    }
    block("Sweeps", &charts, &notes)
}

/// A capacity chart per row that searched for the rate it holds (`find_rate`).
fn capacities(result: &RunResult, page: &Variants) -> String {
    let charts: Vec<String> = result
        .rows
        .iter()
        .filter_map(|row| {
            let search = capacity::median_search(row)?;
            let title = format!(
                "Latency against offered rate · {}",
                row.key_in(&result.scenario).label()
            );
            capacity::chart(&title, search, page.colour(&row.variant))
        })
        .take(MAX_SPECTRA)
        .collect();
    block(
        "Capacity",
        &charts,
        &[
            "Each dot is one probe of the row's median search by load.capacity, at the rate \
           it offered; the dashed line is the objective's p99 limit (slower probes sit on the \
           top edge, their figure in the hover text), the shaded span the interval between \
           the highest rate met and the lowest missed."
                .to_string(),
        ],
    )
}

fn spectra(result: &RunResult, page: &Variants) -> String {
    let mut groups: Vec<(rigor_model::result::RowKey, Vec<&rigor_model::result::Row>)> = Vec::new();
    for row in &result.rows {
        let g = row.key_in(&result.scenario).group();
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, rows)) => rows.push(row),
            None => groups.push((g, vec![row])),
        }
    }
    let mut charts = Vec::new();
    let mut drawable = 0;
    for (key, rows) in &groups {
        let lines: Vec<_> = rows
            .iter()
            .filter_map(|r| {
                let (_, p) = spectrum::median_iteration(r)?;
                Some((page.name(&r.variant), page.colour(&r.variant), p))
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        drawable += 1;
        if charts.len() < MAX_SPECTRA {
            charts.extend(spectrum::chart(
                &format!("Latency · {}", key.label()),
                &lines,
            ));
        }
    }
    let mut notes = vec![
        "Each line is the variant's median iteration by p99 latency; the maximum (100%) lies \
         beyond the axis."
            .to_string(),
    ];
    if drawable > MAX_SPECTRA {
        notes.push(format!(
            "{MAX_SPECTRA} of {drawable} rows' spectra are drawn."
        ));
    }
    block("Latency percentile spectrum", &charts, &notes)
}

fn timelines(result: &RunResult, page: &Variants) -> String {
    let rows: Vec<_> = result
        .rows
        .iter()
        .filter(|r| r.iterations.iter().any(|i| i.series.is_some()))
        .collect();
    let mut out = String::new();
    let mut capped = false;
    for row in rows.iter().take(MAX_TIMELINE_ROWS) {
        let (with, drawn) = timeline::drawn(row);
        capped |= drawn.len() < with;
        let charts = timeline::row_charts(row, &result.measurements, page.colour(&row.variant));
        out.push_str(&block(
            &format!("Timelines · {}", row.key_in(&result.scenario).label()),
            &charts,
            &[],
        ));
    }
    if out.is_empty() {
        return out;
    }
    out.push_str(&format!(
        "<p class=\"note\">Each line is one iteration (dashed grey: failed or excluded); the \
         shaded span is its measured window. Lines longer than {} points are thinned, keeping \
         each slice's lowest and highest value.</p>\n",
        thin::MAX_POINTS
    ));
    let recorded_thinned = rows
        .iter()
        .flat_map(|r| r.iterations.iter())
        .any(|i| i.series.as_ref().is_some_and(|s| s.thinned_from.is_some()));
    if recorded_thinned {
        out.push_str(
            "<p class=\"note\">Some iterations took more samples than the result keeps: their \
             timelines show the even selection the result holds (its `thinned_from` says how \
             many there were).</p>\n",
        );
    }
    if capped {
        out.push_str(&format!(
            "<p class=\"note\">Rows with more than {} iterations show {} of them, evenly \
             spaced, first and last included.</p>\n",
            thin::MAX_ITERATIONS,
            thin::MAX_ITERATIONS
        ));
    }
    if rows.len() > MAX_TIMELINE_ROWS {
        out.push_str(&format!(
            "<p class=\"note\">Timelines of the first {MAX_TIMELINE_ROWS} of {} rows are \
             drawn.</p>\n",
            rows.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests;
