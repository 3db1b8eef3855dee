//! Reading responses' header blocks (HPACK, RFC 7541) for the one field the engine needs,
//! `:status`, while keeping the dynamic table in step with the server's encoder: every field
//! is walked and every indexed one accounted, but the table holds only what later lookups ask
//! (each entry's size, whether its name is `:status`, and its status), so decoding allocates
//! nothing and copies no header. Huffman-coded strings are decoded into one reused buffer.

use std::collections::VecDeque;

/// The static table's names (RFC 7541 Appendix A), index 1 first; entries 8–14 are
/// `:status` with the values in [`STATIC_STATUS`].
const STATIC_NAMES: [&str; 61] = [
    ":authority",
    ":method",
    ":method",
    ":path",
    ":path",
    ":scheme",
    ":scheme",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "accept",
    "access-control-allow-origin",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "link",
    "location",
    "max-forwards",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "refresh",
    "retry-after",
    "server",
    "set-cookie",
    "strict-transport-security",
    "transfer-encoding",
    "user-agent",
    "vary",
    "via",
    "www-authenticate",
];

/// The statuses of static entries 8 to 14.
const STATIC_STATUS: [u16; 7] = [200, 204, 206, 304, 400, 404, 500];

/// The dynamic table's size limit the client announces (the default: it never changes it).
pub const TABLE_SIZE: usize = 4096;

/// What a dynamic table entry is, for later lookups.
#[derive(Debug, Clone, Copy)]
struct Entry {
    name_len: usize,
    /// Its size as HPACK counts it: name and value lengths plus 32.
    size: usize,
    status_name: bool,
    status: Option<u16>,
    /// Whether its name is `content-length`, and its value as a number.
    length_name: bool,
    length: Option<u64>,
}

/// One connection's decoder of response header blocks.
pub struct HeaderDecoder {
    /// Newest first.
    table: VecDeque<Entry>,
    size: usize,
    max_size: usize,
    scratch: Vec<u8>,
    /// The `content-length` of the block decoded last (see [`HeaderDecoder::content_length`]).
    content_length: Option<u64>,
}

/// Why a block could not be decoded.
pub type DecodeError = &'static str;

impl HeaderDecoder {
    /// A decoder with an empty dynamic table of the default size.
    pub fn new() -> HeaderDecoder {
        HeaderDecoder {
            table: VecDeque::new(),
            size: 0,
            max_size: TABLE_SIZE,
            scratch: Vec::with_capacity(256),
            content_length: None,
        }
    }

    /// Walks one whole header block: the `:status` it carries, if any.
    pub fn decode(&mut self, mut b: &[u8]) -> Result<Option<u16>, DecodeError> {
        let mut status = None;
        let mut length = None;
        self.content_length = None;
        while let Some(&first) = b.first() {
            if first & 0x80 != 0 {
                let (index, rest) = integer(b, 7)?;
                b = rest;
                let e = self.lookup(index)?;
                if e.status_name {
                    status = e.status.or(status);
                }
                if e.length_name {
                    content_length(&mut length, e.length);
                }
            } else if first & 0xe0 == 0x20 {
                let (size, rest) = integer(b, 5)?;
                b = rest;
                if size > TABLE_SIZE {
                    return Err("a dynamic table size update above the size allowed");
                }
                self.max_size = size;
                self.evict(0);
            } else {
                let indexing = first & 0xc0 == 0x40;
                let (index, rest) = integer(b, if indexing { 6 } else { 4 })?;
                b = rest;
                let (name_len, status_name, length_name) = if index == 0 {
                    let (s, used) = string(&mut self.scratch, b)?;
                    b = &b[used..];
                    (s.len, s.is_status_name, s.is_length_name)
                } else {
                    let e = self.lookup(index)?;
                    (e.name_len, e.status_name, e.length_name)
                };
                let (value, used) = string(&mut self.scratch, b)?;
                b = &b[used..];
                let value_status = if status_name { value.status } else { None };
                let value_length = if length_name { value.length } else { None };
                let value_len = value.len;
                if status_name {
                    status = Some(value_status.ok_or("a :status that is not three digits")?);
                }
                if length_name {
                    content_length(&mut length, value_length);
                }
                if indexing {
                    self.insert(Entry {
                        name_len,
                        size: name_len + value_len + 32,
                        status_name,
                        status: value_status,
                        length_name,
                        length: value_length,
                    });
                }
            }
        }
        self.content_length = length;
        Ok(status)
    }

