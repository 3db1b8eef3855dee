//! Ctrl-C and SIGTERM: the first asks every phase to stop cleanly (results are kept), the second
//! kills every application process group rigor started and exits at once. Either way no child
//! outlives rigor.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Installs the handler once; later calls are no-ops.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
            eprintln!("\nrigor: interrupted twice, killing the application and exiting");
            kill_all();
            std::process::exit(130);
        }
        eprintln!("\nrigor: interrupted, stopping (press Ctrl-C again to kill at once)");
    });
}

/// The flag every long phase polls (also handed to the load engine as its cancel switch).
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// Whether the user asked to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Remembers a process group so a second Ctrl-C or an early exit can kill it.
pub fn register_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.push(pgid);
    }
}

/// Forgets a process group once it has been stopped and reaped.
pub fn unregister_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.retain(|p| *p != pgid);
    }
}

/// SIGKILLs every registered process group.
pub fn kill_all() {
    if let Ok(g) = GROUPS.lock() {
        for pgid in g.iter() {
            // SAFETY: killpg only sends a signal.
            unsafe {
                libc::killpg(*pgid, libc::SIGKILL);
            }
        }
    }
}
