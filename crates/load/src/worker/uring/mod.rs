//! The io_uring path of a worker (http:// only): the same `Worker` state and accounting as the
//! epoll path, with its sockets driven by completions instead of readiness. Each loop turn
//! queues what the turn decided (sends straight from the plan's request batch, connect polls,
//! re-armed receives) and makes one `io_uring_enter` that submits them all and sleeps until a
//! completion or the next deadline (the wait's own timeout, so no timer file is needed).
//! Responses arrive through one multishot receive per connection, into a provided buffer ring.
//!
//! `hooks` is where the shared code hands work to this path: `Worker::flush` defers sends, and
//! `Worker::kill` hands over the socket, which is shut down so the operations still holding it
//! complete and release it.

mod bufring;
mod complete;
mod drive;
mod hooks;
mod probe;
mod submit;
mod token;

pub(super) use hooks::Deferred;
pub(crate) use probe::probe_io_uring;

use super::Worker;
use bufring::BufRing;
use io_uring::IoUring;
use std::io;

/// Size of each receive buffer: a page holds a burst of small pipelined answers; small buffers
/// keep the ring of many connections small (at most 1024 of them, 4 MiB), and a larger answer
/// simply takes several.
const BUF_SIZE: usize = 4096;

/// The io_uring state a connection's operations need beside its `Conn`.
#[derive(Default, Clone, Copy)]
struct Armed {
    /// The generation of the socket the flags below are about.
    generation: u32,
    recv: bool,
    send: bool,
}

/// A worker driven by io_uring. The ring is dropped before the buffers its receives fill.
pub(super) struct Driver<'w, 'a> {
    ring: IoUring,
    bufs: BufRing,
    armed: Vec<Armed>,
    w: &'w mut Worker<'a>,
}

/// Sets up a ring (one issuer, completions run when this thread asks for them) and its
/// buffer ring, sized for `conns` connections.
fn rings(conns: usize) -> io::Result<(IoUring, BufRing)> {
    let conns = conns.max(1);
    let sq = (conns * 2 + 64).next_power_of_two().min(4096) as u32;
    let ring = build_ring(sq)?;
    let count = (conns * 4).next_power_of_two().clamp(64, 1024) as u16;
    let bufs = BufRing::register(&ring, count, BUF_SIZE)?;
    Ok((ring, bufs))
}

impl<'w, 'a> Driver<'w, 'a> {
    /// Puts worker `w` on `ring`: from now on the shared code defers its sends and hands over
    /// the sockets it drops.
    fn new(w: &'w mut Worker<'a>, ring: IoUring, bufs: BufRing) -> Self {
        w.deferred = Some(Deferred::default());
        Driver {
            ring,
            bufs,
            armed: vec![Armed::default(); w.conns.len()],
            w,
        }
    }
}

impl Drop for Driver<'_, '_> {
    /// Takes the buffer ring back from the kernel first, so no receive the ring's teardown has
    /// yet to cancel can write into buffers about to be freed.
    fn drop(&mut self) {
        let _ = self.ring.submitter().unregister_buf_ring(bufring::GROUP);
    }
}

/// A ring with `sq` submission entries and room for several completions per connection;
/// single-issuer with deferred task running where the kernel has them (6.1), else plain.
pub(super) fn build_ring(sq: u32) -> io::Result<IoUring> {
    let tuned = IoUring::builder()
        .setup_cqsize(sq * 8)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(sq);
    match tuned {
        Ok(r) => Ok(r),
        Err(_) => IoUring::builder().setup_cqsize(sq * 8).build(sq),
    }
}

/// Runs worker `w` (its connections opened) on io_uring: its ring is set up before it meets
/// the other workers at t0 through `sync` (which it does even when that fails). A ring that
/// cannot be set up is an error, or with `fallback` the worker runs on epoll instead; `Ok`
/// says whether it ran on io_uring.
pub(super) fn run(
    w: &mut Worker<'_>,
    sync: &dyn Fn() -> std::time::Instant,
    leader: bool,
    live: &crate::Live,
    cancel: &std::sync::atomic::AtomicBool,
    fallback: bool,
) -> io::Result<bool> {
    let rings = rings(w.conns.len());
    let t0 = sync();
    match rings {
        Ok((ring, bufs)) => {
            let mut d = Driver::new(w, ring, bufs);
            d.w.t0 = t0;
            d.start();
            d.drive(leader, live, cancel)?;
            Ok(true)
        }
        Err(_) if fallback => {
            w.t0 = t0;
            w.activate_open_connections();
            w.event_loop(leader, live, cancel)?;
            Ok(false)
        }
        Err(e) => Err(e),
    }
}