    /// The `content-length` the block decoded last carried: None without one; `u64::MAX`
    /// (which no body can match) when it is not a number or several disagree.
    pub fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// Static or dynamic entry `index` (1-based).
    fn lookup(&self, index: usize) -> Result<Entry, DecodeError> {
        match index {
            0 => Err("a header field index of 0"),
            1..=61 => {
                let name = STATIC_NAMES[index - 1];
                let status = (8..=14).contains(&index).then(|| STATIC_STATUS[index - 8]);
                Ok(Entry {
                    name_len: name.len(),
                    size: 0,
                    status_name: status.is_some(),
                    status,
                    length_name: name == "content-length",
                    length: None,
                })
            }
            _ => self
                .table
                .get(index - 62)
                .copied()
                .ok_or("a header field index beyond the table"),
        }
    }

    fn insert(&mut self, e: Entry) {
        if e.size > self.max_size {
            // An entry larger than the table empties it and is not kept.
            self.table.clear();
            self.size = 0;
            return;
        }
        self.evict(e.size);
        self.size += e.size;
        self.table.push_front(e);
    }

    /// Drops the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            match self.table.pop_back() {
                Some(old) => self.size -= old.size,
                None => break,
            }
        }
    }
}

/// What the engine needs of a string literal.
struct Facts {
    /// Its decoded length.
    len: usize,
    is_status_name: bool,
    /// Its value as a status, when it is three digits.
    status: Option<u16>,
    is_length_name: bool,
    /// Its value as a `content-length`, when it is a number.
    length: Option<u64>,
}

/// Folds one `content-length` field into what the block says so far (see
/// [`HeaderDecoder::content_length`]).
fn content_length(seen: &mut Option<u64>, value: Option<u64>) {
    let value = value.unwrap_or(u64::MAX);
    *seen = match *seen {
        Some(before) if before != value => Some(u64::MAX),
        _ => Some(value),
    };
}

/// The string literal at the start of `b` (Huffman-coded ones decoded into `scratch`): its
/// facts, and the bytes it took.
fn string(scratch: &mut Vec<u8>, b: &[u8]) -> Result<(Facts, usize), DecodeError> {
    let huffman = b.first().is_some_and(|&x| x & 0x80 != 0);
    let (len, rest) = integer(b, 7)?;
    if rest.len() < len {
        return Err("a string longer than its header block");
    }
    let used = b.len() - rest.len() + len;
    let mut raw = &rest[..len];
    if huffman {
        scratch.clear();
        httlib_huffman::decode(raw, scratch, httlib_huffman::DecoderSpeed::FourBits)
            .map_err(|_| "a Huffman-coded string that does not decode")?;
        raw = scratch;
    }
    Ok((
        Facts {
            len: raw.len(),
            is_status_name: raw == b":status",
            status: parse_status(raw),
            is_length_name: raw == b"content-length",
            length: parse_length(raw),
        },
        used,
    ))
}

/// An integer with an `n`-bit prefix at the start of `b` (RFC 7541 §5.1), and what follows.
fn integer(b: &[u8], n: u32) -> Result<(usize, &[u8]), DecodeError> {
    let max = (1usize << n) - 1;
    let (&first, mut rest) = b.split_first().ok_or("a truncated header block")?;
    let mut v = usize::from(first) & max;
    if v < max {
        return Ok((v, rest));
    }
    let mut shift = 0;
    loop {
        let (&x, r) = rest.split_first().ok_or("a truncated integer")?;
        rest = r;
        if shift > 28 {
            return Err("an integer too large");
        }
        v += usize::from(x & 0x7f) << shift;
        shift += 7;
        if x & 0x80 == 0 {
            return Ok((v, rest));
        }
    }
}

