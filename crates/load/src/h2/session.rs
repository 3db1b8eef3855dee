//! One connection's HTTP/2 state, driven by the worker's event loop: the bytes it must write
//! (requests, acknowledgements, window updates), the frames it reads (reassembled across reads),
//! the response header blocks decoded (HPACK keeps a table shared by every response, so every
//! block is decoded even when only `:status` is wanted), flow control both ways, and the
//! server's limits and goodbyes.

use super::frame::{self, FrameHeader, DEFAULT_MAX_FRAME, DEFAULT_WINDOW, HEADER_LEN, MAX_WINDOW};
use super::request::H2Request;
use std::borrow::Cow;
use std::collections::VecDeque;

/// Streams the server allows until its SETTINGS say otherwise (no limit: none are sent before
/// its SETTINGS arrive).
const UNLIMITED: u32 = u32::MAX;
/// Highest stream id a client may open.
const LAST_STREAM_ID: u32 = (1 << 31) - 1;
/// Received bytes after which the connection's window is topped up again.
const RECV_REPLENISH: i64 = 1 << 30;
/// The most a header block may take on the wire, its frame headers counted: a block continued
/// beyond it (CONTINUATION frames without end) fails the connection rather than grow forever.
const MAX_HEADER_BLOCK: usize = 1 << 20;
/// The most PING and SETTINGS acknowledgements left unwritten: a server that keeps asking for
/// them without reading them fails the connection rather than grow its queue forever.
const MAX_UNWRITTEN_ACKS: u32 = 10_000;

/// What reading produced, for the worker to account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A stream's response is complete: its final status and the bytes it took on the wire.
    Response {
        stream: u32,
        status: u16,
        bytes: u64,
    },
    /// The server reset a stream (RST_STREAM) with this error code.
    Reset { stream: u32, code: u32 },
    /// The server is closing the connection: streams above `last` were not and will not be
    /// processed.
    GoAway { last: u32, code: u32 },
}

/// A stream awaiting its response.
#[derive(Debug)]
struct Stream {
    id: u32,
    /// Which of the requests it was opened for (its index in the mix).
    req: usize,
    /// Final status, once its HEADERS arrived (0 before).
    status: u16,
    bytes: u64,
    /// Flow-control window for sending its body.
    window: i64,
    /// Body bytes sent so far.
    body_sent: usize,
    /// Response body bytes received (DATA payloads, padding left out).
    received: u64,
    /// The final head's `content-length`, which the body must match.
    expect: Option<u64>,
}

/// The HTTP/2 side of one connection.
pub struct Session {
    out: Vec<u8>,
    out_pos: usize,
    next_stream: u32,
    inbuf: Vec<u8>,
    decoder: super::hpack::HeaderDecoder,
    /// A header block continued across CONTINUATION frames: its stream and END_STREAM.
    continuing: Option<(u32, bool)>,
    block: Vec<u8>,
    /// Wire bytes of the header block being continued.
    block_wire: usize,
    streams: Vec<Stream>,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (unlimited until told).
    max_streams: u32,
    /// Whether the server's first SETTINGS arrived (nothing else may come first).
    settled: bool,
    peer_initial_window: i64,
    send_window: i64,
    /// Streams whose body waits for flow-control window, oldest first.
    blocked: VecDeque<u32>,
    recv_unacked: i64,
    /// Acknowledgements queued since the queue was last written out whole.
    unwritten_acks: u32,
    goaway: Option<u32>,
    /// The lowest MAX_CONCURRENT_STREAMS the server announced (None: never limited).
    pub announced_max_streams: Option<u32>,
    /// Response bodies, kept only when asked (one-off probes read them; the load does not).
    pub captured: Option<Vec<u8>>,
}

/// A connection-level failure: the reason, in words.
pub type Failure = Cow<'static, str>;

