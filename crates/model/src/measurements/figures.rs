//! The probe's and the load engine's figures under their measurement ids: nothing else in rigor
//! names a built-in id when it records one.

use super::ids;
use rigor_probe::AppFigures;
use std::collections::BTreeMap;

/// Puts every application figure that was taken under its measurement id (absent ones stay
/// absent, and so do readings that are not finite).
pub fn record_app(f: &AppFigures, m: &mut BTreeMap<String, f64>) {
    let pairs = [
        (ids::APP_CPU, f.cpu_max_pct),
        (ids::APP_CPU_AVG, f.cpu_mean_pct),
        (ids::APP_CORES, f.cores_max_pct),
        (ids::APP_RSS, f.rss_max_mib),
        (ids::APP_RSS_LIFETIME, f.rss_lifetime_max_mib),
        (ids::APP_PRIVATE, f.private_max_mib),
        (ids::APP_OWNED, f.owned_max_mib),
        (ids::APP_CGROUP_MEMORY, f.cgroup_memory_max_mib),
        (ids::APP_CGROUP_CACHE, f.cgroup_cache_max_mib),
        (ids::APP_CGROUP_ANON, f.cgroup_anon_mib),
        (ids::APP_THREADS_START, f.threads_start),
        (ids::APP_THREADS_END, f.threads_end),
        (ids::APP_THREADS_MAX, f.threads_max),
        (
            ids::APP_CTX_SWITCHES_INVOLUNTARY,
            f.nonvoluntary_ctxt_switches,
        ),
    ];
    for (id, v) in pairs {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            m.insert(id.to_string(), v);
        }
    }
}

/// Puts the engine's `load.*` figures under their ids (the engine names them, so `rigor load
/// --json` reports the same ids; every one is in the catalogue, as the tests check).
pub fn record_load(report: &rigor_load::LoadReport, m: &mut BTreeMap<String, f64>) {
    for (id, v) in report.measurements() {
        m.insert(id.to_string(), v);
    }
    // A mix's requests, each under its own name (`load.req.NAME.*`).
    for (id, v) in report.request_measurements() {
        m.insert(id, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measurements::{info, Group};
    use std::io::{Read, Write};

    #[test]
    fn every_application_figure_has_a_catalogue_id_and_absent_ones_stay_absent() {
        // Every field of the probe's figures, through its JSON form: a field added to the probe
        // without an id here shows up as a missing one.
        let fields = serde_json::to_value(AppFigures::default()).unwrap();
        let n = fields.as_object().unwrap().len();
        let all: AppFigures = serde_json::from_value(serde_json::Value::Object(
            fields
                .as_object()
                .unwrap()
                .keys()
                .map(|k| (k.clone(), serde_json::json!(1.5)))
                .collect(),
        ))
        .unwrap();
        let mut m = BTreeMap::new();
        record_app(&all, &mut m);
        assert_eq!(m.len(), n, "{m:?}");
        for id in m.keys() {
            assert_eq!(info(id).map(|i| i.group), Some(Group::Application), "{id}");
        }
        let mut m = BTreeMap::new();
        let partial = AppFigures {
            rss_max_mib: Some(61.0),
            cpu_max_pct: Some(f64::NAN),
            ..Default::default()
        };
        record_app(&partial, &mut m);
        assert_eq!(m, BTreeMap::from([(ids::APP_RSS.to_string(), 61.0)]));
    }

    #[test]
    fn every_id_the_engine_reports_is_in_the_catalogue() {
        // A server answering garbage: the engine reports parse errors, and the tables must know
        // the id to show them.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(mut s) = s else { continue };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 1024];
                    while matches!(s.read(&mut buf), Ok(n) if n > 0) {
                        if s.write_all(b"garbage\r\n\r\n").is_err() {
                            return;
                        }
                    }
                });
            }
        });
        let spec = rigor_load::LoadSpec {
            url: format!("http://{addr}/"),
            connections: 2,
            duration: std::time::Duration::from_millis(300),
            ..Default::default()
        };
        let never = std::sync::atomic::AtomicBool::new(false);
        let r = rigor_load::run(&spec, &rigor_load::Live::default(), &never).unwrap();
        let m = r.measurements();
        assert!(m["load.errors.parse"] > 0.0, "{m:?}");
        assert_eq!(m["load.socket_errors"], m["load.errors.parse"]);
        for id in m.keys() {
            assert!(info(id).is_some(), "{id} is not in the catalogue");
        }
    }
}
