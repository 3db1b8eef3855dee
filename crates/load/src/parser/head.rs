//! The response head: the status line, then header lines up to the empty line. Long stretches
//! (a whole status line, the reason phrase, a header name, a value nobody interprets) are read
//! in one scan; the rest byte by byte, so a head may arrive split anywhere.

use super::fields::Hdr;
use super::token::is_token;
use super::{ParseError, Response, ResponseParser, State, MAX_HEAD};

const PREFIX: &[u8] = b"HTTP/1.";

impl ResponseParser {
    /// Reads head bytes from `data[*i..]` until the head ends or the data does; returns the
    /// response when it has no body. Leaves `*i` after the last byte used.
    #[inline]
    pub(super) fn feed_head(
        &mut self,
        data: &[u8],
        i: &mut usize,
    ) -> Result<Option<Response>, ParseError> {
        let mut head_start = *i;
        while *i < data.len() {
            if self.scan_head(data, i, &mut head_start)? {
                continue;
            }
            let b = data[*i];
            *i += 1;
            self.bytes += 1;
            let head_ended = match self.state {
                State::Start
                | State::Version(_)
                | State::Minor
                | State::StatusSp
                | State::Status(_) => {
                    self.status_line_byte(b, *i, &mut head_start)?;
                    false
                }
                _ => self.header_line_byte(b)?,
            };
            if head_ended {
                self.account_head(*i - head_start)?;
                if let Some(r) = self.end_head()? {
                    return Ok(Some(r));
                }
                if self.state.part() != super::Part::Head {
                    return Ok(None);
                }
            }
        }
        self.account_head(*i - head_start)?;
        Ok(None)
    }

    /// Counts `n` more head bytes against [`MAX_HEAD`].
    #[inline]
    fn account_head(&mut self, n: usize) -> Result<(), ParseError> {
        self.head_bytes += n as u64;
        if self.head_bytes > MAX_HEAD {
            return Err(ParseError::HeadTooLarge);
        }
        Ok(())
    }

    /// The stretches read in one scan. True when it consumed what it could and the state should
    /// be looked at again; false when the next byte is for the byte-by-byte path.
    #[inline]
    fn scan_head(
        &mut self,
        data: &[u8],
        i: &mut usize,
        head_start: &mut usize,
    ) -> Result<bool, ParseError> {
        match self.state {
            State::Reason => {
                self.skip_line(data, i, State::LineStart);
                Ok(true)
            }
            State::Value if self.hdr == Hdr::Other => {
                self.skip_line(data, i, State::LineStart);
                Ok(true)
            }
            State::Name => {
                // The byte that ends the name is handled byte by byte.
                let rest = &data[*i..];
                let n = rest
                    .iter()
                    .position(|&c| !is_token(c))
                    .unwrap_or(rest.len());
                for &c in &rest[..n] {
                    self.push_name(c);
                }
                *i += n;
                self.bytes += n as u64;
                Ok(*i == data.len())
            }
            State::Start if data.len() - *i >= 13 && data[*i..*i + 7] == *PREFIX => {
                self.scan_status_line(&data[*i..*i + 13], i, head_start)
            }
            _ => Ok(false),
        }
    }

    /// The whole status line prefix in hand (`d`, 13 bytes): `HTTP/1.x ddd` then SP or CR.
    /// False when it is not that shape, for the byte path to find the error.
    #[inline]
    fn scan_status_line(
        &mut self,
        d: &[u8],
        i: &mut usize,
        head_start: &mut usize,
    ) -> Result<bool, ParseError> {
        let digits = d[9].is_ascii_digit() && d[10].is_ascii_digit() && d[11].is_ascii_digit();
        if !(d[7].is_ascii_digit() && d[8] == b' ' && digits && matches!(d[12], b' ' | b'\r')) {
            return Ok(false);
        }
        self.start_head();
        *head_start = *i;
        self.minor = d[7] - b'0';
        self.status =
            u16::from(d[9] - b'0') * 100 + u16::from(d[10] - b'0') * 10 + u16::from(d[11] - b'0');
        if self.status < 100 {
            return Err(ParseError::StatusLine);
        }
        *i += 13;
        self.bytes += 13;
        self.state = State::Reason;
        Ok(true)
    }

