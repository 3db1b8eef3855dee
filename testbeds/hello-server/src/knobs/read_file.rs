//! `--read-file PATH --read-file-mib N`: charge cold page cache to this process's cgroup.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;

/// Makes sure `path` holds at least `mib` MiB (writing and syncing it if not), drops it from the
/// page cache, then reads it all, so the cache it fills is charged to this process's cgroup.
/// Returns how long the read took. Lets tests check that rigor splits cgroup memory into
/// anonymous memory and page cache.
pub fn read_cold(path: &Path, mib: u64) -> io::Result<Duration> {
    let want = mib * MIB as u64;
    let have = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if have < want {
        let mut f = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let block: Vec<u8> = (0..MIB).map(|i| (i % 251) as u8 + 1).collect();
        for _ in 0..mib {
            f.write_all(&block)?;
        }
        f.sync_data()?;
    }
    let mut f = File::open(path)?;
    // SAFETY: plain syscall on a file descriptor we own.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    let started = Instant::now();
    let mut buf = vec![0u8; MIB];
    while f.read(&mut buf)? > 0 {}
    Ok(started.elapsed())
}

#[cfg(test)]
mod tests {
    #[test]
    fn creates_and_reads() {
        let path = std::env::temp_dir().join(format!("hello-server-read-{}", std::process::id()));
        super::read_cold(&path, 2).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 << 20);
        std::fs::remove_file(&path).unwrap();
    }
}
