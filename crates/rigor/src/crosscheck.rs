//! `rigor run --cross-check TOOL`: every row of a load scenario is run twice over, by the
//! built-in engine and by TOOL, as the two variants `engine` and TOOL. So they are interleaved
//! in a shuffled order and compared round by round like any variants, with the same statistics
//! and threshold; afterwards each compared measurement is said to agree, disagree beyond noise,
//! or be undecided, with the cause where one is known for that tool and figure.

use crate::config::{ScenarioPlan, Work};
use crate::result::{RunResult, Verdict};
use crate::tools::{check, Tool, ToolError, ToolSpec};
pub use rigor_model::result::{CrossCheck, Finding};

/// The baseline variant's name: the built-in engine.
pub const ENGINE: &str = "engine";

/// `--cross-check "TOOL [ARGS…]"`: the tool, and options for it (`"h2load --h1"`).
pub fn parse(text: &str) -> Result<ToolSpec, ToolError> {
    let words =
        shlex::split(text).ok_or_else(|| format!("--cross-check `{text}`: an unclosed quote"))?;
    let (name, args) = words
        .split_first()
        .ok_or("--cross-check: name a tool (wrk, wrk2, bombardier, h2load, oha)")?;
    let tool = Tool::from_name(name).map_err(|e| format!("--cross-check: {e}"))?;
    Ok(ToolSpec {
        tool,
        args: args.to_vec(),
    })
}

