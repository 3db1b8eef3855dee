//! What the integration tests of every crate share: the root check behind `#[ignore = "needs
//! root"]`, skips that are counted instead of passing in silence, and files the page cache does
//! not hold.
//!
//! A test that needs root is marked `#[ignore = "needs root"]` and starts with
//! [`require_root`]: `cargo test` lists it as ignored, `cargo test -- --ignored` (as root, as
//! `.ci/run` does) runs it, and run without root it fails saying why rather than passing. A test
//! that needs something a machine may lack (an IPv6 loopback, a cgroup counter) ends with
//! [`skip`], which prints a `test-skip: REASON: TEST` line that `.ci/run` counts and lists.

pub mod nginx;

use std::io::Write;
use std::path::Path;

/// The prefix of a skip line; `.ci/run` counts the lines that carry it.
pub const SKIP_PREFIX: &str = "test-skip: ";

/// Whether this process runs as root, which cgroups, raised priorities and dropping caches need.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Fails at once, naming the way to run it, a root-only test someone ran without root: an
/// ignored test that is asked for must run, not pass without looking.
pub fn require_root() {
    assert!(
        is_root(),
        "this test needs root: run it as root with `cargo test --workspace -- --ignored`"
    );
}

/// Says that the running test did not check what it is for, and why, in a line that reaches
/// the terminal even though the harness captures the test's output, so the skip is counted
/// instead of passing in silence. The caller returns right after.
pub fn skip(reason: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let line = format!("{SKIP_PREFIX}{reason}: {test}\n");
    // Written to the process's stderr directly: `eprintln!` would be captured with the output
    // of a passing test and never shown.
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Writes `mib` MiB to `path` and evicts it from the page cache, so whoever reads it next is
/// charged for reading it.
pub fn cold_file(path: &Path, mib: usize) {
    std::fs::write(path, vec![7u8; mib << 20]).unwrap();
    let f = std::fs::File::open(path).unwrap();
    f.sync_all().unwrap();
    nix::fcntl::posix_fadvise(
        &f,
        0,
        0,
        nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
    )
    .expect("posix_fadvise");
}
