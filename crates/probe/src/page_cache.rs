//! Dropping the kernel's page cache, so each iteration reads its files cold and is charged for
//! them: a file cached by an earlier iteration is charged to nobody in the next one.

use std::io::ErrorKind;

/// Where the kernel takes the order to drop clean caches.
const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Writes dirty pages back (`sync`), then drops the page cache and reclaimable slab
/// (dentries, inodes). The error says why it could not be done (not root, read-only /proc/sys
/// in a container).
pub fn drop_page_cache() -> Result<(), String> {
    nix::unistd::sync();
    std::fs::write(DROP_CACHES, "3").map_err(|e| {
        let why = match e.kind() {
            ErrorKind::PermissionDenied => "not permitted: it needs root".to_string(),
            _ if e.raw_os_error() == Some(nix::errno::Errno::EROFS as i32) => {
                "not permitted: /proc/sys is read-only here (a container?)".to_string()
            }
            _ => e.to_string(),
        };
        format!("cannot write {DROP_CACHES}: {why}")
    })
}