impl Session {
    /// A new connection's session, its preface and SETTINGS already queued: no push, windows
    /// as large as allowed so the server never waits for the client to read.
    pub fn new() -> Session {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            &mut out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, MAX_WINDOW as u32),
            ],
        );
        frame::put_window_update(&mut out, 0, (MAX_WINDOW - DEFAULT_WINDOW) as u32);
        Session {
            out,
            out_pos: 0,
            next_stream: 1,
            inbuf: Vec::new(),
            decoder: super::hpack::HeaderDecoder::new(),
            continuing: None,
            block: Vec::new(),
            block_wire: 0,
            streams: Vec::new(),
            max_streams: UNLIMITED,
            settled: false,
            peer_initial_window: DEFAULT_WINDOW,
            send_window: DEFAULT_WINDOW,
            blocked: VecDeque::new(),
            recv_unacked: 0,
            unwritten_acks: 0,
            goaway: None,
            announced_max_streams: None,
            captured: None,
        }
    }

    /// How many streams may be open at once now, up to `want`: none before the server's
    /// SETTINGS (which may limit them), none once the server said goodbye or the stream ids
    /// ran out.
    pub fn room(&self, want: usize) -> usize {
        if !self.settled || self.spent() {
            return 0;
        }
        want.min(self.max_streams as usize)
    }

    /// Whether the server's SETTINGS arrived: the connection is ready for requests.
    pub fn settled(&self) -> bool {
        self.settled
    }

    /// Whether the connection can carry no more requests (the server said goodbye, or the
    /// stream ids ran out): once its streams are done it should be replaced.
    pub fn spent(&self) -> bool {
        self.goaway.is_some() || self.next_stream > LAST_STREAM_ID
    }

    /// Opens a stream for `req`, queueing its frames; returns its id.
    pub fn open_stream(&mut self, req: &H2Request) -> u32 {
        self.open_stream_of(std::slice::from_ref(req), 0)
    }

    /// Opens a stream for request `i` of `reqs` (a request mix), queueing its frames; returns
    /// its id. Later reads must be given the same `reqs`.
    pub fn open_stream_of(&mut self, reqs: &[H2Request], i: usize) -> u32 {
        let req = &reqs[i];
        let id = self.next_stream;
        self.next_stream = self.next_stream.saturating_add(2);
        let at = self.out.len();
        self.out.extend_from_slice(&req.headers);
        self.out[at + 5..at + 9].copy_from_slice(&id.to_be_bytes());
        self.streams.push(Stream {
            id,
            req: i,
            status: 0,
            bytes: 0,
            window: self.peer_initial_window,
            body_sent: 0,
            received: 0,
            expect: None,
        });
        if req.body.is_some() {
            self.blocked.push_back(id);
            self.send_bodies(reqs);
        }
        id
    }

    /// Bytes waiting to be written.
    pub fn pending(&self) -> &[u8] {
        &self.out[self.out_pos..]
    }

    /// `n` bytes of [`Session::pending`] were written.
    pub fn written(&mut self, n: usize) {
        self.out_pos += n;
        if self.out_pos >= self.out.len() {
            self.out.clear();
            self.out_pos = 0;
            self.unwritten_acks = 0;
        }
    }

    /// Reads `data`, appending what it completed to `events`; an error fails the connection.
    pub fn feed(
        &mut self,
        data: &[u8],
        req: &H2Request,
        events: &mut Vec<Event>,
    ) -> Result<(), Failure> {
        self.feed_mix(data, std::slice::from_ref(req), events)
    }

    /// [`Session::feed`] for streams opened from a request mix (`reqs` as given to
    /// [`Session::open_stream_of`]).
    pub fn feed_mix(
        &mut self,
        data: &[u8],
        reqs: &[H2Request],
        events: &mut Vec<Event>,
    ) -> Result<(), Failure> {
        if self.inbuf.is_empty() {
            let used = self.frames(data, reqs, events)?;
            self.inbuf.extend_from_slice(&data[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.inbuf);
            buf.extend_from_slice(data);
            let used = self.frames(&buf, reqs, events)?;
            buf.drain(..used);
            self.inbuf = buf;
        }
        Ok(())
    }

    /// Handles every whole frame at the start of `b`; returns the bytes used.
    fn frames(
        &mut self,
        b: &[u8],
        reqs: &[H2Request],
        events: &mut Vec<Event>,
    ) -> Result<usize, Failure> {
        let mut off = 0;
        while b.len() - off >= HEADER_LEN {
            if !self.settled && b[off..].starts_with(b"HTTP/") {
                return Err(
                    "the server answered in HTTP/1.x: it does not speak HTTP/2 on this \
                            port (for http:// URLs, cleartext HTTP/2 by prior knowledge)"
                        .into(),
                );
            }
            let h = FrameHeader::parse(&b[off..]);
            if h.len > DEFAULT_MAX_FRAME {
                return Err(format!(
                    "the server sent a frame of {} bytes, above the {} allowed",
                    h.len, DEFAULT_MAX_FRAME
                )
                .into());
            }
            let end = off + HEADER_LEN + h.len;
            if end > b.len() {
                break;
            }
            self.frame(h, &b[off + HEADER_LEN..end], reqs, events)?;
            off = end;
        }
        Ok(off)
    }

    fn frame(
        &mut self,
        h: FrameHeader,
        p: &[u8],
        reqs: &[H2Request],
        events: &mut Vec<Event>,
    ) -> Result<(), Failure> {
        if !self.settled && h.kind != frame::SETTINGS {
            return Err(
                "the server's first frame was not SETTINGS: it does not speak HTTP/2".into(),
            );
        }
        if let Some((stream, _)) = self.continuing {
            if h.kind != frame::CONTINUATION || h.stream != stream {
                return Err("a header block was interrupted by another frame".into());
            }
        }
        match h.kind {
            frame::DATA => self.data(h, p, reqs, events),
            frame::HEADERS => self.headers(h, p, reqs, events),
            frame::CONTINUATION => {
                let Some((stream, end_stream)) = self.continuing else {
                    return Err("CONTINUATION without a header block to continue".into());
                };
                self.block_wire += HEADER_LEN + h.len;
                if self.block_wire > MAX_HEADER_BLOCK {
                    return Err(format!(
                        "the server continued a header block beyond {MAX_HEADER_BLOCK} bytes"
                    )
                    .into());
                }
                self.block.extend_from_slice(p);
                if h.flags & frame::END_HEADERS != 0 {
                    self.continuing = None;
                    let block = std::mem::take(&mut self.block);
                    let r = self.header_block(stream, &block, end_stream, h.len, reqs, events);
                    self.block = block;
                    self.block.clear();
                    r?;
                } else if let Some(s) = self.stream_mut(stream) {
                    s.bytes += (HEADER_LEN + h.len) as u64;
                }
                Ok(())
            }
            frame::RST_STREAM => {
                if h.stream == 0 || p.len() != 4 {
                    return Err("a malformed RST_STREAM frame".into());
                }
                if let Some(i) = self.streams.iter().position(|s| s.id == h.stream) {
                    self.streams.swap_remove(i);
                    events.push(Event::Reset {
                        stream: h.stream,
                        code: frame::u32_at(p),
                    });
                }
                Ok(())
            }
            frame::SETTINGS => self.settings(h, p, reqs),
            frame::PING => {
                if h.stream != 0 || p.len() != 8 {
                    return Err("a malformed PING frame".into());
                }
                if h.flags & frame::ACK == 0 {
                    self.ack_queued()?;
                    frame::put_header(&mut self.out, 8, frame::PING, frame::ACK, 0);
                    self.out.extend_from_slice(p);
                }
                Ok(())
            }
            frame::GOAWAY => {
                if h.stream != 0 || p.len() < 8 {
                    return Err("a malformed GOAWAY frame".into());
                }
                let last = frame::u31(p);
                let last = self.goaway.map_or(last, |g| g.min(last));
                self.goaway = Some(last);
                events.push(Event::GoAway {
                    last,
                    code: frame::u32_at(&p[4..]),
                });
                Ok(())
            }
            frame::WINDOW_UPDATE => {
                if p.len() != 4 {
                    return Err("a malformed WINDOW_UPDATE frame".into());
                }
                let inc = i64::from(frame::u31(p));
                if h.stream == 0 {
                    self.send_window += inc;
                } else if let Some(s) = self.stream_mut(h.stream) {
                    s.window += inc;
                }
                if self.send_window > MAX_WINDOW {
                    return Err("the server overflowed the connection's flow-control window".into());
                }
                self.send_bodies(reqs);
                Ok(())
            }
            frame::PUSH_PROMISE => {
                Err("the server pushed a stream, though the client disabled push".into())
            }
            // PRIORITY, and extension frames, which a client may ignore.
            _ => Ok(()),
        }
    }

    fn data(
        &mut self,
        h: FrameHeader,
        p: &[u8],
        reqs: &[H2Request],
        events: &mut Vec<Event>,
    ) -> Result<(), Failure> {
        if h.stream == 0 {
            return Err("a DATA frame on stream 0".into());
        }
        let content = unpadded(&h, p, "DATA")?;
        // Flow control counts the whole payload, padding included.
        self.recv_unacked += h.len as i64;
        if self.recv_unacked >= RECV_REPLENISH {
            frame::put_window_update(&mut self.out, 0, self.recv_unacked as u32);
            self.recv_unacked = 0;
        }
        let Some(i) = self.streams.iter().position(|s| s.id == h.stream) else {
            return Ok(());
        };
        if let Some(kept) = self.captured.as_mut() {
            kept.extend_from_slice(content);
        }
        self.streams[i].bytes += (HEADER_LEN + h.len) as u64;
        self.streams[i].received += content.len() as u64;
        if h.flags & frame::END_STREAM != 0 {
            self.complete(i, reqs, events)?;
        }
        Ok(())
    }

    fn headers(
        &mut self,
        h: FrameHeader,
        p: &[u8],
        reqs: &[H2Request],
        events: &mut Vec<Event>,
    ) -> Result<(), Failure> {
        if h.stream == 0 {
            return Err("a HEADERS frame on stream 0".into());
        }
        let p = unpadded(&h, p, "HEADERS")?;
        // The stream dependency and weight a PRIORITY flag adds come first.
        let start = if h.flags & frame::PRIORITY != 0 { 5 } else { 0 };
        let end = p.len();
        if start > end {
            return Err("a malformed HEADERS frame".into());
        }
        let end_stream = h.flags & frame::END_STREAM != 0;
        if h.flags & frame::END_HEADERS == 0 {
            self.block.clear();
            self.block.extend_from_slice(&p[start..end]);
            self.block_wire = HEADER_LEN + h.len;
            self.continuing = Some((h.stream, end_stream));
            if let Some(s) = self.stream_mut(h.stream) {
                s.bytes += (HEADER_LEN + h.len) as u64;
            }
            return Ok(());
        }
        self.header_block(h.stream, &p[start..end], end_stream, h.len, reqs, events)
    }

    /// A whole header block: decoded (always: the table it updates serves later blocks), its
    /// status kept if it is the response's final head, the stream completed if it ends there.
    fn header_block(
        &mut self,
        stream: u32,
        block: &[u8],
        end_stream: bool,
        frame_len: usize,
        reqs: &[H2Request],
        events: &mut Vec<Event>,
    ) -> Result<(), Failure> {
        let status = self
            .decoder
            .decode(block)
            .map_err(|e| format!("the server's header block failed to decode (HPACK): {e}"))?;
        let Some(i) = self.streams.iter().position(|s| s.id == stream) else {
            return Ok(());
        };
        let s = &mut self.streams[i];
        s.bytes += (HEADER_LEN + frame_len) as u64;
        if s.status == 0 {
            match status {
                // An informational head; the final one follows.
                Some(100..=199) if !end_stream => {}
                Some(code) => {
                    s.status = code;
                    s.expect = self.decoder.content_length();
                }
                None => return Err("a response without a valid :status".into()),
            }
        }
        if end_stream {
            self.complete(i, reqs, events)?;
        }
        Ok(())
    }

    fn complete(
        &mut self,
        i: usize,
        reqs: &[H2Request],
        events: &mut Vec<Event>,
    ) -> Result<(), Failure> {
        let s = self.streams.swap_remove(i);
        if s.status == 0 {
            return Err("a stream ended without a response head".into());
        }
        // A body that is not the length its head announced makes the response malformed
        // (RFC 9113 §8.1.1), except where the head describes a body that is not sent.
        let bodiless =
            reqs.get(s.req).is_some_and(|r| r.head) || matches!(s.status, 100..=199 | 204 | 304);
        if let Some(expect) = s.expect.filter(|&n| n != s.received && !bodiless) {
            return Err(match expect {
                u64::MAX => format!(
                    "stream {} had a content-length that is not one number",
                    s.id
                ),
                n => format!(
                    "stream {}'s body was {} bytes, not the {n} its content-length announced",
                    s.id, s.received
                ),
            }
            .into());
        }
        events.push(Event::Response {
            stream: s.id,
            status: s.status,
            bytes: s.bytes,
        });
        Ok(())
    }

    fn settings(&mut self, h: FrameHeader, p: &[u8], reqs: &[H2Request]) -> Result<(), Failure> {
        if h.stream != 0 {
            return Err("a SETTINGS frame on a stream".into());
        }
        if h.flags & frame::ACK != 0 {
            return if p.is_empty() {
                Ok(())
            } else {
                Err("a SETTINGS acknowledgement with a payload".into())
            };
        }
        if !p.len().is_multiple_of(6) {
            return Err("a malformed SETTINGS frame".into());
        }
        self.settled = true;
        for pair in p.chunks_exact(6) {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            let v = frame::u32_at(&pair[2..]);
            match id {
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                    self.max_streams = v;
                    self.announced_max_streams =
                        Some(self.announced_max_streams.map_or(v, |m| m.min(v)));
                }
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    let v = i64::from(v);
                    if v > MAX_WINDOW {
                        return Err("the server's initial window is above the maximum".into());
                    }
                    let delta = v - self.peer_initial_window;
                    self.peer_initial_window = v;
                    for s in &mut self.streams {
                        s.window += delta;
                    }
                }
                frame::SETTINGS_MAX_FRAME_SIZE if !(16_384..=16_777_215).contains(&v) => {
                    return Err("the server's maximum frame size is out of range".into());
                }
                _ => {}
            }
        }
        self.ack_queued()?;
        frame::put_header(&mut self.out, 0, frame::SETTINGS, frame::ACK, 0);
        self.send_bodies(reqs);
        Ok(())
    }

    /// Sends as much of the waiting bodies as the windows allow, oldest stream first.
    fn send_bodies(&mut self, reqs: &[H2Request]) {
        while let Some(&id) = self.blocked.front() {
            let Some(i) = self.streams.iter().position(|s| s.id == id) else {
                self.blocked.pop_front();
                continue;
            };
            let Some(body) = reqs
                .get(self.streams[i].req)
                .and_then(|r| r.body.as_deref())
            else {
                self.blocked.pop_front();
                continue;
            };
            loop {
                let s = &mut self.streams[i];
                let left = body.len() - s.body_sent;
                let n = (left as i64)
                    .min(self.send_window)
                    .min(s.window)
                    .min(DEFAULT_MAX_FRAME as i64)
                    .max(0) as usize;
                if n == 0 && left > 0 {
                    return;
                }
                let last = n == left;
                frame::put_header(
                    &mut self.out,
                    n,
                    frame::DATA,
                    if last { frame::END_STREAM } else { 0 },
                    id,
                );
                self.out
                    .extend_from_slice(&body[s.body_sent..s.body_sent + n]);
                s.body_sent += n;
                s.window -= n as i64;
                self.send_window -= n as i64;
                if last {
                    break;
                }
            }
            self.blocked.pop_front();
        }
    }

    /// Counts an acknowledgement about to be queued; too many unwritten fail the connection.
    fn ack_queued(&mut self) -> Result<(), Failure> {
        self.unwritten_acks += 1;
        if self.unwritten_acks > MAX_UNWRITTEN_ACKS {
            return Err(format!(
                "the server sent more than {MAX_UNWRITTEN_ACKS} PING or SETTINGS frames \
                 without reading their acknowledgements"
            )
            .into());
        }
        Ok(())
    }

    fn stream_mut(&mut self, id: u32) -> Option<&mut Stream> {
        self.streams.iter_mut().find(|s| s.id == id)
    }
}

/// The payload of a DATA or HEADERS frame without its padding (when PADDED: a length byte
/// first, that many bytes last); padding that does not fit in the payload breaks the protocol.
fn unpadded<'p>(h: &FrameHeader, p: &'p [u8], kind: &str) -> Result<&'p [u8], Failure> {
    if h.flags & frame::PADDED == 0 {
        return Ok(p);
    }
    match p.split_first() {
        Some((&pad, rest)) if usize::from(pad) <= rest.len() => {
            Ok(&rest[..rest.len() - usize::from(pad)])
        }
        _ => Err(format!("a {kind} frame with more padding than payload").into()),
    }
}
