//! The bench's verdict, last on the screen: per command against the first, its key figures'
//! change with interval and verdict, and which ran faster by what factor (as hyperfine says
//! it, with the interval hyperfine does not give).

use super::setup::Bench;
use crate::measurements::{self, ids};
use crate::result::{Comparison, RunResult};

/// The figures a command's verdict line shows: how long it ran, its CPU, its memory.
const COMMAND_KEYS: [&str; 3] = [ids::APP_ELAPSED, ids::APP_CPU_TIME, ids::APP_RSS];
/// The figures a server's verdict line shows: throughput, tail latency, memory, CPU.
const SERVER_KEYS: [&str; 4] = [
    ids::LOAD_RPS,
    ids::LOAD_LATENCY_P99,
    ids::APP_RSS,
    ids::APP_CPU_AVG,
];

/// One line per command after the first (its key figures against the first), then one line
/// per command saying which was faster and by how much; empty for a single command.
pub fn lines(result: &RunResult, bench: &Bench) -> Vec<String> {
    let Some((baseline, candidates)) = bench.names.split_first() else {
        return Vec::new();
    };
    let keys: &[&str] = match bench.server {
        None => &COMMAND_KEYS,
        Some(_) => &SERVER_KEYS,
    };
    let speed = keys[0];
    let mut out = Vec::new();
    let mut factors = Vec::new();
    for candidate in candidates {
        if let Some(why) = [baseline, candidate]
            .into_iter()
            .find_map(|name| unmeasured(result, name))
        {
            out.push(format!("{candidate} vs {baseline}: not compared: {why}"));
            continue;
        }
        let found = |id: &str| find(result, baseline, candidate, id);
        let parts: Vec<String> = keys.iter().filter_map(|id| found(id).map(figure)).collect();
        if parts.is_empty() {
            out.push(format!(
                "{candidate} vs {baseline}: not compared (one of them has no measured iteration)"
            ));
            continue;
        }
        out.push(format!("{candidate} vs {baseline}: {}", parts.join(" · ")));
        if let Some(line) = found(speed).and_then(|c| factor(c, bench.server.is_some())) {
            factors.push(line);
        }
    }
    out.extend(factors);
    out
}

/// Why the command named `name` has nothing to compare: its first failure, or that no
/// iteration of it ran.
fn unmeasured(result: &RunResult, name: &str) -> Option<String> {
    let row = result
        .rows
        .iter()
        .find(|r| r.variant.as_deref() == Some(name) && r.variables.is_empty())?;
    if row.kept_iterations().next().is_some() {
        return None;
    }
    // Only the error's first line: the rest is the output's tail, already printed with the
    // iteration's error, and the verdict stays one line per command.
    let first = row
        .iterations
        .iter()
        .find_map(|it| it.error.as_deref())
        .map(|e| e.lines().next().unwrap_or_default().trim_end());
    Some(match first {
        Some(e) => format!("every iteration of {name} failed (first: {e})"),
        None => format!("no iteration of {name} was measured"),
    })
}

/// The comparison of `candidate` against `baseline` on `id`, of the command's own row.
fn find<'a>(
    result: &'a RunResult,
    baseline: &str,
    candidate: &str,
    id: &str,
) -> Option<&'a Comparison> {
    result.comparisons.iter().find(|c| {
        c.baseline == baseline
            && c.candidate == candidate
            && c.measurement == id
            && c.row.is_empty()
    })
}

/// `Elapsed Time +30.1% [+28.0%, +32.3%] regression`; a figure judged on its absolute floor
/// (a small working set) as every report shows it, `Max Working Set +0.10 MiB no change`: a %
/// interval of a tiny baseline would read as a change its verdict denies.
fn figure(c: &Comparison) -> String {
    let info = measurements::info(&c.measurement);
    let name = info
        .map(|m| m.name.to_string())
        .unwrap_or_else(|| c.measurement.clone());
    if c.floor.is_some() {
        let unit = info
            .map(|m| m.unit)
            .filter(|u| !u.is_empty() && *u != "count")
            .map(|u| format!(" {u}"))
            .unwrap_or_default();
        let change = crate::report::change_text(c);
        return format!("{name} {change}{unit} {}", c.verdict.as_str());
    }
    let change = c.change_pct.map(pct).unwrap_or_else(|| "n/a".into());
    let interval = match (c.ci_low_pct, c.ci_high_pct) {
        (Some(lo), Some(hi)) => format!(" [{}, {}]", pct(lo), pct(hi)),
        _ => String::new(),
    };
    format!("{name} {change}{interval} {}", c.verdict.as_str())
}

