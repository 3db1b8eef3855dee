//! Which I/O path the workers drive their sockets with: epoll readiness (mio) or io_uring
//! completions. Chosen per run; `Auto` takes io_uring where the kernel has what it needs.

use crate::LoadError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The I/O path asked for: the engine's two paths give the same counts, io_uring with fewer
/// system calls per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoMode {
    /// io_uring for http:// where the kernel supports it, else epoll; never fails a run.
    #[default]
    Auto,
    /// Readiness events from epoll (mio) and a read or write call per socket operation.
    Epoll,
    /// Batched submissions and multishot receives on io_uring; http:// only, and an error where
    /// the kernel lacks it.
    IoUring,
}

impl IoMode {
    /// The spelling used by `--io`, the `io` key and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            IoMode::Auto => "auto",
            IoMode::Epoll => "epoll",
            IoMode::IoUring => "io_uring",
        }
    }
}

impl fmt::Display for IoMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for IoMode {
    type Err = UnknownIoMode;
    fn from_str(s: &str) -> Result<Self, UnknownIoMode> {
        match s {
            "auto" => Ok(IoMode::Auto),
            "epoll" => Ok(IoMode::Epoll),
            "io_uring" | "io-uring" | "uring" => Ok(IoMode::IoUring),
            _ => Err(UnknownIoMode {
                given: s.to_string(),
            }),
        }
    }
}

/// An I/O path name that is none of the engine's: lists the ones it has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown I/O path `{given}`: expected auto, epoll or io_uring")]
pub struct UnknownIoMode {
    /// The name as given.
    pub given: String,
}

/// Whether this machine's kernel runs the engine's io_uring path: `Err` says what is missing.
/// Probed once per process (a ring is set up and a buffer ring registered, then dropped).
pub fn io_uring_support() -> Result<(), UringUnsupported> {
    static PROBED: std::sync::OnceLock<Result<(), UringUnsupported>> = std::sync::OnceLock::new();
    PROBED
        .get_or_init(|| {
            kernel_release_supports(&kernel_release())?;
            crate::worker::probe_io_uring()
        })
        .clone()
}

/// Multishot receive (the path's way to read) came with Linux 6.0.
pub fn kernel_release_supports(release: &str) -> Result<(), UringUnsupported> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    if (major, minor) >= (6, 0) {
        Ok(())
    } else {
        Err(UringUnsupported::OldKernel {
            release: release.to_string(),
        })
    }
}

/// What this machine lacks for the io_uring path; `Auto` falls back to epoll on any of these.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UringUnsupported {
    /// A kernel older than 6.0 (no multishot receive).
    #[error("io_uring's multishot receive needs Linux 6.0 or later, and this kernel is {release}")]
    OldKernel { release: String },
    /// No ring could be set up at all.
    #[error(
        "io_uring_setup failed ({reason}): disabled (kernel.io_uring_disabled) or not built in"
    )]
    Setup { reason: String },
    /// The ring cannot wait with a timeout.
    #[error("this kernel's io_uring cannot wait with a timeout (EXT_ARG, 5.11)")]
    NoExtArg,
    /// The ring would not say which operations it has.
    #[error("io_uring cannot list its operations ({reason})")]
    NoProbe { reason: String },
    /// An operation the path uses is missing.
    #[error("this kernel's io_uring has no {name} operation")]
    NoOperation { name: &'static str },
    /// No provided buffer ring could be registered.
    #[error("io_uring cannot register a provided buffer ring ({reason}, 5.19)")]
    NoBufRing { reason: String },
}

fn kernel_release() -> String {
    // SAFETY: uname fills the zeroed struct; its release is NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return String::new();
        }
        std::ffi::CStr::from_ptr(u.release.as_ptr())
            .to_string_lossy()
            .into_owned()
    }
}

/// The path a run takes for `mode`, the URL's scheme and the protocol: `Auto` never fails; an
/// explicit `IoUring` the kernel (or an https:// URL, or HTTP/2) cannot have is an error
/// saying why.
pub(crate) fn resolve(mode: IoMode, tls: bool, http2: bool) -> Result<IoMode, LoadError> {
    match mode {
        IoMode::Epoll => Ok(IoMode::Epoll),
        IoMode::Auto if tls || http2 => Ok(IoMode::Epoll),
        IoMode::IoUring if http2 => Err(LoadError::InvalidSpec(
            "io = io_uring drives HTTP/1.1 only; HTTP/2 runs on epoll (use io = auto or epoll)"
                .into(),
        )),
        IoMode::Auto => Ok(match io_uring_support() {
            Ok(()) => IoMode::IoUring,
            Err(_) => IoMode::Epoll,
        }),
        IoMode::IoUring if tls => Err(LoadError::InvalidSpec(
            "io = io_uring drives http:// only; https:// runs on epoll (use io = auto or epoll)"
                .into(),
        )),
        IoMode::IoUring => io_uring_support().map(|()| IoMode::IoUring).map_err(|why| {
            LoadError::InvalidSpec(format!(
                "io = io_uring is not available here: {why} (use io = auto or epoll)"
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for m in [IoMode::Auto, IoMode::Epoll, IoMode::IoUring] {
            assert_eq!(m.as_str().parse::<IoMode>(), Ok(m));
        }
        assert!("kqueue"
            .parse::<IoMode>()
            .unwrap_err()
            .to_string()
            .contains("io_uring"));
    }

    #[test]
    fn old_kernels_are_refused_with_the_version() {
        assert!(kernel_release_supports("6.18.44-fc").is_ok());
        assert!(kernel_release_supports("6.0.0").is_ok());
        let e = kernel_release_supports("5.15.0-91-generic")
            .unwrap_err()
            .to_string();
        assert!(e.contains("6.0") && e.contains("5.15.0-91-generic"), "{e}");
        assert!(kernel_release_supports("").is_err());
    }

    #[test]
    fn http2_never_takes_io_uring() {
        assert_eq!(resolve(IoMode::Auto, false, true).unwrap(), IoMode::Epoll);
        let e = resolve(IoMode::IoUring, false, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("HTTP/2"), "{e}");
    }

    #[test]
    fn https_never_takes_io_uring() {
        assert_eq!(resolve(IoMode::Auto, true, false).unwrap(), IoMode::Epoll);
        let e = resolve(IoMode::IoUring, true, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("https://"), "{e}");
        assert_eq!(resolve(IoMode::Epoll, false, false).unwrap(), IoMode::Epoll);
    }
}
