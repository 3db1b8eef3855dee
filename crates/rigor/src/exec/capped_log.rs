//! A child's output piped through rigor into a log file that stops growing at [`LOG_LIMIT`]:
//! past it (or once the disk refused a write) the output is still read, so the child never
//! blocks on a full pipe, and discarded; what was kept, dropped and refused is reported.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The most of one output stream written to its log: a program printing without end must not
/// fill the disk.
pub const LOG_LIMIT: u64 = 64 * 1024 * 1024;

/// Bytes read from the pipe at a time: large, so a fast writer costs few system calls.
const CHUNK: usize = 256 * 1024;

/// What became of one output stream once it ended.
#[derive(Debug, Clone, Default)]
pub struct Drained {
    /// The log it went to.
    pub path: PathBuf,
    /// Bytes written to the log.
    pub written: u64,
    /// Bytes read but not written: past the limit, or after a write failed.
    pub dropped: u64,
    /// The write that failed (a full disk), and after how many bytes.
    pub write_error: Option<String>,
    /// The stream had not ended when it was last looked at (a process still holds it open).
    pub unfinished: bool,
}

impl Drained {
    /// Every byte the child printed on this stream.
    pub fn printed(&self) -> u64 {
        self.written + self.dropped
    }

    /// One line saying what the log is missing and why; `None` when it is whole.
    pub fn describe(&self, stream: &str) -> Option<String> {
        if let Some(e) = &self.write_error {
            return Some(format!(
                "the command's {stream} could not be written to {}: {e}; {} more bytes it \
                 printed were read and discarded",
                self.path.display(),
                self.dropped
            ));
        }
        (self.dropped > 0).then(|| {
            format!(
                "the command printed {:.0} MiB on {stream}: {} kept the first {} MiB and \
                 discarded the other {:.1} MiB",
                self.printed() as f64 / 1048576.0,
                self.path.display(),
                LOG_LIMIT / 1048576,
                self.dropped as f64 / 1048576.0
            )
        })
    }
}

/// A stream being copied to its log by a thread of its own.
pub struct Drain {
    done: mpsc::Receiver<Drained>,
    path: PathBuf,
    _thread: JoinHandle<()>,
}

impl Drain {
    /// Starts copying `from` into `to` (the file at `path`), keeping at most `limit` bytes.
    pub fn start(
        from: impl Read + Send + 'static,
        to: File,
        path: &Path,
        limit: u64,
    ) -> std::io::Result<Drain> {
        let (tx, rx) = mpsc::channel();
        let p = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("rigor-log".into())
            .spawn(move || {
                let _ = tx.send(copy(from, to, p, limit));
            })?;
        Ok(Drain {
            done: rx,
            path: path.to_path_buf(),
            _thread: thread,
        })
    }

    /// What the stream came to once it ended (every process holding it gone), waiting at most
    /// `patience`; a stream still open then is left to its thread and said `unfinished`.
    pub fn finish(self, patience: Duration) -> Drained {
        self.done.recv_timeout(patience).unwrap_or(Drained {
            path: self.path,
            unfinished: true,
            ..Drained::default()
        })
    }
}

/// A child's stdout and stderr, each copied to its own capped log.
pub struct Piped {
    stdout: Drain,
    stderr: Drain,
}

impl Piped {
    /// Takes the child's piped stdout and stderr and starts copying them to `out` (at
    /// `out_path`) and `err` (at `err_path`).
    pub fn start(
        child: &mut std::process::Child,
        (out, out_path): (File, &Path),
        (err, err_path): (File, &Path),
    ) -> anyhow::Result<Piped> {
        let (Some(o), Some(e)) = (child.stdout.take(), child.stderr.take()) else {
            anyhow::bail!("the command's output was not piped");
        };
        let fail =
            |e: std::io::Error| anyhow::anyhow!("cannot start a thread to read the output: {e}");
        Ok(Piped {
            stdout: Drain::start(o, out, out_path, LOG_LIMIT).map_err(fail)?,
            stderr: Drain::start(e, err, err_path, LOG_LIMIT).map_err(fail)?,
        })
    }

