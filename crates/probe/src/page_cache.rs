//! Dropping the kernel's page cache, so each iteration reads its files cold and is charged for
//! them: a file cached by an earlier iteration is charged to nobody in the next one.

use std::io::ErrorKind;

/// Where the kernel takes the order to drop clean caches.
const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Writes dirty pages back (`sync`), then drops the page cache and reclaimable slab
/// (dentries, inodes). The error says why it could not be done (not root, read-only /proc/sys
/// in a container).
pub fn drop_page_cache() -> Result<(), DropCacheError> {
    nix::unistd::sync();
    std::fs::write(DROP_CACHES, "3").map_err(|e| match e.kind() {
        ErrorKind::PermissionDenied => DropCacheError::NeedsRoot,
        _ if e.raw_os_error() == Some(nix::errno::Errno::EROFS as i32) => DropCacheError::ReadOnly,
        _ => DropCacheError::Io(e),
    })
}

/// Why the page cache was not dropped: the iteration records it in a warning.
#[derive(Debug, thiserror::Error)]
pub enum DropCacheError {
    /// The write was refused for lack of privilege.
    #[error("cannot write {DROP_CACHES}: not permitted: it needs root")]
    NeedsRoot,
    /// /proc/sys is mounted read-only (typically inside a container).
    #[error(
        "cannot write {DROP_CACHES}: not permitted: /proc/sys is read-only here (a container?)"
    )]
    ReadOnly,
    /// Any other failure of the write.
    #[error("cannot write {DROP_CACHES}: {0}")]
    Io(std::io::Error),
}
