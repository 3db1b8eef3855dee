//! A connection's byte stream, plain TCP or TLS over it, driven without blocking by the workers'
//! event loops: the handshake advanced as far as the socket allows, plaintext read and written
//! through rustls, encrypted records flushed whenever the socket takes them.

use mio::net::TcpStream;
use rustls::ClientConnection;
use std::io::{self, Read, Write};

/// TCP, or TLS over TCP.
pub struct Transport {
    tcp: TcpStream,
    tls: Option<Box<ClientConnection>>,
}

/// A TLS failure as an I/O error, so it travels the same paths; see [`crate::tls::rustls_error`].
fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl Transport {
    /// A connection (or connect in progress) without TLS: http://, or https:// before its
    /// TCP connect completes.
    pub fn plain(tcp: TcpStream) -> Transport {
        Transport { tcp, tls: None }
    }

    /// `tcp` with a TLS client session whose handshake has yet to run.
    pub fn tls(tcp: TcpStream, session: ClientConnection) -> Transport {
        Transport {
            tcp,
            tls: Some(Box::new(session)),
        }
    }

    /// The socket, its TLS session (if any) dropped.
    pub fn into_tcp(self) -> TcpStream {
        self.tcp
    }

    /// The socket, for connect checks and socket options.
    pub fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// Whether this is TLS over TCP.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The application protocol ALPN chose (TLS only).
    pub fn alpn(&self) -> Option<&[u8]> {
        self.tls.as_ref().and_then(|t| t.alpn_protocol())
    }

    /// Whether this handshake resumed an earlier session.
    pub fn resumed(&self) -> bool {
        self.tls
            .as_ref()
            .and_then(|t| t.handshake_kind())
            .is_some_and(|k| k == rustls::HandshakeKind::Resumed)
    }

    /// Advances the TLS handshake: `Ok(true)` once it is complete (its last records may still
    /// wait in [`Transport::flush`]), `Ok(false)` while it waits for the socket. A plain
    /// connection has none.
    pub fn handshake(&mut self) -> io::Result<bool> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(true);
        };
        loop {
            while tls.wants_write() {
                match tls.write_tls(&mut self.tcp) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if !tls.is_handshaking() {
                return Ok(true);
            }
            match tls.read_tls(&mut self.tcp) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection during the TLS handshake",
                    ))
                }
                Ok(_) => {
                    if let Err(e) = tls.process_new_packets() {
                        // Best effort: tell the server why (the alert rustls queued).
                        let _ = tls.write_tls(&mut self.tcp);
                        return Err(tls_error(e));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads plaintext: `Ok(0)` at the end of the stream (with or without TLS's close_notify),
    /// `WouldBlock` when the socket has nothing more.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(tls) = self.tls.as_mut() else {
            return self.tcp.read(buf);
        };
        let mut tcp_eof = false;
        loop {
            match tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && tcp_eof => return Ok(0),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match tls.read_tls(&mut self.tcp) {
                Ok(0) => tcp_eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            if let Err(e) = tls.process_new_packets() {
                let _ = tls.write_tls(&mut self.tcp);
                return Err(tls_error(e));
            }
        }
    }

    /// Writes plaintext: over TLS, what rustls takes (encrypted into records that go out now or
    /// at the next [`Transport::flush`]); `WouldBlock` when the socket takes nothing.
    pub fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.tls.is_none() {
            return self.tcp.write(data);
        }
        self.flush()?;
        let n = match self.tls.as_mut() {
            Some(tls) => tls.writer().write(data)?,
            None => 0,
        };
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        match self.flush() {
            Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
            _ => Ok(n),
        }
    }

    /// Sends the TLS records waiting to go out; `WouldBlock` when the socket is full.
    pub fn flush(&mut self) -> io::Result<()> {
        let Some(tls) = self.tls.as_mut() else {
            return Ok(());
        };
        while tls.wants_write() {
            match tls.write_tls(&mut self.tcp) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Whether TLS records wait for room in the socket.
    pub fn wants_write(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.wants_write())
    }
}