/// A `content-length` value: decimal digits (at most 19, so it fits).
fn parse_length(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// A `:status` value: three digits.
fn parse_status(v: &[u8]) -> Option<u16> {
    match v {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    /// The status an independent decoder finds in `block` (None: no `:status`).
    fn reference(d: &mut loona_hpack::Decoder<'_>, block: &[u8]) -> Option<u16> {
        let mut status = None;
        d.decode_with_cb(block, |n: Cow<[u8]>, v: Cow<[u8]>| {
            if &*n == b":status" {
                status = std::str::from_utf8(&v).ok().and_then(|s| s.parse().ok());
            }
        })
        .expect("the reference decodes it");
        status
    }

    fn literal(out: &mut Vec<u8>, s: &[u8], huffman: bool) {
        if huffman {
            let mut h = Vec::new();
            httlib_huffman::encode(s, &mut h).unwrap();
            int(out, 0x80, 7, h.len());
            out.extend_from_slice(&h);
        } else {
            int(out, 0, 7, s.len());
            out.extend_from_slice(s);
        }
    }

    fn int(out: &mut Vec<u8>, high: u8, n: u32, v: usize) {
        let max = (1usize << n) - 1;
        if v < max {
            out.push(high | v as u8);
            return;
        }
        out.push(high | max as u8);
        let mut v = v - max;
        while v >= 128 {
            out.push((v % 128) as u8 | 0x80);
            v /= 128;
        }
        out.push(v as u8);
    }

    #[test]
    fn the_static_table_matches_an_independent_decoder() {
        let mut r = loona_hpack::Decoder::new();
        for i in 1..=61usize {
            let mut names = Vec::new();
            r.decode_with_cb(&[0x80 | i as u8], |n: Cow<[u8]>, _: Cow<[u8]>| {
                names.push(n.into_owned())
            })
            .unwrap();
            assert_eq!(names[0], STATIC_NAMES[i - 1].as_bytes(), "entry {i}");
            let mine = HeaderDecoder::new().decode(&[0x80 | i as u8]).unwrap();
            assert_eq!(mine, reference(&mut r, &[0x80 | i as u8]), "entry {i}");
        }
    }

    #[test]
    fn statuses_and_the_dynamic_table_follow_an_independent_decoder() {
        // Blocks as a server writes them: Huffman and raw literals, incremental indexing of
        // :status and of long values (which evict older entries), references to the dynamic
        // table, size updates.
        let mut mine = HeaderDecoder::new();
        let mut r = loona_hpack::Decoder::new();
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let mut inserted = 0usize;
        let mut compared = 0;
        for round in 0..400 {
            let mut b = Vec::new();
            if round % 97 == 50 {
                int(&mut b, 0x20, 5, 1000 + next() % 3000);
            }
            let code = format!("{}", 100 + next() % 500);
            match next() % 4 {
                0 => b.push(0x88),
                1 => {
                    // :status by static name, indexed.
                    int(&mut b, 0x40, 6, 8);
                    literal(&mut b, code.as_bytes(), next() % 2 == 0);
                    inserted += 1;
                }
                2 if inserted > 0 => {
                    // A reference to a recent dynamic entry (it may or may not be :status).
                    let idx = 62 + next() % inserted.min(3);
                    int(&mut b, 0x80, 7, idx);
                }
                _ => {
                    int(&mut b, 0x00, 4, 0);
                    literal(&mut b, b":status", next() % 2 == 0);
                    literal(&mut b, code.as_bytes(), next() % 2 == 0);
                }
            }
            let value = "v".repeat(next() % 900);
            int(&mut b, 0x40, 6, 0);
            literal(&mut b, b"x-filler", next() % 2 == 0);
            literal(&mut b, value.as_bytes(), next() % 2 == 0);
            inserted += 1;
            int(&mut b, 0x40, 6, 33);
            literal(&mut b, b"Mon, 30 Nov 2026 10:00:00 GMT", true);
            inserted += 1;
            let want = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                reference(&mut r, &b)
            })) {
                Ok(s) => s,
                // A reference beyond the reference's table: both must refuse it.
                Err(_) => {
                    assert!(mine.decode(&b).is_err(), "round {round}");
                    break;
                }
            };
            assert_eq!(mine.decode(&b).unwrap(), want, "round {round}");
            compared += 1;
        }
        assert!(compared > 300, "only {compared} rounds compared");
    }

    #[test]
    fn broken_blocks_are_errors_not_panics() {
        let mut d = HeaderDecoder::new();
        assert!(d.decode(&[0x80]).is_err(), "index 0");
        assert!(d.decode(&[0xbe]).is_err(), "index 62 of an empty table");
        assert!(d.decode(&[0x00, 0x05, b'a']).is_err(), "a short string");
        assert!(d
            .decode(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])
            .is_err());
        assert!(
            d.decode(&[0x3f, 0xe1, 0x7f]).is_err(),
            "a size update above 4096"
        );
        assert!(
            d.decode(&[0x08, 0x02, b'2', b'x']).is_err(),
            "a :status that is no number"
        );
        assert!(
            d.decode(&[0x00, 0x81, 0xff]).is_err(),
            "a bad Huffman string"
        );
        assert_eq!(d.decode(&[0x89]).unwrap(), Some(204));
    }
}
