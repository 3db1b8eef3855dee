//! One tool run's figures from several load hosts, merged into the load's `load.*` figures.
//! What adds up exactly is added: responses, requests per second (every host measured the same
//! window), bad responses, errors of each kind, bytes and throughput; the largest latency is the
//! largest of the hosts'. A tool's text or JSON summary holds its percentiles and its mean, not
//! its samples (oha's histogram has a handful of coarse buckets), and percentiles of a union
//! cannot be had from the parts' percentiles: the merged latency percentiles and mean are left
//! absent, never averaged, and [`unmerged_latency`] says why.

use super::figures::ToolFigures;
use super::Tool;

/// The hosts' figures as one load's; one host's figures are its own, unchanged.
pub fn merge(parts: &[ToolFigures]) -> ToolFigures {
    if let [one] = parts {
        return one.clone();
    }
    let sum = |get: fn(&ToolFigures) -> Option<f64>| -> Option<f64> {
        parts.iter().map(get).sum::<Option<f64>>()
    };
    let max = |get: fn(&ToolFigures) -> Option<f64>| -> Option<f64> {
        parts.iter().filter_map(get).reduce(f64::max)
    };
    ToolFigures {
        requests: sum(|f| f.requests),
        measured_secs: max(|f| f.measured_secs),
        rps: sum(|f| f.rps),
        latency_max_ms: max(|f| f.latency_max_ms),
        bad_responses: sum(|f| f.bad_responses),
        errors_connect: sum(|f| f.errors_connect),
        errors_read: sum(|f| f.errors_read),
        errors_write: sum(|f| f.errors_write),
        errors_timeout: sum(|f| f.errors_timeout),
        errors_other: sum(|f| f.errors_other),
        bytes_read: sum(|f| f.bytes_read),
        throughput_mib_s: sum(|f| f.throughput_mib_s),
        ..Default::default()
    }
}

/// Why the merged latency percentiles and mean are absent, when several hosts reported some.
pub fn unmerged_latency(tool: Tool, parts: &[ToolFigures]) -> Option<String> {
    let reported = |f: &ToolFigures| {
        [
            f.latency_mean_ms,
            f.latency_p50_ms,
            f.latency_p75_ms,
            f.latency_p90_ms,
            f.latency_p99_ms,
            f.latency_p999_ms,
        ]
        .iter()
        .any(Option::is_some)
    };
    if parts.len() < 2 || !parts.iter().any(reported) {
        return None;
    }
    let holds = match tool {
        Tool::Oha => "its JSON summary holds percentiles and a histogram of a few coarse buckets",
        Tool::Bombardier => "its JSON result holds percentiles and a mean",
        Tool::H2load => "its summary holds a mean and a spread",
        Tool::Wrk | Tool::Wrk2 => "its summary holds percentiles and a mean",
    };
    Some(format!(
        "{} ran on {} load hosts and {holds}, not its samples: percentiles of the whole load \
         cannot be had from the hosts' percentiles, so load.latency.* (but max) is left absent \
         rather than averaged; each host's own are in load.hosts.NAME.latency.*",
        tool.name(),
        parts.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(requests: f64, rps: f64, p99: f64, max: f64) -> ToolFigures {
        ToolFigures {
            requests: Some(requests),
            rps: Some(rps),
            latency_p99_ms: Some(p99),
            latency_mean_ms: Some(p99 / 3.0),
            latency_max_ms: Some(max),
            bad_responses: Some(1.0),
            errors_timeout: Some(2.0),
            bytes_read: Some(100.0),
            measured_secs: Some(1.0),
            ..Default::default()
        }
    }

    #[test]
    fn counts_and_rates_add_up_and_percentiles_are_left_absent() {
        let parts = [host(100.0, 50.0, 3.0, 9.0), host(60.0, 30.0, 5.0, 7.0)];
        let m = merge(&parts);
        assert_eq!(m.requests, Some(160.0));
        assert_eq!(m.rps, Some(80.0));
        assert_eq!(m.bad_responses, Some(2.0));
        assert_eq!(m.errors_timeout, Some(4.0));
        assert_eq!(m.bytes_read, Some(200.0));
        assert_eq!(m.latency_max_ms, Some(9.0));
        assert_eq!((m.latency_p99_ms, m.latency_mean_ms), (None, None));
        let why = unmerged_latency(Tool::Wrk, &parts).unwrap();
        assert!(why.contains("wrk ran on 2 load hosts"), "{why}");
        assert!(why.contains("rather than averaged"), "{why}");
    }

    #[test]
    fn one_host_keeps_its_own_figures_and_an_unreported_count_stays_absent() {
        let one = host(100.0, 50.0, 3.0, 9.0);
        assert_eq!(merge(std::slice::from_ref(&one)), one);
        assert_eq!(
            unmerged_latency(Tool::Wrk, std::slice::from_ref(&one)),
            None
        );
        let mut silent = host(1.0, 1.0, 1.0, 1.0);
        silent.errors_timeout = None;
        assert_eq!(merge(&[one, silent]).errors_timeout, None);
    }
}
