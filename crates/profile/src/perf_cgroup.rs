//! A cgroup `perf record -G` can filter on: everything that runs in it is sampled, threads
//! and children started after the recording began included (`-p` sees only the threads that
//! existed when it attached). perf looks the name up under the `perf_event` v1 hierarchy when
//! one is mounted, else under cgroup v2, where the perf_event controller is always on.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A cgroup perf can sample by name: one rigor made for the purpose (removed by
/// [`PerfCgroup::remove`]) or the application's own cgroup v2 (left alone).
#[derive(Debug)]
pub struct PerfCgroup {
    dir: PathBuf,
    name: String,
    owned: bool,
}

/// A cgroup mount: where it is, and its type and options.
struct Mount {
    point: PathBuf,
    fstype: String,
    options: String,
}

impl PerfCgroup {
    /// The application's own cgroup directory, when perf can filter on it: it lies in the
    /// hierarchy perf searches (a v2 one with no v1 `perf_event` mounted, or the v1
    /// `perf_event` one).
    pub fn existing(dir: &Path) -> Option<PerfCgroup> {
        let mount = perf_mount()?;
        let name = dir.strip_prefix(&mount.point).ok()?;
        Some(PerfCgroup {
            dir: dir.to_path_buf(),
            name: name.to_string_lossy().into_owned(),
            owned: false,
        })
    }

    /// Makes `name` in the hierarchy perf searches, under the cgroup this process runs in
    /// there; the error says why it could not.
    pub fn create(name: &str) -> Result<PerfCgroup, String> {
        let mount =
            perf_mount().ok_or("neither a perf_event nor a v2 cgroup hierarchy is mounted")?;
        let own = own_path(&mount).ok_or_else(|| {
            format!(
                "this process's cgroup in {} is not in /proc/self/cgroup",
                mount.point.display()
            )
        })?;
        let parent = mount.point.join(own.trim_start_matches('/'));
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let rel = dir
            .strip_prefix(&mount.point)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(PerfCgroup {
            dir,
            name: rel,
            owned: true,
        })
    }

    /// The name `perf record -G` takes: the path under the hierarchy's mount.
    pub fn perf_name(&self) -> &str {
        &self.name
    }

    /// Where it is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves `pid` (all its threads) into the cgroup.
    pub fn add(&self, pid: i32) -> io::Result<()> {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string())
    }

    /// Removes a cgroup rigor made once its processes are gone (waiting a moment for the
    /// kernel to let go of exited ones); the application's own is left to its owner.
    pub fn remove(self) -> io::Result<()> {
        if !self.owned {
            return Ok(());
        }
        let mut last = None;
        for _ in 0..50 {
            match std::fs::remove_dir(&self.dir) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(last.unwrap_or_else(|| io::Error::other("cgroup still busy")))
    }
}

/// The hierarchy `perf -G` resolves names in: v1 `perf_event`, else v2.
fn perf_mount() -> Option<Mount> {
    let mounts = mounts();
    let v1 = mounts
        .iter()
        .position(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == "perf_event"));
    let v2 = mounts.iter().position(|m| m.fstype == "cgroup2");
    let at = v1.or(v2)?;
    mounts.into_iter().nth(at)
}

/// This process's cgroup path in `mount`'s hierarchy, from /proc/self/cgroup.
fn own_path(mount: &Mount) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let wanted = match mount.fstype.as_str() {
            "cgroup2" => id == "0" && controllers.is_empty(),
            _ => controllers.split(',').any(|c| c == "perf_event"),
        };
        wanted.then(|| path.to_string())
    })
}

/// The cgroup mounts of /proc/self/mounts.
fn mounts() -> Vec<Mount> {
    let text = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            let (point, fstype, options) = (f.get(1)?, f.get(2)?, f.get(3)?);
            (fstype.starts_with("cgroup")).then(|| Mount {
                point: PathBuf::from(point.replace("\\040", " ")),
                fstype: fstype.to_string(),
                options: options.to_string(),
            })
        })
        .collect()
}
