//! The integration tests that load or measure the whole machine: CPU hogs beside a run, the
//! foreign CPU of a run read against the machine's own counters, bisections on a busy machine.
//! They are a binary of their own, and each test holds one lock, so none of them runs beside
//! another test of rigor's: the other binary's tests would be their noise (and their children
//! this process's), and their hogs the other tests' noise.

mod bisect_common;
#[path = "../it/common/mod.rs"]
mod common;

mod bisect;
mod bisect_ref;
mod capacity;
mod interference;
mod noisy_rerun;
mod run_gates;
mod run_guards;
mod starved;
