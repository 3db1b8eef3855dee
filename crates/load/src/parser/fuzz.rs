//! The fuzz target's invariants, shared by `fuzz/` and the in-tree random test.

use super::ResponseParser;

/// Fuzzing entry point (used by `fuzz/` and by the in-tree random test): parses `data` split at
/// a cut chosen by its first bytes and panics if an invariant breaks. Never panics on bad input.
#[doc(hidden)]
pub fn fuzz_check(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let cut = if rest.is_empty() {
        0
    } else {
        usize::from(flags >> 1) * rest.len() / 128
    };
    let mut p = ResponseParser::new(flags & 1 == 1);
    let mut total = 0u64;
    let mut body = 0u64;
    let mut pos = 0usize;
    'pieces: for piece in [&rest[..cut], &rest[cut..]] {
        let mut off = 0;
        while off < piece.len() {
            let before = body;
            match p.feed(&piece[off..], &mut |b: &[u8]| body += b.len() as u64) {
                Ok((used, resp)) => {
                    assert!(used <= piece.len() - off, "consumed more than given");
                    assert!(used > 0 || resp.is_some(), "no progress");
                    assert!(body - before <= used as u64, "body larger than input");
                    off += used;
                    pos += used;
                    if let Some(r) = resp {
                        assert!((100..1000).contains(&r.status), "status {}", r.status);
                        total += r.bytes;
                        assert!(total <= pos as u64, "responses larger than input");
                    }
                }
                Err(_) => break 'pieces,
            }
        }
    }
    if let Some(r) = p.eof() {
        total += r.bytes;
        assert!(total <= pos as u64);
    }
}
