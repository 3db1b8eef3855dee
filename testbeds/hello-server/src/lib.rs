#![warn(missing_docs)]
//! hello-server: a fast HTTP/1.1 testbed for rigor, with knobs for latency, stalls, errors,
//! broken framing, readiness, memory growth and crashes. Tests start it in-process with
//! [`start`]; the `hello-server` binary wraps the same code behind flags (see [`cli`]).

pub mod cli;
mod config;
mod http;
pub mod knobs;
mod metrics;
mod response;
mod shared;
mod stats;
mod timer;
mod worker;

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Instant;

pub use config::{default_threads, Config};
pub use stats::StatsSnapshot;

use shared::Shared;
use worker::{Worker, WAKER};

/// Listen backlog: large so hundreds of simultaneous connects never wait on SYN retries.
const BACKLOG: i32 = 4096;

/// A running server. Dropping it shuts it down too, so a failing test cannot leak threads.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

/// Binds, spawns the worker threads and returns at once; the server answers as soon as this
/// returns (use port 0 and [`Server::addr`] in tests to avoid port clashes).
pub fn start(config: Config) -> io::Result<Server> {
    config.validate()?;
    let (host, port) = (config.host, config.port);
    let threads = config.threads;
    let mut polls = Vec::with_capacity(threads);
    let mut wakers = Vec::with_capacity(threads);
    let mut senders = Vec::with_capacity(threads);
    let mut inboxes = Vec::with_capacity(threads);
    for _ in 0..threads {
        let poll = mio::Poll::new()?;
        wakers.push(mio::Waker::new(poll.registry(), WAKER)?);
        polls.push(poll);
        let (tx, rx) = mpsc::channel();
        senders.push(tx);
        inboxes.push(rx);
    }
    let shared = Arc::new(Shared::new(config, wakers, Instant::now()));
    // What the server holds at start is taken before it listens: no connection is accepted,
    // even into the backlog, while it grows.
    shared.hold.at_start();
    std::thread::sleep(shared.config.listen_delay);
    let listener = std::net::TcpListener::bind((host, port))?;
    // SAFETY: listen on our own bound socket only raises its backlog.
    unsafe { libc::listen(listener.as_raw_fd(), BACKLOG) };
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;

    let mut listener = Some(mio::net::TcpListener::from_std(listener));
    let mut server = Server {
        addr,
        shared: Arc::clone(&shared),
        threads: Vec::with_capacity(threads),
    };
    for (id, (poll, inbox)) in polls.into_iter().zip(inboxes).enumerate() {
        let (listener, peers) = match id {
            0 => (listener.take(), senders.clone()),
            _ => (None, Vec::new()),
        };
        let worker = Worker::new(id, Arc::clone(&shared), poll, listener, inbox, peers)?;
        let handle = std::thread::Builder::new()
            .name(format!("hello-{id}"))
            .spawn(move || worker.run())?;
        server.threads.push(handle);
    }
    Ok(server)
}

impl Server {
    /// The bound address, with the real port when the config asked for port 0.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Current counters, summed over all worker threads.
    pub fn stats(&self) -> StatsSnapshot {
        self.shared.snapshot()
    }

    /// Stops every worker, closes every connection and the listener, and waits for the threads.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        for waker in &self.shared.wakers {
            let _ = waker.wake();
        }
        for handle in self.threads.drain(..) {
            let _ = handle.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
