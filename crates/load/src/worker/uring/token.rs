//! What a completion is about: the operation, the connection and the connection's generation
//! packed into the 64-bit user data each submission carries back.

/// The operation a submission did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// Waiting for a non-blocking connect to finish (a poll for writability).
    Connect = 1,
    /// The connection's multishot receive.
    Recv = 2,
    /// Sending the tail of the request batch.
    Send = 3,
}

/// Packs `op`, connection `idx` and its `generation` (the low 24 bits).
#[inline]
pub(super) fn pack(op: Op, idx: usize, generation: u32) -> u64 {
    (op as u64) << 56 | u64::from(generation & 0xff_ffff) << 32 | idx as u64 & 0xffff_ffff
}

/// The operation, connection and generation of `data`; `None` for data no submission packed.
#[inline]
pub(super) fn unpack(data: u64) -> Option<(Op, usize, u32)> {
    let op = match data >> 56 {
        1 => Op::Connect,
        2 => Op::Recv,
        3 => Op::Send,
        _ => return None,
    };
    Some((
        op,
        (data & 0xffff_ffff) as usize,
        (data >> 32) as u32 & 0xff_ffff,
    ))
}

/// Whether a completion packed with `packed` belongs to the connection's current socket.
#[inline]
pub(super) fn current(packed: u32, generation: u32) -> bool {
    packed == generation & 0xff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks() {
        let d = pack(Op::Send, 70_000, 0x1ff_fffe);
        assert_eq!(unpack(d), Some((Op::Send, 70_000, 0xff_fffe)));
        assert!(current(0xff_fffe, 0x1ff_fffe));
        assert!(!current(0xff_fffe, 0x1ff_ffff));
        assert_eq!(unpack(0), None);
    }
}
