//! The guards against known benchmarking traps: each turns a condition that silently corrupts
//! numbers into a warning with its reason and what to do (`--strict` makes them fatal).

mod debug_build;
mod machine;
mod memory;
mod proxy;
mod shell_words;
mod unoptimised;

pub use debug_build::debug_build_warnings;
pub use machine::{busy_now_pct, machine_guards, noisy_machine_before_run, noisy_row};
pub use memory::{
    carried_page_cache_guard, probes_another_url, readiness_memory_guard, record_figures,
};
pub use proxy::proxy_guard;
pub use unoptimised::{build_env, cargo_opt_levels, unoptimised_warnings};

use crate::result::{Iteration, Warning};

/// Guards that read an iteration's finished measurements.
pub fn iteration_guards(it: &mut Iteration) {
    memory::page_cache_guard(&it.measurements, &mut it.warnings);
}

/// The engine's warnings about the load (it decides them; rigor adds what to do about each).
pub fn load_guards(report: &rigor_load::LoadReport, warnings: &mut Vec<Warning>) {
    for w in &report.warnings {
        let advice = match w.kind {
            "client_saturated" => {
                "give the load more threads/cores (profile `load = { cpus = … }`, `threads`), \
                 or run it on another machine"
            }
            "rate_not_met" => {
                "add connections, or lower `rate`: latency at an unmet rate is not the latency at that rate"
            }
            "waited_for_connection" => {
                "add connections (or pipelining) so the offered rate never queues in the client"
            }
            "load_errors" => {
                "read the application's log for this iteration; errors are counted, never dropped"
            }
            "bad_responses" => {
                "check the URL, method and body of the load job (and the application's log)"
            }
            "no_responses" => "check that the application answers the load URL at all",
            _ => "",
        };
        warnings.push(Warning::new(w.kind, w.message.clone(), advice));
    }
}
