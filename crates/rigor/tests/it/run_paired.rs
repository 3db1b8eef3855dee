//! `rigor run` with two variants of the testbed: the comparison pairs the interleaved rounds,
//! its interval is the one an independent brute-force signed-rank computation of the same pairs
//! gives, the noise floor is said while the run goes and kept in the result, and
//! `rigor compare RUN.json` re-analyses the run to the same comparisons.

use crate::common;
use common::*;
use serde_json::Value;

fn two_variants(port: u16) -> String {
    config(port, "", "/plaintext", "")
        .replace("duration = \"1s\"", "duration = \"300ms\"")
        .replace("warmup = \"300ms\"", "warmup = \"0s\"")
        + r#"
[scenarios.s.variants.base]
env = { HELLO_DELAY_US = "200" }
[scenarios.s.variants.slow]
env = { HELLO_DELAY_US = "260" }
"#
}

/// load.rps of each round both variants kept, by iteration index: (baseline, candidate).
fn kept_pairs(json: &Value) -> Vec<(f64, f64)> {
    let rows = json["rows"].as_array().unwrap();
    let by_variant = |v: &str| {
        let row = rows.iter().find(|r| r["variant"] == v).unwrap();
        row["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|it| it["excluded"] == false && it["error"].is_null())
            .filter_map(|it| {
                Some((
                    it["index"].as_u64()?,
                    it["measurements"]["load.rps"].as_f64()?,
                ))
            })
            .collect::<std::collections::BTreeMap<u64, f64>>()
    };
    let (b, c) = (by_variant("base"), by_variant("slow"));
    b.iter()
        .filter_map(|(i, x)| Some((*x, *c.get(i)?)))
        .collect()
}

/// The paired interval of the within-round ratios computed by brute force: every Walsh average
/// of the log ratios, cut at the order statistic whose rank comes from enumerating all 2^n sign
/// assignments of the ranks 1..n (the exact null distribution of T+).
fn brute_force_interval(pairs: &[(f64, f64)], confidence: f64) -> (f64, f64) {
    let d: Vec<f64> = pairs.iter().map(|(b, c)| (c / b).ln()).collect();
    let n = d.len();
    let mut walsh = Vec::new();
    for i in 0..n {
        for j in i..n {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    walsh.sort_by(f64::total_cmp);
    let mut t_plus: Vec<usize> = (0..1u64 << n)
        .map(|signs| (0..n).filter(|r| signs >> r & 1 == 1).map(|r| r + 1).sum())
        .collect();
    t_plus.sort();
    let all = t_plus.len() as f64;
    let half_alpha = (1.0 - confidence) / 2.0;
    // k = the largest k with P(T+ <= k - 1) <= alpha/2.
    let mut k = 0;
    while (t_plus.iter().filter(|t| **t <= k).count() as f64) / all <= half_alpha * (1.0 + 1e-12) {
        k += 1;
    }
    assert!(k >= 1, "too few pairs for any interval");
    let pct = |l: f64| l.exp_m1() * 100.0;
    (pct(walsh[k - 1]), pct(walsh[walsh.len() - k]))
}

#[test]
fn variants_are_compared_round_by_round_and_re_analysed_alike() {
    let dir = temp_dir("run-paired");
    let port = free_port();
    let (out, json) = run(&dir, &two_variants(port), &["-i", "7"]);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    let json = json.unwrap();

    let rps = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["measurement"] == "load.rps")
        .expect("an rps comparison")
        .clone();
    let pairs = kept_pairs(&json);
    assert!(pairs.len() >= 6, "{t}");
    assert_eq!(rps["method"], "paired", "{rps}");
    assert_eq!(rps["pairs"].as_u64(), Some(pairs.len() as u64));
    assert_eq!(rps["confidence"].as_f64(), Some(0.95));

    // The interval and the change, recomputed from the iterations in the JSON.
    let (lo, hi) = brute_force_interval(&pairs, 0.95);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    let (got_lo, got_hi) = (rps["ci_low_pct"].as_f64(), rps["ci_high_pct"].as_f64());
    if let (Some(l), Some(h)) = (got_lo, got_hi) {
        assert!(close(l, lo) && close(h, hi), "{l} {h} vs {lo} {hi}");
    } else {
        // Withheld only when the median within-round change falls outside it.
        assert_eq!(rps["verdict"], "inconclusive", "{rps}");
    }
    let mut changes: Vec<f64> = pairs.iter().map(|(b, c)| (c / b - 1.0) * 100.0).collect();
    changes.sort_by(f64::total_cmp);
    let m = changes.len();
    let median = if m % 2 == 1 {
        changes[m / 2]
    } else {
        (changes[m / 2 - 1] + changes[m / 2]) / 2.0
    };
    assert!(
        close(rps["change_pct"].as_f64().unwrap(), median),
        "{rps} {median}"
    );

    // The noise floor: said after the third round, and kept with the result.
    assert!(
        t.contains("noise floor: with n=7 pairs this machine tells a change ≥ "),
        "{t}"
    );
    let floor = &json["noise_floor"][0];
    assert_eq!(floor["method"], "paired", "{}", json["noise_floor"]);
    assert_eq!(floor["measurement"], "load.rps");
    assert_eq!(floor["pairs"].as_u64(), Some(pairs.len() as u64));
    assert!(floor["detectable_pct"].as_f64().unwrap() > 0.0);
    assert!(t.contains("noise floor"), "{t}");
    assert!(t.contains("Δ round"), "{t}");

    // One file: the run's own comparisons again.
    let out = rigor(&dir, &["compare", "result.json", "--json", "again.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Its header names the variants compared, not an empty candidate.
    let said = text(&out);
    let (base, cand) = (
        rps["baseline"].as_str().unwrap(),
        rps["candidate"].as_str().unwrap(),
    );
    assert!(
        said.contains(&format!("result.json: its variants {cand} vs {base} ·")),
        "{said}"
    );
    assert!(!said.contains(" vs  ·"), "{said}");
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("again.json")).unwrap()).unwrap();
    assert_eq!(again["comparisons"], json["comparisons"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
