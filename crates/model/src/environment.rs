//! The recorded environment read as flat `(path, value)` pairs, and the fields that differ
//! between runs: what the machine table shows and what `rigor compare` warns about. The probe's
//! JSON may grow or change shape, so every key is read defensively.

use crate::format;
use serde_json::Value;

/// Flattens the environment into `(path, value)` pairs: objects as `a.b`, arrays of scalars joined
/// by `, `, other arrays indexed (`a.0.b`); nulls and empty strings are left out.
pub fn flatten(env: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(env, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut Vec<(String, String)>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match v {
        Value::Null => {}
        Value::Object(map) => {
            for (k, v) in map {
                walk(v, join(k), out);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let parts: Vec<String> = items.iter().filter_map(scalar).collect();
            if !parts.is_empty() {
                out.push((path, parts.join(", ")));
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, join(&i.to_string()), out);
            }
        }
        other => {
            if let Some(s) = scalar(other) {
                out.push((path, s));
            }
        }
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Bool(true) => Some("yes".into()),
        Value::Bool(false) => Some("no".into()),
        Value::Number(n) => n.as_f64().map(format::number),
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// Path segments of readings that change from minute to minute; a difference there says nothing
/// about whether two runs are comparable.
const VOLATILE: &[&str] = &[
    "loadavg",
    "load_average",
    "load_avg",
    "pressure",
    "uptime",
    "available",
    "free",
    "steal",
    "runnable",
    "throttl",
    "timestamp",
    "started",
    "finished",
    "time",
    "pid",
];

fn volatile(path: &str) -> bool {
    path.split('.')
        .any(|seg| VOLATILE.iter().any(|v| seg.contains(v)))
}

/// The fields whose values differ between environments (absent counts as a value), with each
/// environment's value; volatile readings such as load average or uptime are ignored.
pub fn differences(envs: &[&Value]) -> Vec<(String, Vec<Option<String>>)> {
    let flat: Vec<Vec<(String, String)>> = envs.iter().map(|e| flatten(e)).collect();
    let mut keys: Vec<&String> = Vec::new();
    for f in &flat {
        for (k, _) in f {
            if !keys.contains(&k) && !volatile(k) {
                keys.push(k);
            }
        }
    }
    keys.into_iter()
        .filter_map(|k| {
            let values: Vec<Option<String>> = flat
                .iter()
                .map(|f| f.iter().find(|(fk, _)| fk == k).map(|(_, v)| v.clone()))
                .collect();
            values
                .iter()
                .any(|v| *v != values[0])
                .then(|| (k.clone(), values))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_ignore_volatile_readings() {
        let a = json!({"kernel": "6.8", "load_avg_1m": 0.1, "governor": "performance", "memory_available_mib": 5});
        let b =
            json!({"kernel": "6.9", "load_avg_1m": 3.0, "governor": "performance", "turbo": true});
        let d = differences(&[&a, &b]);
        assert_eq!(
            d,
            vec![
                (
                    "kernel".to_string(),
                    vec![Some("6.8".to_string()), Some("6.9".to_string())]
                ),
                ("turbo".to_string(), vec![None, Some("yes".to_string())]),
            ]
        );
    }
}
