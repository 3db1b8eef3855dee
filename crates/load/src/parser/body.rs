//! What follows the head: no body (HEAD, 204, 304, a zero length), a Content-Length body, a
//! chunked one (see `chunked`), or one that runs until the server closes. Body bytes are
//! counted and passed to the caller's callback, never stored.

use super::{ParseError, Response, ResponseParser, State};

impl ResponseParser {
    /// Called at the end of the head; returns a response when it has no body.
    pub(super) fn end_head(&mut self) -> Result<Option<Response>, ParseError> {
        if (100..200).contains(&self.status) {
            if self.status == 101 {
                return Err(ParseError::SwitchingProtocols);
            }
            // Interim response (100 Continue, 103 Early Hints): the final one follows.
            self.start_head();
            self.state = State::Start;
            return Ok(None);
        }
        if self.head_request || self.status == 204 || self.status == 304 {
            return Ok(Some(self.finish()));
        }
        if self.chunked {
            self.start_chunk();
            return Ok(None);
        }
        match self.content_length {
            Some(0) => Ok(Some(self.finish())),
            Some(n) => {
                self.remaining = n;
                self.state = State::Body;
                Ok(None)
            }
            None => {
                self.close = true;
                self.state = State::UntilClose;
                Ok(None)
            }
        }
    }

    /// Reads a Content-Length body (returning the response once it is complete) or a body that
    /// runs until close (all of `data`).
    #[inline]
    pub(super) fn feed_body<F: FnMut(&[u8])>(
        &mut self,
        data: &[u8],
        i: &mut usize,
        on_body: &mut F,
    ) -> Option<Response> {
        if self.state == State::UntilClose {
            on_body(&data[*i..]);
            self.bytes += (data.len() - *i) as u64;
            *i = data.len();
            return None;
        }
        if self.take_body(data, i, on_body) {
            Some(self.finish())
        } else {
            None
        }
    }

    /// Passes up to `remaining` bytes to `on_body`; true when none remain. Shared by
    /// Content-Length bodies and chunk data.
    #[inline]
    pub(super) fn take_body<F: FnMut(&[u8])>(
        &mut self,
        data: &[u8],
        i: &mut usize,
        on_body: &mut F,
    ) -> bool {
        let n = (self.remaining.min((data.len() - *i) as u64)) as usize;
        on_body(&data[*i..*i + n]);
        *i += n;
        self.bytes += n as u64;
        self.remaining -= n as u64;
        self.remaining == 0
    }
}
