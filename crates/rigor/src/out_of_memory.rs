//! Out of memory is an error, not a crash: under a memory limit (`ulimit -v`, a cgroup's
//! memory.max) an allocation that fails ends rigor with a sentence on stderr and exit 1 instead
//! of the runtime's abort (exit 134) with a half-printed backtrace. rigor never relies on an
//! allocation failing softly (no `try_reserve`), so every failed allocation is fatal anyway.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write;

/// The system allocator, with a failed allocation said and ended cleanly.
pub struct Allocator;

// SAFETY: every call is passed unchanged to the system allocator; only a null result is
// intercepted, and then the process ends.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        checked(System.alloc(layout), layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        checked(System.alloc_zeroed(layout), layout.size())
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        checked(System.realloc(ptr, layout, new_size), new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Allocator = Allocator;

/// `ptr`, or the end of the process when the allocation of `size` bytes failed.
fn checked(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        out_of_memory(size);
    }
    ptr
}

/// A fixed buffer to format into: nothing may be allocated once memory ran out.
struct Line {
    buf: [u8; 320],
    len: usize,
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Says what could not be allocated and exits 1 (a run that failed), without allocating and
/// without unwinding (the failed allocation may be inside the allocator's caller's invariants).
fn out_of_memory(size: usize) -> ! {
    let mut line = Line {
        buf: [0; 320],
        len: 0,
    };
    let _ = writeln!(
        line,
        "error: out of memory: rigor could not allocate {size} bytes (a memory limit on rigor \
         such as `ulimit -v` or its cgroup's memory.max is too low for it)"
    );
    // SAFETY: writes a buffer this function owns to stderr, then ends the process.
    unsafe {
        libc::write(2, line.buf.as_ptr().cast(), line.len);
        libc::_exit(i32::from(crate::exit::Exit::Failed.code()))
    }
}