/// `A ran 1.30× faster than B [1.28, 1.32] (regression)`, from the change of the candidate
/// against the baseline: of the elapsed time, or with a server of its requests per second.
fn factor(c: &Comparison, server: bool) -> Option<String> {
    let ratio = 1.0 + c.change_pct? / 100.0;
    let (lo, hi) = (1.0 + c.ci_low_pct? / 100.0, 1.0 + c.ci_high_pct? / 100.0);
    if ratio <= 0.0 || lo <= 0.0 {
        return None;
    }
    // With a server, more requests per second is faster: the ratio turns over.
    let (ratio, lo, hi) = if server {
        (1.0 / ratio, 1.0 / hi, 1.0 / lo)
    } else {
        (ratio, lo, hi)
    };
    let verdict = c.verdict.as_str();
    let (b, k) = (&c.baseline, &c.candidate);
    Some(if ratio >= 1.0 {
        format!("{b} ran {ratio:.2}× faster than {k} [{lo:.2}, {hi:.2}] ({verdict})")
    } else {
        format!(
            "{k} ran {:.2}× faster than {b} [{:.2}, {:.2}] ({verdict})",
            1.0 / ratio,
            1.0 / hi,
            1.0 / lo
        )
    })
}

/// `+1.2%`, `-30.0%`.
fn pct(v: f64) -> String {
    format!("{v:+.1}%")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Verdict;

    fn comparison(change: f64, lo: f64, hi: f64, verdict: Verdict) -> Comparison {
        let mut c: Comparison = serde_json::from_value(serde_json::json!({
            "measurement": "app.elapsed", "baseline": "A", "candidate": "B",
            "baseline_median": 100.0, "candidate_median": 100.0 + change,
            "change_pct": change, "ci_low_pct": lo, "ci_high_pct": hi, "p_value": 0.01,
            "verdict": "inconclusive"
        }))
        .unwrap();
        c.verdict = verdict;
        c
    }

    /// A slower candidate makes the baseline the faster one; a faster candidate turns the
    /// factor and its interval over.
    #[test]
    fn the_faster_side_is_named_with_its_interval() {
        let slower = comparison(30.0, 25.0, 35.0, Verdict::Regression);
        assert_eq!(
            factor(&slower, false).unwrap(),
            "A ran 1.30× faster than B [1.25, 1.35] (regression)"
        );
        let faster = comparison(-20.0, -25.0, -15.0, Verdict::Improvement);
        assert_eq!(
            factor(&faster, false).unwrap(),
            "B ran 1.25× faster than A [1.18, 1.33] (improvement)"
        );
        // Requests per second: 20% fewer is slower.
        assert!(factor(&faster, true)
            .unwrap()
            .starts_with("A ran 1.25× faster than B"));
        assert_eq!(
            figure(&slower),
            "Elapsed Time +30.0% [+25.0%, +35.0%] regression"
        );
        // A working set judged on its floor: its difference in MiB, as the JSON's medians
        // give it, and no % interval beside a `no change`.
        let mut small: Comparison = serde_json::from_value(serde_json::json!({
            "measurement": "app.rss", "baseline": "A", "candidate": "B",
            "baseline_median": 1.0, "candidate_median": 1.1, "floor": 0.25,
            "change_pct": 10.0, "ci_low_pct": 8.0, "ci_high_pct": 12.0, "p_value": 0.01,
            "verdict": "inconclusive"
        }))
        .unwrap();
        small.verdict = Verdict::NoChange;
        assert_eq!(figure(&small), "Max Working Set +0.10 MiB no change");
    }
}
