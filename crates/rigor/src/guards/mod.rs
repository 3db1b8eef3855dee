//! The guards against the traps of seed 004: each turns a condition that silently corrupts
//! numbers into a warning with its reason and what to do (`--strict` makes them fatal).

mod debug_build;
mod machine;
mod memory;
mod proxy;

pub use debug_build::debug_build_warnings;
pub use machine::{machine_guards, noisy_machine_before_run, noisy_row};
pub use memory::record_figures;
pub use proxy::proxy_guard;

use crate::result::{Iteration, Warning};

/// Guards that read an iteration's finished measurements.
pub fn iteration_guards(it: &mut Iteration) {
    memory::page_cache_guard(&it.measurements, &mut it.warnings);
}

/// Guards on the load: a saturated client, an open-model rate not met or queued behind busy
/// connections, errors and bad responses, each read from the engine's report, not its text.
pub fn load_guards(report: &rigor_load::LoadReport, warnings: &mut Vec<Warning>) {
    if report.client_cpu_pct >= 90.0 {
        warnings.push(Warning::new(
            "client_saturated",
            format!(
                "the load client used {:.0}% of its {} core(s): the figures may measure the client, \
                 not the application",
                report.client_cpu_pct, report.client_cores
            ),
            "give the load more threads/cores (profile `load = { cpus = … }`, `threads`), \
             or run it on another machine",
        ));
    }
    if let Some(rate) = &report.rate {
        if rate.achieved < rate.offered * 0.95 {
            warnings.push(Warning::new(
                "rate_not_met",
                format!(
                    "the open-model rate was not met: offered {:.0}/s, achieved {:.0}/s",
                    rate.offered, rate.achieved
                ),
                "add connections, or lower `rate`: latency at an unmet rate is not the latency at that rate",
            ));
        }
    }
    if let Some(rate) = report.rate.as_ref().filter(|r| r.waited_for_connection > 0) {
        warnings.push(Warning::new(
            "waited_for_connection",
            format!(
                "{} requests waited for a free connection (max schedule lag {:.1} ms): their latency includes the wait",
                rate.waited_for_connection, rate.max_schedule_lag_ms
            ),
            "add connections (or pipelining) so the offered rate never queues in the client",
        ));
    }
    let e = &report.errors;
    if e.total() > 0 {
        warnings.push(Warning::new(
            "load_errors",
            format!("load {e}"),
            "read the application's log for this iteration; errors are counted, never dropped",
        ));
    }
    if report.bad_responses > 0 {
        warnings.push(Warning::new(
            "bad_responses",
            format!("{} responses were not 2xx or 3xx", report.bad_responses),
            "check the URL, method and body of the load job (and the application's log)",
        ));
    }
}
