//! `priority = "high"`: raising a process's scheduling priority, for the load client (rigor
//! itself, where the engine runs) and for the application alike, and saying when it could not.

use crate::result::{RunResult, Warning, WarningKind};

/// Raises `pid`'s priority; `who` names it for people (`the application`). Returns the outcome
/// as recorded (`raised`, or `not raised: why`) and, when it failed, the warning.
pub fn raise(pid: i32, who: &str) -> (String, Option<Warning>) {
    match rigor_probe::set_priority_high(pid) {
        Ok(()) => ("raised".to_string(), None),
        Err(why) => (
            format!("not raised: {why}"),
            Some(Warning::of(
                WarningKind::Priority,
                format!("could not raise {who}'s priority: {why}"),
            )),
        ),
    }
}

/// Raises rigor's own priority for the load client, after remembering the nice value
/// applications must still start with; the outcome goes in the result's environment.
pub fn raise_own(result: &mut RunResult) {
    // Unreadable, applications simply start with whatever rigor has.
    let _ = rigor_probe::priority::remember_base_nice();
    let (outcome, warning) = raise(std::process::id() as i32, "the load client");
    if let serde_json::Value::Object(env) = &mut result.environment {
        env.insert("load_priority".into(), outcome.into());
    }
    result.warnings.extend(warning);
}
