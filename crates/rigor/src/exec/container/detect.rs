//! Which engine runs the containers: the one the job names, or the first that answers
//! (docker first), asked once per run. An engine whose client exists but whose daemon does
//! not answer is passed over, and the error names why each one was.

use super::client::call;
use super::engine::Engine;
use crate::config::EngineKind;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How long an engine gets to say its version.
const ASK: Duration = Duration::from_secs(10);

/// Each engine's answer so far: its version, or why it gave none.
static ANSWERS: Mutex<Option<HashMap<EngineKind, Result<String, String>>>> = Mutex::new(None);

/// The engine's version, asked once per run.
fn answer(kind: EngineKind) -> Result<String, String> {
    let mut answers = ANSWERS.lock().unwrap_or_else(|e| e.into_inner());
    let map = answers.get_or_insert_with(HashMap::new);
    map.entry(kind)
        .or_insert_with(|| {
            let engine = Engine { kind };
            call(&engine, &engine.version(), ASK)
                .map_err(|e| e.to_string())
                .and_then(|v| match v.lines().next() {
                    Some(v) if !v.is_empty() => Ok(v.to_string()),
                    _ => Err(format!("`{} version` said nothing", kind.program())),
                })
        })
        .clone()
}

/// The engine for a job (`wanted`, or the first that answers) and its version.
pub fn engine(wanted: Option<EngineKind>) -> anyhow::Result<(Engine, String)> {
    let candidates = match wanted {
        Some(k) => vec![k],
        None => vec![EngineKind::Docker, EngineKind::Podman],
    };
    let mut why = Vec::new();
    for kind in candidates {
        match answer(kind) {
            Ok(version) => return Ok((Engine { kind }, version)),
            Err(e) => why.push(format!("{}: {e}", kind.program())),
        }
    }
    Err(anyhow::anyhow!(
        "no container engine answers ({}){}",
        why.join("; "),
        if wanted.is_none() {
            ""
        } else {
            " (`engine` names the one to use)"
        }
    ))
}