/// Splits each row of `plan` into an `engine` row and a `tool` row (same application, same
/// load keys). A tool that cannot pipeline runs its row unpipelined, which the findings then
/// name as the cause of what differs; every other key the tool cannot honour is an error.
pub fn split(
    scenario: &str,
    plan: ScenarioPlan,
    tool: &ToolSpec,
) -> Result<ScenarioPlan, Vec<String>> {
    let name = tool.tool.name();
    let own: Vec<&str> = plan.variants.iter().flatten().map(String::as_str).collect();
    let mut problems = Vec::new();
    if own.len() > 1 {
        problems.push(format!(
            "--cross-check {name}: scenario `{scenario}` compares its own variants ({}); the \
             cross-check makes `{ENGINE}` and `{name}` its variants: pick one of its own with \
             --variants NAME",
            own.join(", ")
        ));
    }
    let mut rows = Vec::new();
    for row in plan.rows {
        let Work::Load(load) = &row.work else {
            problems.push(format!(
                "--cross-check {name}: scenario `{scenario}` runs a command job, which has no load \
                 to cross-check"
            ));
            break;
        };
        if !load.hosts.is_empty() {
            problems.push(format!(
                "--cross-check {name}: scenario `{scenario}` puts its load on other hosts; the \
                 cross-check compares the engine and the tool from rigor's own machine (drop \
                 the profile's load hosts, or set `tool` on the load job to run {name} there)"
            ));
            break;
        }
        let mut engine = row.clone();
        let mut by_tool = row;
        engine.variant = Some(ENGINE.into());
        by_tool.variant = Some(name.into());
        if let Work::Load(l) = &mut engine.work {
            l.tool = None;
        }
        if let Work::Load(l) = &mut by_tool.work {
            if tool.tool != Tool::H2load {
                l.spec.pipeline = 1;
            }
            for (key, why) in check(tool.tool, &l.spec) {
                let m = format!("--cross-check {name}: scenario `{scenario}`: `{key}`: {why}");
                if !problems.contains(&m) {
                    problems.push(m);
                }
            }
            l.tool = Some(tool.clone());
        }
        rows.push(engine);
        rows.push(by_tool);
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(ScenarioPlan {
        iterations: plan.iterations,
        cpu_profile: plan.cpu_profile,
        variants: vec![Some(ENGINE.into()), Some(name.into())],
        rows,
    })
}

/// The findings, read from the run's comparisons of `tool` against `engine`.
/// Only the load's figures are cross-checked: the application's are the server's, whichever
/// client drove it (they stay in the run's comparisons).
pub fn findings(result: &RunResult, tool: Tool, pipelined: bool) -> CrossCheck {
    let compared: Vec<_> = result
        .comparisons
        .iter()
        .filter(|c| c.baseline == ENGINE && c.candidate == tool.name())
        .filter(|c| c.measurement.starts_with("load."))
        .collect();
    // Whether `variant` measured any load figure in the comparison's row: where every one of
    // its iterations failed, a figure it lacks says nothing of what it reports.
    let measured = |variant: &str, c: &crate::result::Comparison| {
        result.rows.iter().any(|r| {
            r.variant.as_deref() == Some(variant)
                && (r.scenario.is_empty() || r.scenario == c.scenario)
                && r.variables == c.row
                && r.summary.keys().any(|k| k.starts_with("load."))
        })
    };
    let one_sided = |side: &dyn Fn(&crate::result::Comparison) -> bool| {
        let mut ids: Vec<String> = compared
            .iter()
            .filter(|c| side(c))
            .map(|c| c.measurement.clone())
            .collect();
        ids.dedup();
        ids
    };
    let engine_only = one_sided(&|c| {
        c.baseline_median.is_some() && c.candidate_median.is_none() && measured(tool.name(), c)
    });
    let tool_only = one_sided(&|c| {
        c.baseline_median.is_none() && c.candidate_median.is_some() && measured(ENGINE, c)
    });
    let findings = compared
        .iter()
        .filter(|c| c.baseline_median.is_some() && c.candidate_median.is_some())
        .map(|c| {
            let outcome = match c.verdict {
                Verdict::Regression | Verdict::Improvement => "disagree",
                Verdict::NoChange => "agree",
                Verdict::Inconclusive => "undecided",
            };
            Finding {
                scenario: c.scenario.clone(),
                row: c.row.clone(),
                measurement: c.measurement.clone(),
                engine_median: c.baseline_median,
                tool_median: c.candidate_median,
                change_pct: c.change_pct,
                outcome: outcome.into(),
                why: (outcome != "agree")
                    .then(|| cause(tool, &c.measurement, pipelined))
                    .flatten(),
            }
        })
        .collect();
    CrossCheck {
        tool: tool.name().into(),
        findings,
        engine_only,
        tool_only,
    }
}

/// What is known to make `tool` read `id` differently from the engine.
pub fn cause(tool: Tool, id: &str, pipelined: bool) -> Option<String> {
    use crate::measurements::ids;
    let latency = [
        ids::LOAD_LATENCY_MEAN,
        ids::LOAD_LATENCY_P50,
        ids::LOAD_LATENCY_P75,
        ids::LOAD_LATENCY_P90,
        ids::LOAD_LATENCY_P99,
        ids::LOAD_LATENCY_P999,
        ids::LOAD_LATENCY_MAX,
    ]
    .contains(&id);
    let text = match (tool, id) {
        (_, "load.cpu") => "the clients are different programs: each one's own CPU is its cost, \
                            not a reading of the same thing"
            .to_string(),
        _ if pipelined && tool != Tool::H2load && !id.starts_with("app.") => format!(
            "{} does not pipeline: it ran this row with one request in flight per connection \
             where the engine pipelined, so it offered a different load",
            tool.name()
        ),
        (Tool::Wrk, _) if latency => {
            "wrk back-fills its latency after the run (coordinated-omission \
             correction: each sample longer than a connection's mean interval adds samples for \
             the requests it held up), so its whole distribution above that interval counts \
             requests never sent, while the engine's closed model records real requests only; \
             wrk also prints latencies to 2 decimals of their unit"
                .to_string()
        }
        (Tool::Wrk2, _) if latency => "wrk2 counts from each request's intended send time at its \
             -R rate (as the engine does with a `rate`), calibrates for its first 10 s, and \
             prints latencies to 2 decimals of their unit"
            .to_string(),
        (Tool::H2load, _) if latency => "h2load's `time for request` runs from the request's \
             start to its stream's close (a pipelined request's wait included), and it prints no \
             percentiles, only mean and max"
            .to_string(),
        (Tool::Oha, "load.throughput") => {
            "oha counts response bodies only; the engine counts every byte read".to_string()
        }
        (_, "load.rps" | "load.requests" | "load.throughput") => format!(
            "{} times its own run (connection set-up included) and warms up in a separate run \
             on new connections, so its window is not the engine's; and where the client shares \
             the machine with the server, a client that costs more CPU per request leaves the \
             server less (compare load.cpu against load.rps)",
            tool.name()
        ),
        _ if id.starts_with("app.") => format!(
            "the application itself behaved differently under {} (connections, request bytes \
             and pacing differ between the clients)",
            tool.name()
        ),
        _ => return None,
    };
    Some(text)
}

/// The cross-check as text for the terminal: one line per measurement that disagreed or could
/// not be decided, then a count of those that agreed.
pub fn render(c: &CrossCheck) -> String {
    let mut s = format!("cross-check: {} against the engine\n", c.tool);
    let mut agreed = 0;
    for f in &c.findings {
        if f.outcome == "agree" {
            agreed += 1;
            continue;
        }
        let num = |v: Option<f64>| v.map_or("-".to_string(), crate::report::format::number);
        let row = f
            .row
            .iter()
            .map(|(k, v)| format!("{k}={v} "))
            .collect::<String>();
        let why = match (&f.why, f.outcome.as_str()) {
            (Some(w), "disagree") => format!("\n      why: {w}"),
            _ => String::new(),
        };
        s.push_str(&format!(
            "  {} {row}{}: engine {}, {} {} ({}){why}\n",
            f.scenario,
            f.measurement,
            num(f.engine_median),
            c.tool,
            num(f.tool_median),
            f.change_pct
                .map_or("-".into(), |p| format!("{p:+.1}%, {}", f.outcome)),
        ));
    }
    if c.findings.is_empty() && c.engine_only.is_empty() && c.tool_only.is_empty() {
        s.push_str(
            "  nothing to compare: the engine or the tool measured no load figure (see the \
             failed iterations)\n",
        );
        return s;
    }
    s.push_str(&format!(
        "  {agreed} of {} compared load measurements agree within the threshold; \
         `undecided` needs more iterations (-i, --until-conclusive)\n",
        c.findings.len()
    ));
    for (who, ids) in [(ENGINE, &c.engine_only), (c.tool.as_str(), &c.tool_only)] {
        if !ids.is_empty() {
            s.push_str(&format!("  only {who} reports: {}\n", ids.join(", ")));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_names_a_tool_and_its_options() {
        let t = parse("h2load --h1").unwrap();
        assert_eq!((t.tool, t.args), (Tool::H2load, vec!["--h1".to_string()]));
        assert!(parse("ab")
            .unwrap_err()
            .0
            .contains("unknown load tool `ab`"));
        assert!(parse("").unwrap_err().0.contains("name a tool"));
        assert!(parse("wrk '").unwrap_err().0.contains("unclosed quote"));
    }

    #[test]
    fn causes_are_named_where_known() {
        for id in ["load.latency.p50", "load.latency.p99", "load.latency.max"] {
            assert!(cause(Tool::Wrk, id, false).unwrap().contains("back-fills"));
        }
        assert!(cause(Tool::Oha, "load.rps", true)
            .unwrap()
            .contains("does not pipeline"));
        assert!(cause(Tool::H2load, "load.latency.mean", true)
            .unwrap()
            .contains("stream's close"));
        assert_eq!(cause(Tool::Wrk, "load.bad_responses", false), None);
    }
}
