//! Logs are streamed to files, never held: the last lines of a log for error messages (bounded
//! in lines and bytes, however long the log or its lines), and a readiness scan that reads a
//! growing log in chunks while remembering only what a match across two chunks needs.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Bytes read from the end of a log for its tail.
const TAIL_BYTES: u64 = 16 * 1024;
/// Longest line shown in a tail; longer ones are cut with a note.
const LINE_BYTES: usize = 300;

/// The last `lines` lines of a file (lossy UTF-8), indented for an error message. Reads at most
/// the last 16 KiB and cuts long lines, so the excerpt stays under ~5 KiB.
pub fn tail(path: &Path, lines: usize) -> String {
    let Ok(mut f) = File::open(path) else {
        return String::from("    (no log)");
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(TAIL_BYTES);
    let mut bytes = Vec::new();
    if f.seek(SeekFrom::Start(start)).is_err()
        || f.take(TAIL_BYTES).read_to_end(&mut bytes).is_err()
    {
        return String::from("    (log unreadable)");
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut all: Vec<&str> = text.lines().collect();
    if start > 0 && all.len() > 1 {
        all.remove(0); // the first line read is a fragment
    }
    if all.is_empty() {
        return String::from("    (log is empty)");
    }
    let first = all.len().saturating_sub(lines.max(1));
    let mut out = format!(
        "    --- last {} lines of {} ---",
        all.len() - first,
        path.display()
    );
    for l in &all[first..] {
        out.push_str("\n    ");
        out.push_str(&cut(l, LINE_BYTES));
    }
    out
}

/// `text` cut to at most `max` bytes (on a character boundary), saying how much was left out.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} more bytes)", &text[..end], text.len() - end)
}

/// Where a readiness scan of a growing log has got to.
#[derive(Debug, Default)]
pub struct Scan {
    offset: u64,
    carry: Vec<u8>,
}

impl Scan {
    /// Reads what was appended since the last call (64 KiB at a time) and says whether `needle`
    /// has appeared. Memory stays bounded by the chunk plus the needle, whatever the log holds.
    pub fn finds(&mut self, log: &Path, needle: &str) -> bool {
        let needle = needle.as_bytes();
        let Ok(mut f) = File::open(log) else {
            return false;
        };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return false;
        }
        let mut chunk = vec![0u8; 64 * 1024];
        // A log growing faster than it is read must not keep the caller from its deadline.
        for _ in 0..1024 {
            let n = match f.read(&mut chunk) {
                Ok(0) | Err(_) => return false,
                Ok(n) => n,
            };
            self.offset += n as u64;
            self.carry.extend_from_slice(&chunk[..n]);
            if needle.is_empty() || self.carry.windows(needle.len()).any(|w| w == needle) {
                return true;
            }
            let keep = needle.len().saturating_sub(1).min(self.carry.len());
            self.carry.drain(..self.carry.len() - keep);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("rigor-logtail-{name}-{}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn a_tail_is_bounded_however_long_the_line() {
        let p = log("long", &vec![b'x'; 5_000_000]);
        let t = tail(&p, 15);
        assert!(t.len() < 1024, "{} bytes", t.len());
        assert!(t.contains("more bytes"), "{t}");
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn a_tail_keeps_the_last_lines() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let p = log("lines", text.as_bytes());
        let t = tail(&p, 3);
        assert!(t.contains("line 97") && t.contains("line 99") && !t.contains("line 96"));
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn a_scan_finds_a_needle_across_reads_and_chunks() {
        let mut bytes = vec![b'.'; 64 * 1024 - 3];
        bytes.extend_from_slice(b"listening");
        let p = log("scan", &bytes[..64 * 1024 - 3 + 4]);
        let mut scan = Scan::default();
        assert!(!scan.finds(&p, "listening"));
        std::fs::write(&p, &bytes).unwrap();
        assert!(scan.finds(&p, "listening"));
        assert!(scan.carry.len() <= 64 * 1024 + 16);
        let _ = std::fs::remove_file(p);
    }
}
