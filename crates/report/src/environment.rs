//! The machine table: what the environment probe recorded, shown compactly, and the fields that
//! differ between saved results (`rigor compare` warns about them).
//!
//! The probe's JSON may grow or change shape, so every key is read defensively: known keys get a
//! friendly label and come first, anything else is flattened (`jobs.hello.git_commit`) and shown
//! as it is; absent or empty values are skipped.

use super::{Cell, Table};
pub use rigor_model::environment::flatten;
use serde_json::Value;

/// Known keys, in the order a reader wants them, with their label.
const KNOWN: &[(&str, &str)] = &[
    ("rigor_version", "rigor"),
    ("hostname", "Host"),
    ("os", "OS"),
    ("kernel", "Kernel"),
    ("arch", "Architecture"),
    ("virtualization", "Virtualization"),
    ("container", "Container"),
    ("cpu_model", "CPU"),
    ("logical_cores", "Logical cores"),
    ("physical_cores", "Physical cores"),
    ("sockets", "Sockets"),
    ("smt_active", "SMT active"),
    ("isolated_cpus", "Isolated CPUs"),
    ("memory_mib", "Memory (MiB)"),
    ("memory_available_mib", "Memory available (MiB)"),
    ("governor", "Governor"),
    ("scaling_driver", "Scaling driver"),
    ("turbo", "Turbo"),
    ("aslr", "ASLR (randomize_va_space)"),
    ("transparent_hugepages", "Transparent hugepages"),
    ("clocksource", "Clocksource"),
    ("cgroup_version", "cgroup version"),
    ("cgroup", "cgroup"),
    (LOAD_AVERAGE, LOAD_AVERAGE),
    ("runnable_threads", "Runnable threads"),
    ("cpu_pressure_some_avg10", "CPU pressure (some, 10 s)"),
    ("cpu_pressure_some_avg60", "CPU pressure (some, 60 s)"),
];

/// The three load averages read as one line.
const LOAD_AVERAGE: &str = "Load average (1/5/15 min)";

/// Longest value shown before it is cut (long env values and command lines would swamp the table).
const MAX_VALUE_CHARS: usize = 100;

/// Known keys get their label; per-job entries read `hello git commit`; the rest stay paths.
fn label(path: &str) -> String {
    if let Some((_, l)) = KNOWN.iter().find(|(k, _)| *k == path) {
        return l.to_string();
    }
    match path.strip_prefix("jobs.") {
        Some(rest) => rest.replace('.', " "),
        None => path.to_string(),
    }
}

/// Folds `load_avg_1m/5m/15m` into one `a / b / c` field.
fn fold_load_average(fields: &mut Vec<(String, String)>) {
    let keys = ["load_avg_1m", "load_avg_5m", "load_avg_15m"];
    let values: Vec<String> = keys
        .iter()
        .filter_map(|k| fields.iter().find(|(f, _)| f == k).map(|(_, v)| v.clone()))
        .collect();
    if values.is_empty() {
        return;
    }
    let at = fields
        .iter()
        .position(|(f, _)| keys.contains(&f.as_str()))
        .unwrap_or(0);
    fields.retain(|(f, _)| !keys.contains(&f.as_str()));
    fields.insert(
        at.min(fields.len()),
        (LOAD_AVERAGE.to_string(), values.join(" / ")),
    );
}

fn shorten(s: &str) -> String {
    if s.chars().count() > MAX_VALUE_CHARS {
        let cut: String = s.chars().take(MAX_VALUE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        s.to_string()
    }
}

/// The two-column `environment` table (crank style), `rigor` version first; `None` when there is
/// nothing to show.
pub fn table(env: &Value, rigor_version: &str) -> Option<Table> {
    let mut fields = flatten(env);
    fold_load_average(&mut fields);
    // Known keys first, in KNOWN order; the rest keep the probe's order.
    fields.sort_by_key(|(k, _)| KNOWN.iter().position(|(n, _)| n == k).unwrap_or(usize::MAX));
    let mut rows = Vec::new();
    if !rigor_version.is_empty() && !fields.iter().any(|(k, _)| k == "rigor_version") {
        rows.push(vec![Cell::plain("rigor"), Cell::plain(rigor_version)]);
    }
    for (k, v) in fields {
        rows.push(vec![Cell::plain(label(&k)), Cell::plain(shorten(&v))]);
    }
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        header: vec!["environment".into(), String::new()],
        rows,
        numeric: false,
        droppable: Vec::new(),
    })
}

