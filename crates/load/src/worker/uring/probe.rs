//! Whether the kernel has what the io_uring path uses: a ring that waits with a timeout
//! (`EXT_ARG`), receive, send and poll operations, and a provided buffer ring.

use super::bufring::BufRing;
use io_uring::{opcode, register::Probe};

/// `Ok` when a worker's ring would set up; `Err` names what is missing.
pub(crate) fn probe_io_uring() -> Result<(), String> {
    let ring = super::build_ring(8).map_err(|e| {
        format!("io_uring_setup failed ({e}): disabled (kernel.io_uring_disabled) or not built in")
    })?;
    if !ring.params().is_feature_ext_arg() {
        return Err("this kernel's io_uring cannot wait with a timeout (EXT_ARG, 5.11)".into());
    }
    let mut probe = Probe::new();
    ring.submitter()
        .register_probe(&mut probe)
        .map_err(|e| format!("io_uring cannot list its operations ({e})"))?;
    for (code, name) in [
        (opcode::RecvMulti::CODE, "recv"),
        (opcode::Send::CODE, "send"),
        (opcode::PollAdd::CODE, "poll"),
    ] {
        if !probe.is_supported(code) {
            return Err(format!("this kernel's io_uring has no {name} operation"));
        }
    }
    let bufs = BufRing::register(&ring, 8, 64)
        .map_err(|e| format!("io_uring cannot register a provided buffer ring ({e}, 5.19)"))?;
    let _ = ring.submitter().unregister_buf_ring(super::bufring::GROUP);
    drop(bufs);
    Ok(())
}
