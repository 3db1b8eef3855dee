//! The HTTP token character set (RFC 9110 §5.6.2): header names here, and methods and header
//! names wherever rigor checks a request before sending it, so both sides agree on one set.

const fn token_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    t
}

static TOKEN: [bool; 256] = token_table();

/// True for a byte allowed in an HTTP token; a table lookup, as the parser calls it per byte of
/// every header name.
#[inline]
pub fn is_token(b: u8) -> bool {
    TOKEN[b as usize]
}

/// True for a whole HTTP token (not empty, token bytes only), such as a method or header name.
pub fn is_token_text(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(is_token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_bytes_are_the_rfc_set() {
        let rfc: Vec<u8> = (0..=255u8)
            .filter(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b))
            .collect();
        let ours: Vec<u8> = (0..=255u8).filter(|&b| is_token(b)).collect();
        assert_eq!(ours, rfc);
        assert!(is_token_text("GET") && is_token_text("X-Request-Id"));
        assert!(!is_token_text("") && !is_token_text("GE T") && !is_token_text("X:1"));
    }
}
