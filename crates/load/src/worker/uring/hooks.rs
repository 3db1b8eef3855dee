//! What the shared worker code hands to the io_uring path instead of doing itself: sends to
//! submit (instead of a write call) and sockets of dropped connections to shut down.

use super::super::Worker;
use crate::transport::Transport;

/// Work the shared code deferred to the ring's next submission.
#[derive(Default)]
pub(in crate::worker) struct Deferred {
    /// Connections with requests queued (`Conn::unsent`) to send.
    pub sends: Vec<usize>,
    /// Sockets of connections just dropped; operations may still hold them.
    pub closed: Vec<Transport>,
}

impl Worker<'_> {
    /// On the io_uring path: notes that `idx` has bytes to send and returns true (the ring
    /// sends them); false on the epoll path, which writes them now.
    #[inline]
    pub(in crate::worker) fn defer_send(&mut self, idx: usize) -> bool {
        match self.deferred.as_mut() {
            Some(d) => {
                d.sends.push(idx);
                true
            }
            None => false,
        }
    }

    /// On the io_uring path: takes connection `idx`'s socket before the connection is reset, so
    /// it is shut down (ending the receive and send that hold it) rather than only closed.
    #[inline]
    pub(in crate::worker) fn hand_over_socket(&mut self, idx: usize) {
        if let Some(d) = self.deferred.as_mut() {
            if let Some(t) = self.conns[idx].stream.take() {
                d.closed.push(t);
            }
        }
    }
}
