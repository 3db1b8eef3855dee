//! The query behind `rigor history`: one point per run and row (the median of the row's kept
//! iterations in that run), grouped into series by scenario, row variables, variant and
//! measurement, each with the change points E-divisive means finds in it.

use super::error::HistoryError;
use super::sql::{Sql, Value};
use std::collections::BTreeMap;

/// What to show: a scenario, measurements, runs since an instant.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub scenario: Option<String>,
    /// Empty: each series' default (see [`default_measurements`]).
    pub measurements: Vec<String>,
    /// Seconds since the epoch; runs that started before are left out.
    pub since: Option<i64>,
}

pub use rigor_model::history::{Change, HistorySeries, Point};

/// Why there is nothing to show.
#[derive(Debug, Clone, PartialEq)]
pub enum Nothing {
    /// The store holds no run at all.
    EmptyStore,
    /// A name the user gave matches nothing; the message lists what exists.
    Unknown(String),
    /// The store has runs, but none in the window or with kept iterations.
    NoPoints(String),
}

/// One kept iteration's figure with the run and row it belongs to.
struct Sample {
    run: i64,
    started_at: String,
    scenario: String,
    variables: String,
    variant: Option<String>,
    measurement: String,
    value: f64,
}

/// The series of the store that match `filter`, change points found, or why there are none.
pub fn load(
    tx: &mut dyn Sql,
    filter: &Filter,
) -> Result<Result<Vec<HistorySeries>, Nothing>, HistoryError> {
    let samples = samples(tx, filter)?;
    if samples.is_empty() {
        return Ok(Err(explain_nothing(tx, filter)?));
    }
    // `-m load.rps,typo` must not show load.rps alone as if the typo were nothing: a name no
    // stored run measured is refused whatever else matched.
    let unseen = filter
        .measurements
        .iter()
        .any(|m| !samples.iter().any(|s| &s.measurement == m));
    if unseen {
        if let unknown @ Nothing::Unknown(_) = explain_nothing(tx, filter)? {
            return Ok(Err(unknown));
        }
    }
    let commits = commits(tx)?;
    let series = build(samples, &commits, filter);
    if series.is_empty() {
        return Ok(Err(Nothing::NoPoints(match filter.since {
            Some(_) => "no run matches --since: every stored run started before it".into(),
            None => "no stored run has a kept iteration to show".into(),
        })));
    }
    Ok(Ok(series))
}

fn samples(tx: &mut dyn Sql, filter: &Filter) -> Result<Vec<Sample>, HistoryError> {
    let mut sql = String::from(
        "SELECT r.id, r.started_at, w.scenario, w.variables, w.variant, m.measurement, m.value \
         FROM runs r JOIN run_rows w ON w.run_id = r.id \
         JOIN iterations i ON i.row_id = w.id \
         JOIN measurements m ON m.iteration_id = i.id \
         WHERE i.excluded IS NULL AND i.error IS NULL",
    );
    let mut params = Vec::new();
    if let Some(s) = &filter.scenario {
        sql.push_str(" AND w.scenario = ?");
        params.push(Value::text(s));
    }
    if !filter.measurements.is_empty() {
        let marks = vec!["?"; filter.measurements.len()].join(", ");
        sql.push_str(&format!(" AND m.measurement IN ({marks})"));
        params.extend(filter.measurements.iter().map(Value::text));
    }
    sql.push_str(" ORDER BY r.started_at, r.id, w.position, i.idx");
    let rows = tx.query(&sql, &params)?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            Some(Sample {
                run: r.first()?.as_i64()?,
                started_at: r.get(1)?.as_text()?.to_string(),
                scenario: r.get(2)?.as_text()?.to_string(),
                variables: r.get(3)?.as_text()?.to_string(),
                variant: r.get(4)?.as_text().map(str::to_string),
                measurement: r.get(5)?.as_text()?.to_string(),
                value: r.get(6)?.as_f64()?,
            })
        })
        .collect())
}

/// Each run's commit (distinct commits of its job folders joined by `,`) and whether any of
/// those folders was dirty.
fn commits(tx: &mut dyn Sql) -> Result<BTreeMap<i64, (String, bool)>, HistoryError> {
    let rows = tx.query(
        "SELECT run_id, commit_hash, dirty FROM run_commits ORDER BY run_id, job",
        &[],
    )?;
    let mut out: BTreeMap<i64, (Vec<String>, bool)> = BTreeMap::new();
    for r in rows {
        let (Some(run), Some(commit)) = (r[0].as_i64(), r[1].as_text()) else {
            continue;
        };
        let e = out.entry(run).or_default();
        if !e.0.iter().any(|c| c == commit) {
            e.0.push(commit.to_string());
        }
        e.1 |= r[2].as_i64().unwrap_or(0) != 0;
    }
    Ok(out
        .into_iter()
        .map(|(run, (c, dirty))| (run, (c.join(","), dirty)))
        .collect())
}

