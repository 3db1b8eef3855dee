//! One-off requests (readiness, validation, metrics) over blocking sockets: TCP, or TLS over it.

use super::TlsClient;
use rustls::{ClientConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::TcpStream;

/// A blocking connection, plain or TLS; the socket's timeouts bound every read and write.
pub(crate) enum BlockingStream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl BlockingStream {
    /// `tcp`, over TLS when `client` is given (the handshake happens with the first write).
    pub fn new(
        tcp: TcpStream,
        client: Option<&TlsClient>,
    ) -> Result<BlockingStream, rustls::Error> {
        Ok(match client {
            None => BlockingStream::Plain(tcp),
            Some(c) => BlockingStream::Tls(Box::new(StreamOwned::new(c.connection()?, tcp))),
        })
    }

    /// The socket, for its timeouts.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            BlockingStream::Plain(t) => t,
            BlockingStream::Tls(s) => s.get_ref(),
        }
    }
}

impl Read for BlockingStream {
    /// The end of the stream is `Ok(0)`, whether or not the server sent TLS's close_notify.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            BlockingStream::Plain(t) => t.read(buf),
            BlockingStream::Tls(s) => match s.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
                r => r,
            },
        }
    }
}

impl Write for BlockingStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            BlockingStream::Plain(t) => t.write(buf),
            BlockingStream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            BlockingStream::Plain(t) => t.flush(),
            BlockingStream::Tls(s) => s.flush(),
        }
    }
}
