//! Process-level knobs for the binary: signal handling and a companion child process.

use std::io;
use std::process::{Child, Command, Stdio};

/// Signals the binary waits for to shut down gracefully.
pub struct ShutdownSignals {
    set: libc::sigset_t,
}

impl ShutdownSignals {
    /// Blocks SIGINT and (unless `ignore_sigterm`) SIGTERM in the calling thread, and so in every
    /// thread it spawns afterwards; call before starting the server so no worker is killed by the
    /// default action. With `ignore_sigterm`, SIGTERM is ignored outright (only SIGKILL — or
    /// SIGINT, kept for humans at a terminal — stops the process).
    pub fn install(ignore_sigterm: bool) -> io::Result<Self> {
        // SAFETY: sigset manipulation and pthread_sigmask on valid, initialised sets.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            if ignore_sigterm {
                if libc::signal(libc::SIGTERM, libc::SIG_IGN) == libc::SIG_ERR {
                    return Err(io::Error::last_os_error());
                }
            } else {
                libc::sigaddset(&mut set, libc::SIGTERM);
            }
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(ShutdownSignals { set })
        }
    }

    /// Blocks until one of the signals arrives; returns its number.
    pub fn wait(&self) -> i32 {
        loop {
            let mut sig = 0;
            // SAFETY: `set` was initialised in `install`.
            if unsafe { libc::sigwait(&self.set, &mut sig) } == 0 {
                return sig;
            }
        }
    }
}

/// The hidden flag that turns the binary into an idle child.
pub const IDLE_CHILD_FLAG: &str = "--idle-child";

/// Re-executes this binary as an idle child, so the server's process tree has a child
/// (rigor measures and kills whole trees). The child dies with its parent, even on SIGKILL.
pub fn spawn_idle_child() -> io::Result<Child> {
    let exe = std::env::current_exe()?;
    Command::new(exe)
        .arg(IDLE_CHILD_FLAG)
        .arg(std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
}

/// Body of the idle child: sleep until the parent `parent` goes away.
pub fn idle_child(parent: u32) -> ! {
    // SAFETY: prctl/getppid have no memory-safety preconditions.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() as u32 != parent {
            std::process::exit(0);
        }
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}
