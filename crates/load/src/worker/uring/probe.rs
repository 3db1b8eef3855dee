//! Whether the kernel has what the io_uring path uses: a ring that waits with a timeout
//! (`EXT_ARG`), receive, send and poll operations, and a provided buffer ring.

use super::bufring::BufRing;
use crate::io::UringUnsupported;
use io_uring::{opcode, register::Probe};

/// `Ok` when a worker's ring would set up; `Err` names what is missing.
pub(crate) fn probe_io_uring() -> Result<(), UringUnsupported> {
    let ring = super::build_ring(8).map_err(|e| UringUnsupported::Setup {
        reason: e.to_string(),
    })?;
    if !ring.params().is_feature_ext_arg() {
        return Err(UringUnsupported::NoExtArg);
    }
    let mut probe = Probe::new();
    ring.submitter()
        .register_probe(&mut probe)
        .map_err(|e| UringUnsupported::NoProbe {
            reason: e.to_string(),
        })?;
    for (code, name) in [
        (opcode::RecvMulti::CODE, "recv"),
        (opcode::Send::CODE, "send"),
        (opcode::PollAdd::CODE, "poll"),
    ] {
        if !probe.is_supported(code) {
            return Err(UringUnsupported::NoOperation { name });
        }
    }
    let bufs = BufRing::register(&ring, 8, 64).map_err(|e| UringUnsupported::NoBufRing {
        reason: e.to_string(),
    })?;
    let _ = ring.submitter().unregister_buf_ring(super::bufring::GROUP);
    drop(bufs);
    Ok(())
}
