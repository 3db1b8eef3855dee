//! `--shutdown-hold-mib N --shutdown-linger-ms MS`: what some servers do when told to stop —
//! their worker threads are gone, then they grow (flushing, serialising state) and linger — so
//! tests can check that nothing of it is read as the measured window's.

use std::time::Duration;

/// Allocates and touches `mib` MiB, then keeps it for `linger` before returning.
pub fn grow_and_linger(mib: u64, linger: Duration) {
    let bytes = usize::try_from(mib << 20).unwrap_or(usize::MAX);
    // A non-zero fill writes every page, so the memory is resident.
    let memory = vec![0x5au8; bytes];
    std::thread::sleep(linger);
    drop(std::hint::black_box(memory));
}
