//! `rigor load --find-rate`: the search for the rate the service holds, probe by probe with
//! the engine, each probe's line as it ends, then the answer and the table of probes, and
//! `--json` with `load.capacity`, the search and the engine's report at the rate found.

use crate::exit::Exit;
use crate::failure::Failure;
use crate::load_output::{human, write_doc, LOAD_SCHEMA};
use crate::measurements::ids;
use crate::options::load::LoadOptions;
use crate::report::capacity_text;
use rigor_load::capacity::{find_rate, Capacity, FindRate, Found, Outcome, Stopped};
use rigor_load::{Live, LoadError};

/// Runs the search `find` describes on `options.spec`: 0 with an answer (settled, at least
/// the maximum, or unsettled with the interval it stood at), 1 when no rate met the
/// objective (the probes and `--json` are still written), 130 when interrupted (after
/// printing the probes made), a failure when the engine failed.
pub fn run(options: &LoadOptions, find: &FindRate) -> Result<Exit, Failure> {
    let spec = &options.spec;
    human(options, &capacity_text::banner(spec, find));
    human(options, &capacity_text::header());
    crate::interrupt::install();
    let live = Live::default();
    let found = find_rate(spec, find, &live, crate::interrupt::flag(), |row| {
        human(options, &capacity_text::probe_line(row));
    });
    let (found, interrupted) = match found {
        Ok(found) => (found, false),
        Err(Stopped {
            so_far,
            cause: LoadError::Interrupted,
        }) => (
            Found {
                capacity: *so_far,
                at_capacity: None,
            },
            true,
        ),
        Err(Stopped { cause, .. }) => return Err(anyhow::anyhow!("{cause}").into()),
    };
    human(options, "\n");
    human(options, &capacity_text::summary(&found.capacity));
    if let Some(out) = &options.json {
        write_doc(&document(&found), out)?;
    }
    if interrupted {
        crate::console::err(
            "rigor: capacity search interrupted; the probes above are the ones it completed",
        );
        return Ok(Exit::Interrupted);
    }
    if found.capacity.outcome == Outcome::NeverMet {
        crate::console::err(&format!(
            "rigor: no rate met {}, down to {} req/s (the lowest rate the search probes: each \
             probe is due at least {} requests): there is no capacity for this objective",
            found.capacity.objective,
            capacity_text::rate(found.capacity.high.unwrap_or(find.start)),
            rigor_load::capacity::MIN_PROBE_REQUESTS
        ));
        return Ok(Exit::Failed);
    }
    if found.capacity.outcome == Outcome::Unsettled {
        crate::console::err(&format!(
            "rigor: the capacity search did not settle within {} probes: the service's verdicts \
             kept changing at the same rates (a noisy machine, or a service whose latency is not \
             monotone in its load); the interval above is where it stood",
            rigor_load::capacity::MAX_PROBES
        ));
    }
    Ok(Exit::Success)
}

/// `rigor.load.v1` for a search: `load.capacity` (absent when no rate met the objective),
/// the search (`capacity`), and the engine's report of the last probe at the rate found.
fn document(found: &Found) -> serde_json::Value {
    serde_json::json!({
        "schema": LOAD_SCHEMA,
        "measurements": measurements(&found.capacity),
        "capacity": found.capacity,
        "report": found.at_capacity,
    })
}

/// `load.capacity`, when a rate met the objective.
pub fn measurements(c: &Capacity) -> std::collections::BTreeMap<&'static str, f64> {
    c.capacity_rps
        .map(|r| (ids::LOAD_CAPACITY, r))
        .into_iter()
        .collect()
}
