//! wrk2's summary: wrk's lines (see [`super::wrk`]) plus its HdrHistogram output with
//! `--latency`: the distribution to 99.999% (p99.9 read from `99.900%`) and the `Detailed
//! Percentile spectrum`, whose `#[Mean = …]` and `#[Max = …]` (milliseconds, three decimals)
//! replace the rounded `Thread Stats` figures.

use crate::tools::ToolError;

use super::figures::ToolFigures;
use regex::Regex;
use std::sync::OnceLock;

/// Reads wrk2's summary.
pub fn parse(text: &str) -> Result<ToolFigures, ToolError> {
    let mut f = super::wrk::parse(text, "wrk2")?;
    if f.latency_mean_ms.is_none() {
        return Ok(f);
    }
    static SPECTRUM: OnceLock<(Regex, Regex)> = OnceLock::new();
    let (mean, max) = SPECTRUM.get_or_init(|| {
        (
            Regex::new(r"#\[Mean\s*=\s*([0-9.]+),").expect("a fixed pattern"),
            Regex::new(r"#\[Max\s*=\s*([0-9.]+),").expect("a fixed pattern"),
        )
    });
    // The first spectrum is the corrected one (with -U an uncorrected one follows).
    if let Some(c) = mean.captures(text) {
        f.latency_mean_ms = c[1].parse().ok().or(f.latency_mean_ms);
    }
    if let Some(c) = max.captures(text) {
        f.latency_max_ms = c[1].parse().ok().or(f.latency_max_ms);
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The `--latency` example output printed in wrk2's own README, copied verbatim.
    const README_EXAMPLE: &str = include_str!("fixtures/wrk2_readme_latency.txt");
    // Recorded with wrk2 (4.0.0, built from its sources) against testbeds/hello-server: a 3 s
    // run, short of wrk2's 10 s calibration, so its `Req/Sec` line says `-nan`.
    const RECORDED: &str = include_str!("fixtures/wrk2_latency.txt");

    #[test]
    fn a_recorded_run_with_its_spectrum() {
        let f = parse(RECORDED).unwrap();
        assert_eq!(f.requests, Some(5970.0));
        assert_eq!(f.measured_secs, Some(3.03));
        assert_eq!(f.rps, Some(1973.39));
        assert_eq!(f.latency_p50_ms, Some(0.98));
        assert_eq!(f.latency_p99_ms, Some(56.67));
        assert_eq!(f.latency_p999_ms, Some(68.99));
        assert_eq!(f.latency_mean_ms, Some(3.970));
        assert_eq!(f.latency_max_ms, Some(70.976));
        assert_eq!(f.measurements()["load.socket_errors"], 0.0);
    }

    #[test]
    fn the_hdrhistogram_distribution_and_spectrum() {
        let f = parse(README_EXAMPLE).unwrap();
        assert_eq!(f.requests, Some(60018.0));
        assert_eq!(f.measured_secs, Some(30.0));
        assert_eq!(f.rps, Some(2000.28));
        assert_eq!(f.latency_p50_ms, Some(6.67));
        assert_eq!(f.latency_p75_ms, Some(7.78));
        assert_eq!(f.latency_p90_ms, Some(9.14));
        assert_eq!(f.latency_p99_ms, Some(11.18));
        assert_eq!(f.latency_p999_ms, Some(12.30));
        assert_eq!(f.latency_mean_ms, Some(6.602));
        assert_eq!(f.latency_max_ms, Some(12.496));
        assert_eq!(f.bad_responses, Some(0.0));
    }

    #[test]
    fn wrk2_without_latency_flag_reads_like_wrk() {
        let text = README_EXAMPLE
            .lines()
            .filter(|l| !l.trim_start().starts_with("#["))
            .collect::<Vec<_>>()
            .join("\n");
        let f = parse(&text).unwrap();
        assert_eq!(f.latency_mean_ms, Some(6.60));
        assert_eq!(f.latency_max_ms, Some(12.50));
    }
}
