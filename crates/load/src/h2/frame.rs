//! HTTP/2 frames (RFC 9113 §4, §6): the 9-byte header every frame starts with, and the few
//! frames the client writes itself.

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY: u8 = 0x20;

/// Frame header length.
pub const HEADER_LEN: usize = 9;
/// The largest frame payload either side may send before SETTINGS say otherwise; the client
/// never asks for more, nor sends more.
pub const DEFAULT_MAX_FRAME: usize = 16_384;
/// The flow-control window every stream and the connection start with.
pub const DEFAULT_WINDOW: i64 = 65_535;
/// The largest window flow control allows.
pub const MAX_WINDOW: i64 = (1 << 31) - 1;

/// SETTINGS identifiers.
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

/// What opens every HTTP/2 connection from the client.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A frame's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl FrameHeader {
    /// The header at the start of `b` (which holds at least [`HEADER_LEN`] bytes).
    pub fn parse(b: &[u8]) -> FrameHeader {
        FrameHeader {
            len: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }
}

/// Appends a frame header.
pub fn put_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    debug_assert!(len < 1 << 24);
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// Appends a SETTINGS frame with these (identifier, value) pairs.
pub fn put_settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    put_header(out, pairs.len() * 6, SETTINGS, 0, 0);
    for (id, v) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends a WINDOW_UPDATE frame.
pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_header(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&(increment & 0x7fff_ffff).to_be_bytes());
}

/// A 31-bit big-endian value (stream ids, window increments) at the start of `b`.
pub fn u31(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff
}

/// A 32-bit big-endian value at the start of `b`.
pub fn u32_at(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// An error code's name (RFC 9113 §7), for reports.
pub fn error_name(code: u32) -> &'static str {
    match code {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x4 => "SETTINGS_TIMEOUT",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xa => "CONNECT_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xc => "INADEQUATE_SECURITY",
        0xd => "HTTP_1_1_REQUIRED",
        _ => "unknown error code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip() {
        let mut out = Vec::new();
        put_header(
            &mut out,
            70_000,
            HEADERS,
            END_HEADERS | END_STREAM,
            0x8000_0003,
        );
        assert_eq!(out.len(), HEADER_LEN);
        let h = FrameHeader::parse(&out);
        assert_eq!(
            h,
            FrameHeader {
                len: 70_000,
                kind: HEADERS,
                flags: END_HEADERS | END_STREAM,
                // The reserved bit is never sent and never read.
                stream: 3,
            }
        );
        let mut s = Vec::new();
        put_settings(
            &mut s,
            &[
                (SETTINGS_ENABLE_PUSH, 0),
                (SETTINGS_MAX_FRAME_SIZE, 1 << 14),
            ],
        );
        assert_eq!(FrameHeader::parse(&s).len, 12);
        assert_eq!(&s[9..15], &[0, 2, 0, 0, 0, 0]);
        assert_eq!(u32_at(&s[17..]), 16_384);
    }
}