/// The fields of the one-line summary, in order, with how each is introduced.
const SUMMARY: &[(&str, &str)] = &[
    ("hostname", ""),
    ("os", ""),
    ("kernel", "kernel "),
    ("arch", ""),
    ("cpu_model", ""),
    ("logical_cores", "logical cores "),
    ("memory_mib", "MiB "),
    ("governor", "governor "),
    ("virtualization", "virtualization "),
    ("container", "container "),
    ("load_avg_1m", "load "),
];

/// The environment in one line for the terminal: host, system, CPU, cores, memory, governor and
/// load, the rigor version first; `None` when nothing is known.
pub fn summary(env: &Value, rigor_version: &str) -> Option<String> {
    let fields = flatten(env);
    let mut parts: Vec<String> = Vec::new();
    if !rigor_version.is_empty() {
        parts.push(format!("rigor {rigor_version}"));
    }
    for (key, intro) in SUMMARY {
        let Some((_, v)) = fields.iter().find(|(k, _)| k == key) else {
            continue;
        };
        let v = shorten(v);
        parts.push(match *intro {
            "" => v,
            "logical cores " => format!("{v} logical cores"),
            "MiB " => format!("{v} MiB"),
            intro => format!("{intro}{v}"),
        });
    }
    (!parts.is_empty()).then(|| format!("machine: {}", parts.join(" · ")))
}

/// The environment as the view asks: the whole table, or on the terminal the summary line and
/// how to see the rest.
pub fn blocks(env: &Value, rigor_version: &str, view: &super::View) -> Vec<super::Block> {
    if view.full_environment() {
        return table(env, rigor_version)
            .map(super::Block::Table)
            .into_iter()
            .collect();
    }
    summary(env, rigor_version)
        .map(|s| super::Block::Text(format!("{s} (--verbose: the whole environment)")))
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn known_keys_first_then_the_rest_flattened() {
        // The shape run/environment.rs writes (probe fields + rigor_version, cgroup, jobs).
        let env = json!({
            "aaa_custom": "x",
            "kernel": "6.8.0",
            "hostname": "bench1",
            "turbo": true,
            "memory_mib": 15_872,
            "load_avg_1m": 0.5, "load_avg_5m": 0.25, "load_avg_15m": 0.1,
            "missing": null,
            "empty": "",
            "jobs": {"hello": {"git": {"commit": "abc123", "dirty": false}, "env": {"RUST_LOG": "off"}}},
            "cpus_allowed": [0, 1],
        });
        let t = table(&env, "0.1.0").unwrap();
        let rows: Vec<(String, String)> = t
            .rows
            .iter()
            .map(|r| (r[0].text.clone(), r[1].text.clone()))
            .collect();
        let pairs: Vec<(&str, &str)> = rows.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(
            pairs,
            vec![
                ("rigor", "0.1.0"),
                ("Host", "bench1"),
                ("Kernel", "6.8.0"),
                ("Memory (MiB)", "15,872"),
                ("Turbo", "yes"),
                ("Load average (1/5/15 min)", "0.50 / 0.25 / 0.10"),
                ("aaa_custom", "x"),
                ("cpus_allowed", "0, 1"),
                ("hello env RUST_LOG", "off"),
                ("hello git commit", "abc123"),
                ("hello git dirty", "no"),
            ]
        );
    }

    #[test]
    fn the_terminal_sums_the_machine_up_in_a_line_unless_verbose() {
        let env = json!({
            "hostname": "bench1", "kernel": "6.8.0", "os": "Ubuntu 24.04", "arch": "x86_64",
            "cpu_model": "AMD EPYC", "logical_cores": 2, "memory_mib": 15_872,
            "governor": "performance", "load_avg_1m": 0.5, "turbo": true,
        });
        assert_eq!(
            summary(&env, "0.1.0").unwrap(),
            "machine: rigor 0.1.0 · bench1 · Ubuntu 24.04 · kernel 6.8.0 · x86_64 · AMD EPYC · \
             2 logical cores · 15,872 MiB · governor performance · load 0.50"
        );
        let terminal = super::super::View::default().on_terminal();
        let [super::super::Block::Text(line)] = &blocks(&env, "0.1.0", &terminal)[..] else {
            panic!("not one line")
        };
        assert!(
            line.ends_with("(--verbose: the whole environment)"),
            "{line}"
        );
        let verbose = super::super::View {
            verbose: true,
            ..terminal.clone()
        };
        for view in [verbose, super::super::View::default()] {
            assert!(matches!(
                &blocks(&env, "0.1.0", &view)[..],
                [super::super::Block::Table(t)] if t.rows.iter().any(|r| r[0].text == "Turbo")
            ));
        }
        assert!(blocks(&Value::Null, "", &terminal).is_empty());
    }

    #[test]
    fn nothing_to_show() {
        assert!(table(&Value::Null, "").is_none());
    }
}
