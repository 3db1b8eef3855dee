//! `--hold-mib N --hold-after PATH`: grow resident memory on cue, to test memory measurements.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

/// Memory that is allocated once, touched page by page (so it is resident, not just reserved)
/// and kept as long as the server lives.
pub(crate) struct Hold {
    mib: u64,
    after: Option<String>,
    done: AtomicBool,
    held: Mutex<Vec<u8>>,
}

impl Hold {
    pub(crate) fn new(mib: u64, after: Option<String>) -> Self {
        Hold {
            mib,
            after,
            done: AtomicBool::new(mib == 0),
            held: Mutex::new(Vec::new()),
        }
    }

    /// Allocates now unless the allocation waits for a path.
    pub(crate) fn at_start(&self) {
        if self.after.is_none() {
            self.allocate();
        }
    }

    /// Called with each request's path; allocates on the first match.
    #[inline]
    pub(crate) fn on_path(&self, path: &str) {
        if self.done.load(Relaxed) {
            return;
        }
        let path = path.split_once('?').map_or(path, |(p, _)| p);
        if self.after.as_deref() == Some(path) {
            self.allocate();
        }
    }

    fn allocate(&self) {
        if self.done.swap(true, Relaxed) {
            return;
        }
        let bytes = usize::try_from(self.mib << 20).unwrap_or(usize::MAX);
        // A non-zero fill writes every page; zeroed memory could stay unbacked.
        let memory = vec![0x5au8; bytes];
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = memory;
    }

    /// Bytes held now, for `/metrics`.
    pub(crate) fn held_bytes(&self) -> u64 {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).len() as u64
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.held.lock().unwrap().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocates_on_first_matching_path() {
        let h = Hold::new(1, Some("/json".into()));
        h.at_start();
        h.on_path("/plaintext");
        assert_eq!(h.held(), 0);
        h.on_path("/json?x");
        assert_eq!(h.held(), 1 << 20);
    }
}
