//! The guards against known benchmarking traps: each turns a condition that silently corrupts
//! numbers into a warning with its reason and what to do (`--strict` makes them fatal).

mod debug_build;
mod machine;
mod memory;
mod proxy;
mod shell_words;
mod unoptimised;

pub use debug_build::debug_build_warnings;
pub use machine::{
    busy_now_pct, client_starved_guard, machine_guards, noisy_machine_before_run, noisy_row,
};
pub use memory::{
    carried_page_cache_guard, probes_another_url, readiness_memory_guard, still_starting,
};
pub use proxy::proxy_guard;
pub use unoptimised::{build_env, cargo_opt_levels, unoptimised_warnings};

use crate::result::{Iteration, Warning, WarningKind};

/// Guards that read an iteration's finished measurements.
pub fn iteration_guards(it: &mut Iteration) {
    memory::page_cache_guard(&it.measurements, &mut it.warnings);
}

/// The engine's warnings about the load (it decides them; rigor adds what to do about each).
pub fn load_guards(report: &rigor_load::LoadReport, warnings: &mut Vec<Warning>) {
    for w in &report.warnings {
        let kind = WarningKind::from_code(&w.kind);
        let advice = match kind {
            WarningKind::Other(_) => "",
            ref known => known.advice(),
        };
        warnings.push(Warning::new(kind, w.message.clone(), advice));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind the engine can say is one rigor knows, with its meaning and advice: the
    /// engine's source names each where it says it (`say("kind", …)`).
    #[test]
    fn every_kind_the_engine_says_is_a_known_kind() {
        let source = include_str!("../../../load/src/report.rs");
        let said: Vec<&str> = source
            .split("say(")
            .skip(1)
            .filter_map(|rest| rest.trim_start().strip_prefix('"')?.split('"').next())
            .collect();
        assert!(said.len() >= 7, "{said:?}");
        for kind in said {
            assert!(
                !matches!(WarningKind::from_code(kind), WarningKind::Other(_)),
                "the load engine says `{kind}`, which WarningKind does not know"
            );
        }
    }
}
