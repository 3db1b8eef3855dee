//! The first connect, before any worker starts: finds an address that answers, and can be
//! interrupted at once. Its connection serves the checks that follow (the TLS handshake, the
//! HTTP/2 preface), so the server sees one connection before the load, from the load's source.

use crate::LoadError;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Connects once to find an address that answers (and fail clearly if none does). Waits at most
/// `timeout` per address, and gives up at once when `cancel` is set.
/// From `source` when given, as the first connection of the load would. Returns the address
/// and the connection, blocking, for the checks to go on with.
pub(crate) fn preflight(
    url: &str,
    addrs: &[SocketAddr],
    source: Option<IpAddr>,
    timeout: Duration,
    cancel: &AtomicBool,
) -> Result<(SocketAddr, TcpStream), LoadError> {
    let mut last = None;
    for &addr in addrs {
        match connect_interruptible(addr, source, timeout, cancel) {
            Ok(tcp) => return Ok((addr, tcp)),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                return Err(LoadError::Interrupted)
            }
            Err(e) => last = Some((addr, e)),
        }
    }
    let (addr, source) = last.expect("at least one address");
    Err(LoadError::Connect {
        url: url.to_string(),
        addr,
        source,
    })
}

/// A non-blocking connect watched in short slices, so `cancel` is noticed within 50 ms.
fn connect_interruptible(
    addr: SocketAddr,
    source: Option<IpAddr>,
    timeout: Duration,
    cancel: &AtomicBool,
) -> std::io::Result<TcpStream> {
    use mio::{Events, Interest, Poll, Token};
    let mut stream = crate::source::connect_from(addr, source)?;
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut stream, Token(0), Interest::WRITABLE)?;
    let mut events = Events::with_capacity(4);
    let start = Instant::now();
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        match poll.poll(&mut events, Some(left.min(Duration::from_millis(50)))) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        if events.is_empty() {
            continue;
        }
        if let Some(e) = stream.take_error()? {
            return Err(e);
        }
        match stream.peer_addr() {
            Ok(_) => {
                poll.registry().deregister(&mut stream)?;
                // SAFETY: the descriptor is taken out of `stream`, which no longer owns it.
                let tcp = unsafe { TcpStream::from_raw_fd(stream.into_raw_fd()) };
                tcp.set_nonblocking(false)?;
                return Ok(tcp);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotConnected => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Whether a read or write on a blocking connection with a short timeout (the checks poll in
/// slices, to notice a cancel) only ran out of its slice or was interrupted: try again.
pub(crate) fn slice_ended(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(e.kind(), K::WouldBlock | K::TimedOut | K::Interrupted)
}
