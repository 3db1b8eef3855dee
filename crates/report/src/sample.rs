//! A run result with something in every block, for the report tests.

use rigor_analysis::summary::summarize_row;
use rigor_analysis::summary::tests::{iteration, row_with};
use rigor_model::result::{
    Comparison, RunResult, RunStatus, Verdict, Warning, WarningKind, SCHEMA,
};

/// The sample: two matrix rows with application and load figures, a failed iteration, warnings at
/// every level, a comparison and an environment: enough to exercise every block.
pub fn sample_result() -> RunResult {
    let mut rows = Vec::new();
    for (conns, rps) in [("16", 1_232_440.0), ("64", 1_265_521.0)] {
        let mut row = row_with(&[("connections", conns)], None, "load.rps", &[0.0; 3]);
        for (i, it) in row.iterations.iter_mut().enumerate() {
            let f = 1.0 + 0.01 * i as f64;
            it.measurements.insert("load.rps".into(), rps * f);
            it.measurements.insert("app.rss".into(), 61.2 * f);
            it.measurements.insert("load.latency.p99".into(), 0.57 * f);
            it.measurements.insert("load.requests".into(), 12_000_000.0);
        }
        row.iterations[0].warnings.push(Warning::new(
            WarningKind::ClientSaturated,
            "load client at 98% CPU",
            "use more cores",
        ));
        row.iterations[1].warnings.push(Warning::new(
            WarningKind::ClientSaturated,
            "load client at 98% CPU",
            "use more cores",
        ));
        summarize_row(&mut row);
        rows.push(row);
    }
    let mut failed = iteration(3, &[("app.start_time", 12.0)]);
    failed.error = Some("app exited with code 1 before ready".into());
    failed.log = Some("logs/4.log".into());
    rows[1].iterations.push(failed);
    rows[1].warnings.push(Warning::new(
        WarningKind::PageCache,
        "cgroup memory is mostly page cache",
        "",
    ));
    RunResult {
        schema: SCHEMA.into(),
        rigor_version: "0.1.0".into(),
        scenario: "plaintext".into(),
        profile: "local".into(),
        description: Some("PR #42".into()),
        started_at: "2026-11-30T02:00:00Z".into(),
        finished_at: None,
        status: RunStatus::Complete,
        seed: None,
        environment: serde_json::json!({
            "os": "Ubuntu 24.04", "kernel": "6.8.0", "cpu_model": "Xeon", "logical_cores": 2,
            "governor": "performance", "turbo": false, "hostname": "bench1",
        }),
        warnings: vec![Warning::new(
            WarningKind::DebugBuild,
            "artifact looks like a debug build",
            "build with --release",
        )],
        builds: vec![],
        rows,
        measurements: Default::default(),
        sequential: None,
        noise_floor: Vec::new(),
        cross_check: None,
        limits: Vec::new(),
        profiles: Vec::new(),
        comparisons: vec![Comparison {
            scenario: "plaintext".into(),
            shift_pct: Some(-10.8),
            direction: Some("higher".into()),
            row: [("connections".to_string(), "16".to_string())].into(),
            measurement: "load.rps".into(),
            baseline: "base".into(),
            candidate: "slow".into(),
            baseline_median: Some(1_232_440.0),
            candidate_median: Some(1_100_000.0),
            change_pct: Some(-10.75),
            ci_low_pct: Some(-12.0),
            ci_high_pct: Some(-9.5),
            p_value: Some(0.0002),
            verdict: Verdict::Regression,
            note: None,
            method: None,
            pairs: None,
            confidence: None,
            adjusted: None,
            floor: None,
        }],
    }
}
