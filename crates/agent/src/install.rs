//! Puts this very rigor binary on a load host: same version, same bytes (checked by SHA-256),
//! under the remote user's cache, `${XDG_CACHE_HOME:-$HOME/.cache}/rigor/agent/<sha256
//! prefix>/rigor`. A binary already there with the right checksum is used as it is; otherwise
//! the local one is streamed over the transport's stdin, checked remotely, and moved in place.

use super::error::AgentError;
use super::transport::{sh_quote, HostSpec};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Hex digits of the checksum that name the cache folder.
const PREFIX_LEN: usize = 16;

/// The local binary to install: its path and SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalBinary {
    pub path: PathBuf,
    /// Lower-case hex.
    pub sha256: String,
}

impl LocalBinary {
    /// `path`, checksummed.
    pub fn new(path: &Path) -> Result<LocalBinary, AgentError> {
        let mut f = std::fs::File::open(path).map_err(|source| AgentError::Io {
            doing: "reading the rigor binary",
            path: path.to_path_buf(),
            source,
        })?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f.read(&mut buf).map_err(|source| AgentError::Io {
                doing: "reading the rigor binary",
                path: path.to_path_buf(),
                source,
            })?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        let sha256 = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(LocalBinary {
            path: path.to_path_buf(),
            sha256,
        })
    }

    /// The running executable, checksummed once per process.
    pub fn current() -> Result<LocalBinary, AgentError> {
        static CURRENT: OnceLock<Result<LocalBinary, Arc<AgentError>>> = OnceLock::new();
        CURRENT
            .get_or_init(|| {
                let exe = std::env::current_exe().map_err(AgentError::NoExecutable)?;
                LocalBinary::new(&exe).map_err(Arc::new)
            })
            .clone()
            .map_err(AgentError::Binary)
    }

    /// The cache folder on the host, as an sh expression (expanded remotely).
    pub fn remote_dir(&self) -> String {
        format!(
            "\"${{XDG_CACHE_HOME:-$HOME/.cache}}/rigor/agent/{}\"",
            &self.sha256[..PREFIX_LEN]
        )
    }

    /// The installed binary on the host, as an sh expression.
    pub fn remote_path(&self) -> String {
        format!("{}/rigor", self.remote_dir())
    }
}

/// What [`ensure`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// The right binary was already on the host.
    Reused,
    /// The binary was copied (absent, or its checksum differed).
    Copied,
}

/// How long the check of the host's cached binary may take: a few commands, far less.
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How long copying the binary may take: some MiB over a slow link.
const COPY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// The name `uname -m` gives this build's architecture.
fn local_machine() -> &'static str {
    std::env::consts::ARCH
}

/// Whether a remote `uname -m` is this build's architecture.
fn same_machine(remote: &str) -> bool {
    remote == local_machine() || (local_machine() == "aarch64" && remote == "arm64")
}

/// Makes sure the host has `bin` (same checksum) in its cache, copying it when not.
pub fn ensure(host: &HostSpec, bin: &LocalBinary) -> Result<Install, AgentError> {
    let refused = |why: String| AgentError::Install {
        host: host.label(),
        why,
    };
    let check = format!(
        "f={path}; \
         if ! command -v sha256sum >/dev/null 2>&1; then sum=no-sha256sum; \
         elif [ -f \"$f\" ]; then sum=$(sha256sum \"$f\" | cut -d ' ' -f 1); \
         else sum=absent; fi; \
         echo \"rigor-install $(uname -s) $(uname -m) $sum\"",
        path = bin.remote_path()
    );
    let r = host.run(&check, None, "checking the installed rigor", CHECK_TIMEOUT)?;
    let found = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("rigor-install "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>());
    let (os, machine, sum) = match (r.status.success(), found.as_deref()) {
        (true, Some([os, machine, sum])) => (*os, *machine, *sum),
        (true, _) => {
            return Err(refused(format!(
                "the remote check printed no answer (is the remote shell sh-compatible?): {:?}",
                r.stdout.trim()
            )))
        }
        (false, _) => {
            return Err(host.failure("checking the installed rigor", r.status, &r.stderr))
        }
    };
    if os != "Linux" {
        return Err(refused(format!(
            "the host runs {os}; a rigor load agent runs on Linux only"
        )));
    }
    if !same_machine(machine) {
        return Err(refused(format!(
            "the host is {machine} but this rigor is built for {}: install a rigor built for \
             {machine} there",
            local_machine()
        )));
    }
    if sum == "no-sha256sum" {
        return Err(refused(
            "sha256sum is not installed on the host (coreutils or busybox has it)".into(),
        ));
    }
    if sum == bin.sha256 {
        return Ok(Install::Reused);
    }
    copy(host, bin)?;
    Ok(Install::Copied)
}

/// Streams the binary to a temporary file beside its place, checks its checksum there, and
/// only then makes it executable and moves it in.
fn copy(host: &HostSpec, bin: &LocalBinary) -> Result<(), AgentError> {
    let script = format!(
        "set -e; d={dir}; mkdir -p \"$d\"; t=\"$d/rigor.tmp.$$\"; \
         trap 'rm -f \"$t\"' EXIT; cat > \"$t\"; \
         got=$(sha256sum \"$t\" | cut -d ' ' -f 1); \
         if [ \"$got\" != {want} ]; then echo \"checksum mismatch: got $got\" >&2; exit 3; fi; \
         chmod 755 \"$t\"; mv -f \"$t\" \"$d/rigor\"; trap - EXIT; echo rigor-installed",
        dir = bin.remote_dir(),
        want = sh_quote(&bin.sha256),
    );
    let r = host.run(&script, Some(&bin.path), "copying rigor", COPY_TIMEOUT)?;
    if r.status.success() && r.stdout.lines().any(|l| l == "rigor-installed") {
        return Ok(());
    }
    let mut e = host.failure(
        &format!(
            "copying rigor ({}) to {}",
            bin.path.display(),
            bin.remote_path()
        ),
        r.status,
        &r.stderr,
    );
    if let (Some(input), AgentError::Transport { why, .. }) = (r.input_error, &mut e) {
        why.push_str(&format!(" (sending the binary: {input})"));
    }
    Err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_path_is_named_by_the_checksum() {
        let f = std::env::temp_dir().join(format!("rigor-install-sum-{}", std::process::id()));
        std::fs::write(&f, b"abc").unwrap();
        let b = LocalBinary::new(&f).unwrap();
        let _ = std::fs::remove_file(&f);
        assert_eq!(
            b.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            b.remote_path(),
            "\"${XDG_CACHE_HOME:-$HOME/.cache}/rigor/agent/ba7816bf8f01cfea\"/rigor"
        );
        assert!(same_machine(std::env::consts::ARCH));
        assert!(!same_machine("sparc64"));
    }
}