    /// One byte of a status line that arrived in pieces; `i` is the position after it.
    fn status_line_byte(
        &mut self,
        b: u8,
        i: usize,
        head_start: &mut usize,
    ) -> Result<(), ParseError> {
        match self.state {
            State::Start => {
                if b == b'\r' || b == b'\n' {
                    // Tolerate stray line ends between responses.
                    self.bytes -= 1;
                    *head_start = i;
                    return Ok(());
                }
                self.start_head();
                *head_start = i - 1;
                if b != b'H' {
                    return Err(ParseError::StatusLine);
                }
                self.state = State::Version(1);
            }
            State::Version(n) => {
                if b != PREFIX[n as usize] {
                    return Err(ParseError::StatusLine);
                }
                self.state = if n as usize + 1 == PREFIX.len() {
                    State::Minor
                } else {
                    State::Version(n + 1)
                };
            }
            State::Minor => {
                if !b.is_ascii_digit() {
                    return Err(ParseError::StatusLine);
                }
                self.minor = b - b'0';
                self.state = State::StatusSp;
            }
            State::StatusSp => {
                if b != b' ' {
                    return Err(ParseError::StatusLine);
                }
                self.state = State::Status(0);
            }
            State::Status(n) => self.status_byte(n, b)?,
            _ => unreachable!("not a status line state"),
        }
        Ok(())
    }

    /// The `n`th byte after `HTTP/1.x `: three digits, then the separator before the reason.
    fn status_byte(&mut self, n: u8, b: u8) -> Result<(), ParseError> {
        if n < 3 {
            if !b.is_ascii_digit() {
                return Err(ParseError::StatusLine);
            }
            self.status = self.status * 10 + u16::from(b - b'0');
            self.state = State::Status(n + 1);
            return Ok(());
        }
        if self.status < 100 {
            return Err(ParseError::StatusLine);
        }
        match b {
            b' ' | b'\r' => self.state = State::Reason,
            b'\n' => self.state = State::LineStart,
            _ => return Err(ParseError::StatusLine),
        }
        Ok(())
    }

    /// One byte of the header lines; true when it was the line end of the empty last line.
    #[inline]
    fn header_line_byte(&mut self, b: u8) -> Result<bool, ParseError> {
        match self.state {
            State::LineStart if b == b' ' || b == b'\t' => {
                // Obsolete line folding: the previous field's value continues here, and
                // the fold separates list items like whitespace does.
                if !self.field_open {
                    return Err(ParseError::Header);
                }
                self.end_token();
                self.state = State::ValueWs;
            }
            State::LineStart => return self.line_start(b),
            State::HeadEndLf => {
                if b != b'\n' {
                    return Err(ParseError::Header);
                }
                return Ok(true);
            }
            State::Name => {
                if b == b':' {
                    self.classify_name();
                    self.field_open = true;
                    self.state = State::ValueWs;
                } else if is_token(b) {
                    self.push_name(b);
                } else {
                    return Err(ParseError::Header);
                }
            }
            State::ValueWs | State::Value => match b {
                // The value is interpreted once the next line shows it is not folded.
                b'\n' => self.state = State::LineStart,
                b' ' | b'\t' if self.state == State::ValueWs => {}
                _ => {
                    self.state = State::Value;
                    self.value_byte(b)?;
                }
            },
            _ => unreachable!("not a header line state"),
        }
        Ok(false)
    }

    /// The first byte of a line that is not a fold: the previous field is complete, and this
    /// line is the end of the head or a new field's name. True at the end of the head.
    fn line_start(&mut self, b: u8) -> Result<bool, ParseError> {
        if self.field_open {
            self.field_open = false;
            self.end_value()?;
        }
        match b {
            b'\r' => self.state = State::HeadEndLf,
            b'\n' => return Ok(true),
            _ if is_token(b) => {
                self.name[0] = b.to_ascii_lowercase();
                self.name_len = 1;
                self.state = State::Name;
            }
            _ => return Err(ParseError::Header),
        }
        Ok(false)
    }
}
