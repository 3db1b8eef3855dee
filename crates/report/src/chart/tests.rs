//! The charts a whole run draws: which kinds appear, that user strings stay text, and that a
//! long run still gives a small page.

use super::*;
use crate::sample::sample_result;

fn with_series_and_spectra(result: &mut RunResult, samples: usize) {
    for row in &mut result.rows {
        for it in &mut row.iterations {
            it.series = Some(timeline::tests::series(samples));
            let pairs: Vec<(f64, f64)> = [0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0]
                .iter()
                .map(|p| (*p, 1.0 + p / 10.0))
                .collect();
            it.load = Some(serde_json::json!({ "latency": { "percentiles": pairs } }));
        }
    }
}

#[test]
fn a_run_draws_every_kind_of_chart() {
    let mut r = sample_result();
    with_series_and_spectra(&mut r, 40);
    let html = run_section(&r);
    for kind in ["comparison", "sweep", "spectrum", "timeline"] {
        assert!(html.contains(&format!("chart-{kind}\"")), "{kind} missing");
    }
    // Two matrix rows swept over connections: one sweep chart per charted id (load.rps, p99).
    assert_eq!(html.matches("chart-sweep\"").count(), 2);
    // No variants: one spectrum per row group.
    assert_eq!(html.matches("chart-spectrum\"").count(), 2);
    assert!(html.contains("<h3>Timelines · plaintext connections=16</h3>"));
}

#[test]
fn nothing_to_draw_is_no_section() {
    let mut r = sample_result();
    r.rows.truncate(1);
    r.comparisons.clear();
    assert_eq!(run_section(&r), "");
}

#[test]
fn user_strings_in_charts_are_text() {
    let mut r = sample_result();
    with_series_and_spectra(&mut r, 10);
    let evil = "<script>alert(1)</script>\"'&";
    r.scenario = evil.into();
    for row in &mut r.rows {
        row.variant = Some(evil.into());
        row.variables.insert(evil.into(), evil.into());
    }
    r.comparisons[0].candidate = evil.into();
    r.comparisons[0].note = Some(evil.into());
    let html = run_section(&r);
    assert!(!html.contains("<script"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;'&amp;"));
}

#[test]
fn a_thousand_iterations_give_a_small_page_that_says_what_it_left_out() {
    let mut r = sample_result();
    r.rows.truncate(1);
    let template = r.rows[0].iterations[0].clone();
    r.rows[0].iterations = (0..1000)
        .map(|i| {
            let mut it = template.clone();
            it.index = i;
            it
        })
        .collect();
    with_series_and_spectra(&mut r, 3000);
    let html = run_section(&r);
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    assert!(html.contains("show 10 of them, evenly spaced"));
    assert!(html.contains("thinned"));
    let per_chart = html.split("chart-timeline").nth(1).unwrap();
    assert!(per_chart.matches("<polyline").count() <= thin::MAX_ITERATIONS + 1);
}