    /// What each stream came to, stdout first; see [`Drain::finish`].
    pub fn finish(self, patience: Duration) -> (Drained, Drained) {
        let out = self.stdout.finish(patience);
        (out, self.stderr.finish(patience))
    }
}

/// Copies until the stream ends: the first `limit` bytes to `to`, the rest read and counted.
/// A cut log ends with a line saying so.
fn copy(mut from: impl Read, mut to: File, path: PathBuf, limit: u64) -> Drained {
    let mut out = Drained {
        path,
        ..Drained::default()
    };
    let mut buf = vec![0u8; CHUNK];
    let mut last = b'\n';
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let room = if out.write_error.is_some() {
            0
        } else {
            limit.saturating_sub(out.written).min(n as u64) as usize
        };
        if room > 0 {
            match to.write_all(&buf[..room]) {
                Ok(()) => {
                    out.written += room as u64;
                    last = buf[room - 1];
                }
                Err(e) => {
                    out.write_error = Some(format!("{e} (after {} bytes)", out.written));
                    out.dropped += room as u64;
                }
            }
        }
        out.dropped += (n - room) as u64;
    }
    if out.dropped > 0 && out.write_error.is_none() {
        let sep = if last == b'\n' { "" } else { "\n" };
        let _ = writeln!(
            to,
            "{sep}[rigor: output cut at {} MiB: {} more bytes were read and discarded]",
            limit / 1048576,
            out.dropped
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("rigor-capped-{name}-{}", std::process::id()))
    }

    #[test]
    fn a_stream_past_the_limit_is_read_to_its_end_and_cut_with_a_note() {
        let path = temp("cut");
        let file = File::create(&path).unwrap();
        let printed = 3 * 1024 * 1024 + 17;
        let source = std::io::repeat(b'y').take(printed);
        let got = Drain::start(source, file, &path, 1024 * 1024)
            .unwrap()
            .finish(Duration::from_secs(60));
        assert_eq!(got.written, 1024 * 1024);
        assert_eq!(got.printed(), printed);
        assert!(got.write_error.is_none(), "{got:?}");
        let kept = std::fs::read(&path).unwrap();
        let note = format!("\n[rigor: output cut at 1 MiB: {} more bytes", got.dropped);
        assert!(kept.starts_with(&vec![b'y'; 1024 * 1024]));
        assert_eq!(
            &kept[1024 * 1024..1024 * 1024 + note.len()],
            note.as_bytes()
        );
        assert!(got.describe("stdout").unwrap().contains("kept the first"));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_stream_under_the_limit_is_kept_whole_without_a_note() {
        let path = temp("whole");
        let file = File::create(&path).unwrap();
        let text = b"##rigor cmd.x 1\nno newline at the end";
        let got = Drain::start(&text[..], file, &path, 1024)
            .unwrap()
            .finish(Duration::from_secs(60));
        assert!(
            got.dropped == 0 && got.describe("stdout").is_none(),
            "{got:?}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), text);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_full_disk_is_reported_as_such_and_the_stream_still_drained() {
        // /dev/full refuses every write with ENOSPC, as a full file system does.
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let path = PathBuf::from("/dev/full");
        let got = Drain::start(std::io::repeat(b'x').take(1_000_000), full, &path, 1 << 30)
            .unwrap()
            .finish(Duration::from_secs(60));
        assert_eq!(got.written, 0);
        assert_eq!(got.printed(), 1_000_000, "the stream was read to its end");
        let said = got.describe("stderr").unwrap();
        assert!(
            said.contains("could not be written") && said.contains("No space left"),
            "{said}"
        );
    }

    #[test]
    fn a_stream_held_open_is_left_unfinished_after_the_patience() {
        let (reader, _writer) = std::os::unix::net::UnixStream::pair().unwrap();
        let path = temp("open");
        let file = File::create(&path).unwrap();
        let got = Drain::start(reader, file, &path, 1024)
            .unwrap()
            .finish(Duration::from_millis(50));
        assert!(got.unfinished);
        let _ = std::fs::remove_file(path);
    }
}
