//! The header fields that frame a response: Content-Length, Transfer-Encoding and Connection.
//! Their values are interpreted byte by byte as they arrive, with fixed-size buffers; every
//! other field is skipped unread.

use super::{ParseError, ResponseParser};

/// Header name bytes kept: enough for the longest name interpreted here.
pub(super) const NAME_CAP: usize = 20;
/// List-item bytes kept: enough for the longest item interpreted (`keep-alive`, `chunked`).
pub(super) const TOKEN_CAP: usize = 16;

/// The header whose value is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hdr {
    Other,
    ContentLength,
    TransferEncoding,
    Connection,
}

impl ResponseParser {
    /// Adds a byte of a header name (lowercased; only the first [`NAME_CAP`] are kept).
    #[inline]
    pub(super) fn push_name(&mut self, c: u8) {
        if self.name_len < NAME_CAP {
            self.name[self.name_len] = c.to_ascii_lowercase();
        }
        self.name_len = (self.name_len + 1).min(NAME_CAP);
    }

    /// The name ended at its colon: decides how the value is read.
    pub(super) fn classify_name(&mut self) {
        let n = &self.name[..self.name_len];
        self.hdr = if self.name_len >= NAME_CAP {
            Hdr::Other
        } else if n == b"content-length" {
            Hdr::ContentLength
        } else if n == b"transfer-encoding" {
            Hdr::TransferEncoding
        } else if n == b"connection" {
            Hdr::Connection
        } else {
            Hdr::Other
        };
        self.tok_len = 0;
        self.tok_long = false;
        self.cl_value = 0;
        self.cl_digits = 0;
        self.cl_ws_after = false;
        if self.hdr == Hdr::TransferEncoding {
            self.te_last_chunked = false;
        }
    }

    /// A list item of Transfer-Encoding or Connection ended (at a comma, a fold or the line end).
    pub(super) fn end_token(&mut self) {
        if self.tok_len == 0 {
            return;
        }
        let t = &self.tok[..self.tok_len];
        match self.hdr {
            Hdr::TransferEncoding => self.te_last_chunked = !self.tok_long && t == b"chunked",
            Hdr::Connection if !self.tok_long => {
                if t == b"close" {
                    self.close = true;
                } else if t == b"keep-alive" {
                    self.keep_alive = true;
                }
            }
            _ => {}
        }
        self.tok_len = 0;
        self.tok_long = false;
    }

    /// One byte of an interpreted header's value.
    #[inline]
    pub(super) fn value_byte(&mut self, b: u8) -> Result<(), ParseError> {
        match self.hdr {
            Hdr::Other => {}
            Hdr::ContentLength => self.length_byte(b)?,
            Hdr::TransferEncoding | Hdr::Connection => match b {
                b',' => self.end_token(),
                b' ' | b'\t' | b'\r' => {}
                _ => {
                    if self.tok_len < TOKEN_CAP {
                        self.tok[self.tok_len] = b.to_ascii_lowercase();
                        self.tok_len += 1;
                    } else {
                        self.tok_long = true;
                    }
                }
            },
        }
        Ok(())
    }

    /// One byte of a Content-Length value: decimal digits, whitespace only around them.
    #[inline]
    fn length_byte(&mut self, b: u8) -> Result<(), ParseError> {
        match b {
            b'0'..=b'9' => {
                if self.cl_ws_after {
                    return Err(ParseError::ContentLength);
                }
                self.cl_value = self
                    .cl_value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(b - b'0')))
                    .ok_or(ParseError::ContentLength)?;
                self.cl_digits += 1;
            }
            b' ' | b'\t' | b'\r' => self.cl_ws_after = self.cl_digits > 0,
            _ => return Err(ParseError::ContentLength),
        }
        Ok(())
    }

    /// A field's value is complete (the next line is not a fold): applies it to the framing.
    pub(super) fn end_value(&mut self) -> Result<(), ParseError> {
        match self.hdr {
            Hdr::Other => {}
            Hdr::ContentLength => {
                if self.cl_digits == 0 {
                    return Err(ParseError::ContentLength);
                }
                if let Some(prev) = self.content_length {
                    if prev != self.cl_value {
                        return Err(ParseError::ContentLength);
                    }
                }
                self.content_length = Some(self.cl_value);
            }
            Hdr::TransferEncoding => {
                self.end_token();
                self.chunked = self.te_last_chunked;
                if !self.chunked {
                    // A transfer coding other than chunked last: the body runs until close.
                    self.content_length = None;
                    self.close = true;
                }
            }
            Hdr::Connection => self.end_token(),
        }
        self.hdr = Hdr::Other;
        Ok(())
    }
}
