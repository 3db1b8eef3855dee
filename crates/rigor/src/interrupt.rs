//! Ctrl-C, SIGTERM and SIGHUP: the first asks every phase to stop cleanly (results are kept);
//! the second kills every application process group at once and, if the run does not write its
//! results within a few seconds, writes what was measured itself and exits. No path ends without
//! the final write, and no child outlives rigor.

use nix::fcntl::OFlag;
use nix::sys::signal::{killpg, sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::unistd::Pid;
use std::ffi::c_int;
use std::io::{Read, Write};
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static HURRY: AtomicBool = AtomicBool::new(false);
static FINAL_WRITTEN: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicUsize = AtomicUsize::new(0);
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);
static WAKE: AtomicI32 = AtomicI32::new(-1);
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
/// Writes what was measured when the run cannot finish on its own (the second signal).
type LastWords = Box<dyn Fn() + Send + Sync>;
static LAST_WORDS: Mutex<Option<LastWords>> = Mutex::new(None);
/// What stopping at once leaves undone besides the result files, said as rigor exits.
static UNDONE: Mutex<Option<String>> = Mutex::new(None);

/// How long the run gets, after a second signal, to write its results itself.
const GRACE_AFTER_SECOND: Duration = Duration::from_secs(3);

/// The signal handler: only atomics and one `write(2)`, both async-signal-safe.
extern "C" fn on_signal(sig: c_int) {
    LAST_SIGNAL.store(sig, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
    if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
        HURRY.store(true, Ordering::SeqCst);
    }
    let fd = WAKE.load(Ordering::SeqCst);
    if fd >= 0 {
        // The interrupted code may be about to read errno; the write must not change it.
        let saved = nix::errno::Errno::last_raw();
        // SAFETY: WAKE holds the pipe's write end, which is never closed.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        // One write(2), async-signal-safe and non-blocking: a full pipe already holds a
        // wake-up, so EAGAIN loses nothing (a blocking write would hang the handler).
        let _ = nix::unistd::write(fd, b"s");
        nix::errno::Errno::set_raw(saved);
    }
}

/// Installs the handlers (SIGINT, SIGTERM, SIGHUP) and their watcher thread once.
pub fn install() {
    rigor_agent::transport::set_hooks(rigor_agent::transport::Hooks {
        interrupted,
        register_group,
        unregister_group,
    });
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Ok((read_end, write_end)) = nix::unistd::pipe2(OFlag::O_CLOEXEC) else {
            return;
        };
        // Only the write end is non-blocking (the handler must never wait); the watcher's
        // reads block.
        if nix::fcntl::fcntl(&write_end, nix::fcntl::FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).is_err()
        {
            return;
        }
        // The write end lives as long as rigor: the handler may write to it at any time.
        WAKE.store(write_end.into_raw_fd(), Ordering::SeqCst);
        let read_end = std::fs::File::from(read_end);
        if std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || watch(read_end))
            .is_err()
        {
            return;
        }
        let action = SigAction::new(
            SigHandler::Handler(on_signal),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            // SAFETY: the handler only touches atomics and makes one write(2).
            let _ = unsafe { sigaction(sig, &action) };
        }
    });
}

/// The watcher: prints what happens (outside the handler) and runs the second-signal path.
fn watch(mut wake: std::fs::File) {
    let mut seen = 0usize;
    loop {
        let mut b = [0u8; 16];
        match wake.read(&mut b) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
        let count = SIGNALS.load(Ordering::SeqCst);
        if seen == 0 && count >= 1 {
            say(&first_message(LAST_SIGNAL.load(Ordering::SeqCst)));
        }
        if count >= 2 {
            say("\nrigor: stopping at once: killing the application, writing what was measured");
            kill_all();
            second_signal();
            return;
        }
        seen = count;
    }
}

fn first_message(sig: i32) -> String {
    match Signal::try_from(sig) {
        Ok(Signal::SIGINT) => {
            "\nrigor: interrupted, stopping cleanly (press Ctrl-C again to stop at once)".into()
        }
        _ => format!(
            "\nrigor: {} received, stopping cleanly (a second signal stops at once)",
            signal_name(sig)
        ),
    }
}

/// `SIGTERM`, `SIGHUP`, … for messages.
pub fn signal_name(sig: i32) -> &'static str {
    match Signal::try_from(sig) {
        Ok(Signal::SIGINT) => "SIGINT",
        Ok(Signal::SIGTERM) => "SIGTERM",
        Ok(Signal::SIGHUP) => "SIGHUP",
        _ => "a signal",
    }
}

/// Gives the run a moment to write its results; if it does not, writes them from here and exits.
fn second_signal() {
    let has_words = LAST_WORDS.lock().map(|w| w.is_some()).unwrap_or(false);
    if has_words {
        let deadline = Instant::now() + GRACE_AFTER_SECOND;
        while Instant::now() < deadline && !FINAL_WRITTEN.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !FINAL_WRITTEN.load(Ordering::SeqCst) {
            if let Ok(words) = LAST_WORDS.lock() {
                if let Some(w) = words.as_ref() {
                    w();
                }
            }
        }
    }
    kill_all();
    if let Some(note) = UNDONE.lock().ok().and_then(|u| u.clone()) {
        say(&note);
    }
    // A run that wrote its results ends like any interrupted run; anything else as killed by
    // SIGINT would.
    std::process::exit(
        if has_words {
            crate::exit::Exit::Failed.code()
        } else {
            crate::exit::Exit::Interrupted.code()
        }
        .into(),
    );
}

/// A line on stderr that never panics (the terminal may be gone).
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The flag every long phase polls (also handed to the load engine as its cancel switch).
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// Whether the user asked to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// How many signals have arrived so far: a wait that began after some can tell a new one.
pub fn signals() -> usize {
    SIGNALS.load(Ordering::SeqCst)
}

/// Whether a second signal asked to stop at once (grace periods are cut short).
pub fn hurry() -> bool {
    HURRY.load(Ordering::SeqCst)
}

/// Registers what writes the measured results if the run cannot, after a second signal.
pub fn set_last_words(words: impl Fn() + Send + Sync + 'static) {
    if let Ok(mut w) = LAST_WORDS.lock() {
        *w = Some(Box::new(words));
    }
}

/// Registers a line said if a second signal stops rigor before the work it names is done
/// (`None` once it is): the run's history is stored after its result files, so stopping at once
/// can skip it, and a user who is not told would think the run is in the history.
pub fn set_undone(note: Option<String>) {
    if let Ok(mut u) = UNDONE.lock() {
        *u = note;
    }
}

/// Says the final results are written, so the second-signal path does not write them again.
pub fn final_written() {
    FINAL_WRITTEN.store(true, Ordering::SeqCst);
}

/// Remembers a process group so a second signal or an early exit can kill it.
pub fn register_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.push(pgid);
    }
    crate::exec::sentinel::watch_group(pgid);
}

/// Forgets a process group once it has been stopped and reaped.
pub fn unregister_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.retain(|p| *p != pgid);
    }
    crate::exec::sentinel::forget_group(pgid);
}

/// SIGKILLs every registered process group.
pub fn kill_all() {
    if let Ok(g) = GROUPS.lock() {
        for pgid in g.iter() {
            // A group that is already gone needs no killing.
            let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
        }
    }
}
