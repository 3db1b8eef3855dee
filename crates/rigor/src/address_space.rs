//! An address-space limit (`ulimit -v`) too small for rigor's threads is refused before any
//! work starts. Every thread reserves its stack and a signal stack, and the C allocator
//! reserves 64 MiB of address space per arena: under a limit of a few dozen MiB, a thread can
//! fail to start inside the runtime, which aborts the process instead of returning an error.

use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};

/// The smallest address-space limit rigor's working commands start under: the binary, a
/// dozen thread stacks and a few allocator arenas, with room for the load's buffers.
pub const FLOOR_BYTES: u64 = 256 * 1024 * 1024;

/// Refuses a soft `RLIMIT_AS` below [`FLOOR_BYTES`], naming the limit and the fix.
pub fn check() -> anyhow::Result<()> {
    let Ok((soft, _)) = getrlimit(Resource::RLIMIT_AS) else {
        return Ok(());
    };
    if soft == RLIM_INFINITY || soft >= FLOOR_BYTES {
        return Ok(());
    }
    anyhow::bail!(
        "the address-space limit is {} KiB (ulimit -v), below the {} KiB rigor needs to start \
         its threads; raise it (`ulimit -v unlimited`, or at least {})",
        soft / 1024,
        FLOOR_BYTES / 1024,
        FLOOR_BYTES / 1024
    )
}