/// What the user asked for that matches nothing, listing what exists; or an empty store.
fn explain_nothing(tx: &mut dyn Sql, filter: &Filter) -> Result<Nothing, HistoryError> {
    let runs = super::sql::first_int(&tx.query("SELECT COUNT(*) FROM runs", &[])?).unwrap_or(0);
    if runs == 0 {
        return Ok(Nothing::EmptyStore);
    }
    let texts = |rows: Vec<Vec<Value>>| -> Vec<String> {
        rows.iter()
            .filter_map(|r| r.first()?.as_text().map(str::to_string))
            .collect()
    };
    let scenarios = texts(tx.query(
        "SELECT DISTINCT scenario FROM run_rows ORDER BY scenario",
        &[],
    )?);
    if let Some(s) = &filter.scenario {
        if !scenarios.contains(s) {
            return Ok(Nothing::Unknown(format!(
                "no stored run has scenario `{s}`; the store has: {}",
                scenarios.join(", ")
            )));
        }
    }
    let (sql, params) = match &filter.scenario {
        Some(s) => (
            "SELECT DISTINCT m.measurement FROM measurements m \
             JOIN iterations i ON i.id = m.iteration_id JOIN run_rows w ON w.id = i.row_id \
             WHERE w.scenario = ? ORDER BY m.measurement",
            vec![Value::text(s)],
        ),
        None => (
            "SELECT DISTINCT measurement FROM measurements ORDER BY measurement",
            vec![],
        ),
    };
    let ids = texts(tx.query(sql, &params)?);
    let unknown: Vec<&String> = filter
        .measurements
        .iter()
        .filter(|m| !ids.contains(*m))
        .collect();
    if !unknown.is_empty() {
        let names: Vec<String> = unknown.iter().map(|m| format!("`{m}`")).collect();
        let scope = match &filter.scenario {
            Some(s) => format!("scenario `{s}`"),
            None => "the store".to_string(),
        };
        return Ok(Nothing::Unknown(format!(
            "no stored run measured {}; {scope} has: {}",
            names.join(", "),
            ids.join(", ")
        )));
    }
    Ok(Nothing::NoPoints(
        "no kept iteration (every one failed or was excluded) matches".into(),
    ))
}

type RowId = (String, String, Option<String>);

/// The samples grouped into series: points per run in start order, window applied, default
/// measurements chosen, change points found.
fn build(
    samples: Vec<Sample>,
    commits: &BTreeMap<i64, (String, bool)>,
    filter: &Filter,
) -> Vec<HistorySeries> {
    // (scenario, variables, variant) → measurement → (started_at, run) → values.
    type Runs = BTreeMap<(String, i64), Vec<f64>>;
    let mut grouped: BTreeMap<RowId, BTreeMap<String, Runs>> = BTreeMap::new();
    for s in samples {
        if let Some(since) = filter.since {
            if super::time::parse(&s.started_at).is_ok_and(|t| t < since) {
                continue;
            }
        }
        grouped
            .entry((s.scenario, s.variables, s.variant))
            .or_default()
            .entry(s.measurement)
            .or_default()
            .entry((s.started_at, s.run))
            .or_default()
            .push(s.value);
    }
    let mut out = Vec::new();
    for ((scenario, variables, variant), by_measurement) in grouped {
        let ids: Vec<String> = by_measurement.keys().cloned().collect();
        let chosen = if filter.measurements.is_empty() {
            default_measurements(&ids)
        } else {
            ids
        };
        for id in chosen {
            let Some(runs) = by_measurement.get(&id) else {
                continue;
            };
            let points = points(runs, commits);
            let mut series = HistorySeries {
                scenario: scenario.clone(),
                variables: serde_json::from_str(&variables).unwrap_or_default(),
                variant: variant.clone(),
                unit: unit(&id),
                measurement: id,
                change_points: Vec::new(),
                points,
            };
            series.change_points = super::changes::find(&series.points);
            out.push(series);
        }
    }
    out
}

fn points(
    runs: &BTreeMap<(String, i64), Vec<f64>>,
    commits: &BTreeMap<i64, (String, bool)>,
) -> Vec<Point> {
    runs.iter()
        .filter_map(|((started_at, run), values)| {
            let median = median(values)?;
            let commit = commits.get(run);
            Some(Point {
                run: *run,
                started_at: started_at.clone(),
                commit: commit.map(|c| c.0.clone()),
                dirty: commit.map(|c| c.1),
                median,
                n: values.len(),
            })
        })
        .collect()
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

/// The measurements a series shows when `-m` does not say: what its rows are judged on by
/// default — `load.rps` where the row drove load; else a command's own figures (`cmd.*`);
/// else `app.elapsed`; else every measurement it has.
pub fn default_measurements(ids: &[String]) -> Vec<String> {
    use rigor_model::measurements::ids::{APP_ELAPSED, LOAD_RPS};
    if ids.iter().any(|i| i == LOAD_RPS) {
        return vec![LOAD_RPS.to_string()];
    }
    let cmd: Vec<String> = ids
        .iter()
        .filter(|i| i.starts_with("cmd."))
        .cloned()
        .collect();
    if !cmd.is_empty() {
        return cmd;
    }
    if ids.iter().any(|i| i == APP_ELAPSED) {
        return vec![APP_ELAPSED.to_string()];
    }
    ids.to_vec()
}

/// The unit of a catalogued measurement; empty for one the catalogue does not know.
fn unit(id: &str) -> String {
    rigor_model::measurements::info(id)
        .map(|m| m.unit.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn each_row_shows_what_it_is_judged_on() {
        assert_eq!(
            default_measurements(&ids(&["app.rss", "load.rps", "load.latency.p99"])),
            ids(&["load.rps"])
        );
        assert_eq!(
            default_measurements(&ids(&["app.elapsed", "cmd.ops", "cmd.mps"])),
            ids(&["cmd.ops", "cmd.mps"])
        );
        assert_eq!(
            default_measurements(&ids(&["app.cpu", "app.elapsed"])),
            ids(&["app.elapsed"])
        );
        assert_eq!(default_measurements(&ids(&["x.y"])), ids(&["x.y"]));
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
