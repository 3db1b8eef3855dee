//! Work done inside a container's network namespace: a thread that entered it runs the work,
//! and every thread it starts (the load engine's workers) is born there too, so the load
//! reaches the service directly, with no published port or proxy in between.

use nix::sched::{setns, CloneFlags};

/// The network namespace of process `pid`, to enter.
pub fn of_process(pid: i32) -> anyhow::Result<std::fs::File> {
    let path = format!("/proc/{pid}/ns/net");
    std::fs::File::open(&path)
        .map_err(|e| anyhow::anyhow!("cannot open {path} (the container's network namespace): {e}"))
}

/// Moves the calling thread into the network namespace `ns`.
pub fn enter(ns: &std::fs::File) -> anyhow::Result<()> {
    setns(ns, CloneFlags::CLONE_NEWNET)
        .map_err(|e| anyhow::anyhow!("cannot enter the container's network namespace: {e}"))
}

/// Runs `work` in a thread inside the network namespace of process `pid`.
pub fn inside<T: Send>(pid: i32, work: impl FnOnce() -> T + Send) -> anyhow::Result<T> {
    let ns = of_process(pid)?;
    std::thread::scope(|s| {
        let thread = std::thread::Builder::new()
            .name("in-container".into())
            .spawn_scoped(s, move || {
                enter(&ns)?;
                Ok(work())
            })
            .map_err(|e| {
                anyhow::anyhow!("cannot start a thread for the container's network: {e}")
            })?;
        thread
            .join()
            .map_err(|_| anyhow::anyhow!("the thread in the container's network panicked"))?
    })
}
