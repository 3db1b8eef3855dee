//! The sweep: containers carrying rigor's label whose rigor is gone (killed, crashed) are
//! removed before this run starts one; those of a rigor still running are left alone.

use super::client::call;
use super::engine::Engine;
use crate::config::EngineKind;
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

/// The engines swept in this run (once each).
static SWEPT: Mutex<Option<HashSet<EngineKind>>> = Mutex::new(None);

/// `PID-START` of this rigor: the owner label's value.
pub fn owner() -> String {
    let me = std::process::id() as i32;
    let start = crate::exec::procs::read(me).map(|p| p.start).unwrap_or(0);
    format!("{me}-{start}")
}

/// Whether the rigor that wrote `owner` is gone (its PID is free or reused).
fn gone(owner: &str) -> bool {
    let Some((pid, start)) = owner.split_once('-') else {
        return true;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<i32>(), start.parse::<u64>()) else {
        return true;
    };
    !crate::exec::procs::read(pid).is_some_and(|p| p.start == start && !p.zombie)
}

/// Removes, once per run and engine, the containers a rigor that is gone left; says how many
/// on stderr, and returns their ids (none after the first call).
pub fn once(engine: &Engine) -> anyhow::Result<Vec<String>> {
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
        if !swept.get_or_insert_with(HashSet::new).insert(engine.kind) {
            return Ok(Vec::new());
        }
    }
    let removed = sweep(engine)?;
    if !removed.is_empty() {
        eprintln!(
            "rigor: removed {} container(s) an earlier rigor left behind: {}",
            removed.len(),
            removed.join(", ")
        );
    }
    Ok(removed)
}

/// The ids of the containers removed.
pub fn sweep(engine: &Engine) -> anyhow::Result<Vec<String>> {
    let t = Duration::from_secs(30);
    let listed = call(engine, &engine.owned(), t)
        .map_err(|e| anyhow::anyhow!("cannot list rigor's containers: {e}"))?;
    let mut removed = Vec::new();
    for line in listed.lines() {
        let Some((id, owner)) = line.split_once(' ') else {
            continue;
        };
        if gone(owner.trim()) {
            call(engine, &engine.remove(id), t).map_err(|e| {
                anyhow::anyhow!("cannot remove container {id} an earlier rigor left: {e}")
            })?;
            removed.push(id.chars().take(12).collect());
        }
    }
    Ok(removed)
}
