//! A chunked body: hex size lines (extensions ignored), chunk data each followed by a line end,
//! a zero-size chunk, then trailer lines up to an empty one. Sizes are bounded to 15 hex digits
//! so they cannot overflow.

use super::{ParseError, Response, ResponseParser, State};

impl ResponseParser {
    /// Reads chunked-body bytes from `data[*i..]` until the response ends or the data does.
    #[inline]
    pub(super) fn feed_chunked<F: FnMut(&[u8])>(
        &mut self,
        data: &[u8],
        i: &mut usize,
        on_body: &mut F,
    ) -> Result<Option<Response>, ParseError> {
        while *i < data.len() {
            match self.state {
                State::ChunkData => {
                    if self.take_body(data, i, on_body) {
                        self.state = State::ChunkDataCr;
                    }
                    continue;
                }
                State::TrailerLine => {
                    self.skip_line(data, i, State::TrailerStart);
                    continue;
                }
                _ => {}
            }
            let b = data[*i];
            *i += 1;
            self.bytes += 1;
            if self.chunk_byte(b)? {
                return Ok(Some(self.finish()));
            }
        }
        Ok(None)
    }

    /// One byte outside chunk data and trailer lines; true when it ended the response.
    fn chunk_byte(&mut self, b: u8) -> Result<bool, ParseError> {
        match self.state {
            State::ChunkSize => self.chunk_size_byte(b)?,
            State::ChunkExt => {
                if b == b'\n' {
                    self.end_chunk_size();
                }
            }
            State::ChunkSizeLf => {
                lf(b)?;
                self.end_chunk_size();
            }
            State::ChunkDataCr => match b {
                b'\r' => self.state = State::ChunkDataLf,
                b'\n' => self.start_chunk(),
                _ => return Err(ParseError::Chunk),
            },
            State::ChunkDataLf => {
                lf(b)?;
                self.start_chunk();
            }
            State::TrailerStart => match b {
                b'\r' => self.state = State::TrailerEndLf,
                b'\n' => return Ok(true),
                _ => self.state = State::TrailerLine,
            },
            State::TrailerEndLf => {
                lf(b)?;
                return Ok(true);
            }
            _ => unreachable!("not a chunk framing state"),
        }
        Ok(false)
    }

    /// One byte of a chunk-size line: hex digits, then an extension or the line end.
    fn chunk_size_byte(&mut self, b: u8) -> Result<(), ParseError> {
        let v = match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'a'..=b'f' => Some(b - b'a' + 10),
            b'A'..=b'F' => Some(b - b'A' + 10),
            _ => None,
        };
        match (v, b) {
            (Some(v), _) => {
                self.chunk_digits += 1;
                if self.chunk_digits > 15 {
                    return Err(ParseError::Chunk);
                }
                self.remaining = self.remaining * 16 + u64::from(v);
            }
            (None, b';' | b' ' | b'\t') if self.chunk_digits > 0 => self.state = State::ChunkExt,
            (None, b'\r') if self.chunk_digits > 0 => self.state = State::ChunkSizeLf,
            (None, b'\n') if self.chunk_digits > 0 => self.end_chunk_size(),
            _ => return Err(ParseError::Chunk),
        }
        Ok(())
    }

    /// Expects the next chunk-size line.
    pub(super) fn start_chunk(&mut self) {
        self.chunk_digits = 0;
        self.remaining = 0;
        self.state = State::ChunkSize;
    }

    fn end_chunk_size(&mut self) {
        self.state = if self.remaining == 0 {
            State::TrailerStart
        } else {
            State::ChunkData
        };
    }
}

/// The LF a CR in the chunk framing must be followed by.
#[inline]
fn lf(b: u8) -> Result<(), ParseError> {
    if b == b'\n' {
        Ok(())
    } else {
        Err(ParseError::Chunk)
    }
}
