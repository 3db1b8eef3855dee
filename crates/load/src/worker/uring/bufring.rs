//! The provided buffer ring multishot receives fill: buffers the kernel picks from as data
//! arrives, handed back as soon as their bytes are copied out for the parser.

use io_uring::types::BufRingEntry;
use io_uring::IoUring;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

/// The buffer group every receive of a worker's ring takes its buffers from.
pub(super) const GROUP: u16 = 0;

/// A registered ring of `count` buffers of `size` bytes each.
pub(super) struct BufRing {
    entries: *mut BufRingEntry,
    layout: Layout,
    bufs: Vec<u8>,
    size: usize,
    mask: u16,
    tail: u16,
}

impl BufRing {
    /// Allocates the ring and its buffers, offers every buffer and registers the ring with
    /// `ring` under [`GROUP`]. `count` is a power of two of at most 32768.
    pub(super) fn register(ring: &IoUring, count: u16, size: usize) -> io::Result<BufRing> {
        debug_assert!(count.is_power_of_two());
        let bytes = usize::from(count) * std::mem::size_of::<BufRingEntry>();
        let layout = Layout::from_size_align(bytes.max(4096), 4096).map_err(io::Error::other)?;
        // SAFETY: a non-zero size; zeroed entries are valid (the tail starts at 0).
        let entries = unsafe { alloc_zeroed(layout) } as *mut BufRingEntry;
        if entries.is_null() {
            return Err(io::ErrorKind::OutOfMemory.into());
        }
        let mut br = BufRing {
            entries,
            layout,
            bufs: vec![0; usize::from(count) * size],
            size,
            mask: count - 1,
            tail: 0,
        };
        for bid in 0..count {
            br.offer(bid);
        }
        br.publish();
        // SAFETY: the entries stay allocated (and in place) until `Drop`, after the ring that
        // uses them has been dropped by the owner (see `Drop`'s order note).
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(entries as u64, count, GROUP, 0)?;
        }
        Ok(br)
    }

    /// The first `len` bytes of buffer `bid`, as the kernel filled them.
    pub(super) fn bytes(&self, bid: u16, len: usize) -> &[u8] {
        let at = usize::from(bid) * self.size;
        &self.bufs[at..at + len.min(self.size)]
    }

    /// Queues buffer `bid` to be offered again; [`BufRing::publish`] makes it visible.
    pub(super) fn offer(&mut self, bid: u16) {
        let addr = self.bufs.as_ptr() as u64 + u64::from(bid) * self.size as u64;
        // SAFETY: `tail & mask` is inside the ring's `mask + 1` entries.
        let e = unsafe { &mut *self.entries.add(usize::from(self.tail & self.mask)) };
        e.set_addr(addr);
        e.set_len(self.size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Hands the offered buffers to the kernel (one release store of the ring's tail).
    pub(super) fn publish(&self) {
        // SAFETY: the ring's base is page-aligned and its first entry initialised; the tail
        // field is a u16 the kernel reads with acquire semantics.
        unsafe {
            let tail = BufRingEntry::tail(self.entries) as *const AtomicU16;
            (*tail).store(self.tail, Ordering::Release);
        }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: allocated in `register` with this layout. The owner unregisters the ring and
        // drops its io_uring first (`Driver`'s `Drop` and field order), so the kernel no longer
        // reads these entries or writes these buffers.
        unsafe { dealloc(self.entries as *mut u8, self.layout) };
    }
}
